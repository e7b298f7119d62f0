package application

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/pixgate/pixgate/domain"
	"github.com/pixgate/pixgate/ports"
)

// The sandbox acquirer plays Banco Central's and the banks' part for a merchant who tries
// pixgate out: the merchant pays its own charges, opens, accepts and rejects MED disputes and
// makes refunds fail, and refunds complete by themselves a moment later. Every step goes
// through the same domain transitions, storage and events as a real acquirer's notification,
// so what a merchant sees in the sandbox is what production does.

// Fixed parties of the sandbox: the payer of a payment made without one, and the documents of
// the gateway's receiving account.
const (
	SandboxPayerCPF    = "98765432100"
	SandboxReceiverDoc = "99999999000191" // a CNPJ whose root is the sandbox ISPB
	sandboxRefundError = "the acquirer could not refund the payment (sandbox)"
)

// SandboxPayer is the payer of a sandbox payment made without one.
func SandboxPayer() domain.AccountHolder {
	doc := domain.MustParseDocument(SandboxPayerCPF)
	return domain.AccountHolder{
		Type: domain.HolderPF, Name: "Pagador Sandbox", Document: doc,
		BankAccount: domain.BankAccount{Type: "TRAN", Digit: "0", ISPB: domain.SandboxISPB},
		Pix:         domain.PixKey{Type: domain.PixKeyCPF, Key: doc.Value()},
	}
}

// SandboxReceiver is the gateway's receiving account in the sandbox: the configured PIX key
// and merchant name, held at the sandbox ISPB under a fixed CNPJ.
func SandboxReceiver(pixKey, merchantName string) (domain.AccountHolder, error) {
	key, err := domain.ParsePixKey(pixKey)
	if err != nil {
		return domain.AccountHolder{}, err
	}
	return domain.AccountHolder{
		Type: domain.HolderPJ, Name: merchantName, Document: domain.MustParseDocument(SandboxReceiverDoc),
		BankAccount: domain.BankAccount{Type: "CACC", Digit: "1", ISPB: domain.SandboxISPB},
		Pix:         key,
	}, nil
}

// PaySandboxTransaction pays a charge as if a bank customer had scanned its QR code:
// PIX_QRCODE_GENERATED → PAID with the full amount, a real-format endToEnd, the payer (the fixed
// sandbox payer when none is given), the gateway's receiving account and the configured fee.
type PaySandboxTransaction struct {
	repo     ports.TransactionRepository
	clock    ports.Clock
	fee      domain.FeePolicy
	receiver domain.AccountHolder
}

// NewPaySandboxTransaction builds the use case.
func NewPaySandboxTransaction(repo ports.TransactionRepository, clock ports.Clock, fee domain.FeePolicy, receiver domain.AccountHolder) *PaySandboxTransaction {
	requirePorts("NewPaySandboxTransaction", repo, clock)
	return &PaySandboxTransaction{repo: repo, clock: clock, fee: fee, receiver: receiver}
}

// Execute pays the caller's transaction id; payer may be nil. Any status but
// PIX_QRCODE_GENERATED answers a domain.InvalidTransitionError.
func (uc *PaySandboxTransaction) Execute(ctx context.Context, p domain.Principal, id string, payer *domain.AccountHolder) (*domain.Transaction, error) {
	from := SandboxPayer()
	if payer != nil {
		from = *payer
	}
	return uc.repo.Update(ctx, p.AccountID, id, func(t *domain.Transaction) error {
		now := uc.clock.Now()
		payer, receiver := from, uc.receiver
		return t.Pay(domain.Payment{
			AmountPaid: t.Amount(), PaidAt: now, EndToEnd: domain.NewEndToEndID('E', domain.SandboxISPB, now),
			Payer: &payer, Receiver: &receiver, Fee: uc.fee.For(t.Amount()),
		}, now)
	})
}

// sandboxStep applies one trigger of the state table to a transaction of the caller's account.
type sandboxStep struct {
	repo    ports.TransactionRepository
	clock   ports.Clock
	trigger func(t *domain.Transaction, now time.Time) error
}

func (s sandboxStep) execute(ctx context.Context, p domain.Principal, id string) (*domain.Transaction, error) {
	return s.repo.Update(ctx, p.AccountID, id, func(t *domain.Transaction) error {
		return s.trigger(t, s.clock.Now())
	})
}

func newSandboxStep(name string, repo ports.TransactionRepository, clock ports.Clock, trigger func(*domain.Transaction, time.Time) error) sandboxStep {
	requirePorts(name, repo, clock)
	return sandboxStep{repo: repo, clock: clock, trigger: trigger}
}

// OpenSandboxDispute opens a MED dispute on a paid transaction, as a payer's bank would:
// PAID → BLOCKED, infractionDate set.
type OpenSandboxDispute struct{ step sandboxStep }

// NewOpenSandboxDispute builds the use case.
func NewOpenSandboxDispute(repo ports.TransactionRepository, clock ports.Clock) *OpenSandboxDispute {
	return &OpenSandboxDispute{newSandboxStep("NewOpenSandboxDispute", repo, clock, (*domain.Transaction).OpenDispute)}
}

// Execute opens the dispute; any status but PAID answers a domain.InvalidTransitionError.
func (uc *OpenSandboxDispute) Execute(ctx context.Context, p domain.Principal, id string) (*domain.Transaction, error) {
	return uc.step.execute(ctx, p, id)
}

// AcceptSandboxDispute decides a MED dispute for the payer: BLOCKED → PROCESSING_INFRACTION.
// SettleSandbox completes the MED refund (INFRACTION) after the settle delay.
type AcceptSandboxDispute struct{ step sandboxStep }

// NewAcceptSandboxDispute builds the use case.
func NewAcceptSandboxDispute(repo ports.TransactionRepository, clock ports.Clock) *AcceptSandboxDispute {
	return &AcceptSandboxDispute{newSandboxStep("NewAcceptSandboxDispute", repo, clock, (*domain.Transaction).AcceptDispute)}
}

// Execute accepts the dispute; any status but BLOCKED answers a domain.InvalidTransitionError.
func (uc *AcceptSandboxDispute) Execute(ctx context.Context, p domain.Principal, id string) (*domain.Transaction, error) {
	return uc.step.execute(ctx, p, id)
}

// RejectSandboxDispute decides a MED dispute for the merchant and releases the funds:
// BLOCKED → PAID.
type RejectSandboxDispute struct{ step sandboxStep }

// NewRejectSandboxDispute builds the use case.
func NewRejectSandboxDispute(repo ports.TransactionRepository, clock ports.Clock) *RejectSandboxDispute {
	return &RejectSandboxDispute{newSandboxStep("NewRejectSandboxDispute", repo, clock, (*domain.Transaction).RejectDispute)}
}

// Execute rejects the dispute; any status but BLOCKED answers a domain.InvalidTransitionError.
func (uc *RejectSandboxDispute) Execute(ctx context.Context, p domain.Principal, id string) (*domain.Transaction, error) {
	return uc.step.execute(ctx, p, id)
}

// FailSandboxRefund makes the refund in progress fail, as an acquirer that could not return the
// money would: PROCESSING_REFUND → PAID with an errorMessage, the refund FAILED and its amount
// back in the available balance.
type FailSandboxRefund struct{ step sandboxStep }

// NewFailSandboxRefund builds the use case.
func NewFailSandboxRefund(repo ports.TransactionRepository, clock ports.Clock) *FailSandboxRefund {
	return &FailSandboxRefund{newSandboxStep("NewFailSandboxRefund", repo, clock, func(t *domain.Transaction, now time.Time) error {
		r, ok := t.RefundInProgress()
		if !ok {
			return &domain.InvalidTransitionError{Resource: string(domain.ResourceTransaction), From: string(t.Status()), To: string(domain.TxPaid)}
		}
		return t.FailRefund(r.ID, sandboxRefundError, now)
	})}
}

// Execute fails the refund; any status but PROCESSING_REFUND answers a
// domain.InvalidTransitionError.
func (uc *FailSandboxRefund) Execute(ctx context.Context, p domain.Principal, id string) (*domain.Transaction, error) {
	return uc.step.execute(ctx, p, id)
}

// SettleSandbox is the sandbox acquirer's back office, run every few hundred milliseconds: a
// refund in progress (PROCESSING_REFUND) or an accepted MED dispute (PROCESSING_INFRACTION)
// whose last change is at least the settle delay old completes, REFUNDED or INFRACTION, with an
// endToEndRefund in Banco Central's format ('D', the sandbox ISPB, the minute, 11 random
// characters).
//
// It touches the sandbox acquirer's transactions only. Several instances may run it against
// one store: each move is a version-checked update that re-checks the status and the delay on
// the stored transaction, so there is one transition and one event, whoever wins.
type SettleSandbox struct {
	repo     ports.TransactionRepository
	clock    ports.Clock
	acquirer string
	delay    time.Duration
	batch    int
}

// NewSettleSandbox builds the job for the transactions of acquirer (the sandbox emitter's
// name) with the settle delay.
func NewSettleSandbox(repo ports.TransactionRepository, clock ports.Clock, acquirer string, delay time.Duration) *SettleSandbox {
	requirePorts("NewSettleSandbox", repo, clock)
	if acquirer == "" || delay < 0 {
		panic("application.NewSettleSandbox: an acquirer and a delay of at least 0 are required")
	}
	return &SettleSandbox{repo: repo, clock: clock, acquirer: acquirer, delay: delay, batch: 500}
}

// errNotDue leaves a transaction that changed since it was listed.
var errNotDue = errors.New("not due yet")

// RunOnce completes what is due now and tells how many transactions it moved.
func (uc *SettleSandbox) RunOnce(ctx context.Context) (int, error) {
	moved := 0
	for _, status := range []domain.TransactionStatus{domain.TxProcessingRefund, domain.TxProcessingInfraction} {
		due, err := uc.repo.ListByStatus(ctx, status, uc.clock.Now().Add(-uc.delay), uc.batch)
		if err != nil {
			return moved, err
		}
		for _, t := range due {
			if t.Acquirer() != uc.acquirer {
				continue
			}
			_, err := uc.repo.Update(ctx, t.AccountID(), t.ID(), func(t *domain.Transaction) error {
				return uc.settle(t, status)
			})
			switch {
			case err == nil:
				moved++
			case errors.Is(err, domain.ErrInvalidTransition), errors.Is(err, errNotDue):
				// Settled by another instance, or steered (refund/fail) meanwhile.
			default:
				return moved, err
			}
		}
	}
	return moved, nil
}

func (uc *SettleSandbox) settle(t *domain.Transaction, listed domain.TransactionStatus) error {
	now := uc.clock.Now()
	if t.Status() == listed && t.UpdatedAt().After(now.Add(-uc.delay)) {
		// It left the status and came back (a failed refund asked again) after the listing.
		return fmt.Errorf("transaction %s: %w", t.ID(), errNotDue)
	}
	e2e := domain.NewEndToEndID('D', domain.SandboxISPB, now)
	if listed == domain.TxProcessingInfraction {
		return t.CompleteInfraction(e2e, now)
	}
	r, ok := t.RefundInProgress()
	if !ok {
		return &domain.InvalidTransitionError{Resource: string(domain.ResourceTransaction), From: string(t.Status()), To: string(domain.TxRefunded)}
	}
	return t.ConfirmRefund(r.ID, e2e, now)
}
