package application

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/pixgate/pixgate/domain"
	"github.com/pixgate/pixgate/ports"
)

// WithdrawalSettings say how withdrawals are paid out.
type WithdrawalSettings struct {
	// Acquirer names who pays the withdrawals out (the sandbox: "SANDBOX").
	Acquirer string
	// Fee is charged on every withdrawal, on top of its amount.
	Fee domain.Cents
	// Payer is the gateway's account that pays the withdrawals.
	Payer domain.AccountHolder
	// Receiver resolves a PIX key to the account that owns it (the PIX directory);
	// SandboxPixDirectory is the sandbox's.
	Receiver func(context.Context, domain.PixKey) (domain.AccountHolder, error)
	// StartAtOnce hands the payout to the acquirer within the creating request, so that the
	// withdrawal is stored PROCESSING already, as the sandbox does. Without it a withdrawal is
	// stored PENDING, and may be canceled, until an acquirer picks it up.
	StartAtOnce bool
}

// CreateWithdrawalInput is a validated withdrawal request.
type CreateWithdrawalInput struct {
	Amount       domain.Cents
	PixKey       domain.PixKey
	ExternalCode string
	WebhookURL   string
	// IdempotencyKey is the merchant's key, empty when none was sent.
	IdempotencyKey string
	// Fingerprint identifies the request's content, so that a reused key can be told from a
	// retry.
	Fingerprint string
}

// CreatedWithdrawal is the outcome of a withdrawal request: the withdrawal, and whether it is
// the replay of an earlier request with the same idempotency key.
type CreatedWithdrawal struct {
	Withdrawal *domain.Withdrawal
	Replayed   bool
}

// CreateWithdrawal pays part of a merchant's balance out to a PIX key: the key's owner is
// looked up, the withdrawal starts PENDING (and, in the sandbox, PROCESSING at once) with the
// configured fee, and it is stored only when the account's available balance covers its amount
// and fee; otherwise the request fails with domain.ErrInsufficientBalance. The store serialises
// the reservations of one account, so concurrent withdrawals never spend the same money twice.
//
// Idempotency is CreateTransaction's: the same key with the same request answers the stored
// withdrawal (Replayed); with another request, ErrIdempotencyKeyReused; concurrent requests with
// one key race on the store's unique key, and the losers read the winner's withdrawal.
type CreateWithdrawal struct {
	repo     ports.WithdrawalRepository
	ids      ports.IDGenerator
	clock    ports.Clock
	settings WithdrawalSettings
}

// NewCreateWithdrawal builds the use case; every port is required, and so are the settings'
// acquirer and receiver look-up.
func NewCreateWithdrawal(repo ports.WithdrawalRepository, ids ports.IDGenerator, clock ports.Clock, s WithdrawalSettings) *CreateWithdrawal {
	requirePorts("NewCreateWithdrawal", repo, ids, clock)
	if s.Acquirer == "" || s.Receiver == nil || s.Fee < 0 {
		panic("application.NewCreateWithdrawal: the settings need an acquirer, a receiver look-up and a fee of at least 0")
	}
	return &CreateWithdrawal{repo: repo, ids: ids, clock: clock, settings: s}
}

// Execute creates the withdrawal for the caller's account.
func (uc *CreateWithdrawal) Execute(ctx context.Context, p domain.Principal, in CreateWithdrawalInput) (CreatedWithdrawal, error) {
	if in.IdempotencyKey != "" {
		if prior, err := uc.replay(ctx, p.AccountID, in); !errors.Is(err, domain.ErrNotFound) {
			return prior, err
		}
	}

	receiver, err := uc.settings.Receiver(ctx, in.PixKey)
	if err != nil {
		return CreatedWithdrawal{}, fmt.Errorf("resolving the PIX key: %w", err)
	}
	payer := uc.settings.Payer
	payout := domain.Payout{
		Amount: in.Amount, Fee: uc.settings.Fee, PixKey: in.PixKey,
		ExternalCode: in.ExternalCode, WebhookURL: in.WebhookURL, Payer: &payer, Receiver: &receiver,
	}
	now := uc.clock.Now()
	idem := domain.Idempotency{Key: in.IdempotencyKey, Fingerprint: in.Fingerprint}
	w, err := domain.NewWithdrawal(uc.ids.NewID(), p.AccountID, uc.settings.Acquirer, payout, idem, now)
	if err != nil {
		return CreatedWithdrawal{}, err
	}
	if uc.settings.StartAtOnce {
		// The same instant as the creation: the replay of the 201 body relies on it (the
		// entries dated at the creation are the ones the first answer showed).
		if err := w.StartProcessing(now); err != nil {
			return CreatedWithdrawal{}, err
		}
	}

	err = uc.repo.Create(ctx, w)
	if err != nil && in.IdempotencyKey != "" &&
		(errors.Is(err, ports.ErrDuplicate) || errors.Is(err, domain.ErrInsufficientBalance)) {
		// Another request with the same key won the race (and may have spent the balance this
		// one was checked against); answer with its withdrawal.
		if prior, rerr := uc.replay(ctx, p.AccountID, in); !errors.Is(rerr, domain.ErrNotFound) {
			return prior, rerr
		}
	}
	if err != nil {
		return CreatedWithdrawal{}, err
	}
	return CreatedWithdrawal{Withdrawal: w}, nil
}

func (uc *CreateWithdrawal) replay(ctx context.Context, accountID string, in CreateWithdrawalInput) (CreatedWithdrawal, error) {
	prior, err := uc.repo.GetByIdempotencyKey(ctx, accountID, in.IdempotencyKey)
	if err != nil {
		return CreatedWithdrawal{}, err
	}
	if prior.Idempotency().Fingerprint != in.Fingerprint {
		return CreatedWithdrawal{}, ErrIdempotencyKeyReused
	}
	return CreatedWithdrawal{Withdrawal: prior, Replayed: true}, nil
}

// GetWithdrawal fetches one withdrawal of the caller's account.
type GetWithdrawal struct{ repo ports.WithdrawalRepository }

// NewGetWithdrawal builds the use case.
func NewGetWithdrawal(repo ports.WithdrawalRepository) *GetWithdrawal {
	requirePorts("NewGetWithdrawal", repo)
	return &GetWithdrawal{repo: repo}
}

// Execute returns the withdrawal, or domain.ErrNotFound (also for another account's id).
func (uc *GetWithdrawal) Execute(ctx context.Context, p domain.Principal, id string) (*domain.Withdrawal, error) {
	return uc.repo.Get(ctx, p.AccountID, id)
}

// GetBalance tells what the caller's account holds: available and blocked cents as its ledger
// keeps them, and the pending amount of its charges awaiting payment.
type GetBalance struct{ ledger ports.Ledger }

// NewGetBalance builds the use case.
func NewGetBalance(ledger ports.Ledger) *GetBalance {
	requirePorts("NewGetBalance", ledger)
	return &GetBalance{ledger: ledger}
}

// Execute returns the caller's balance; an account that never sold anything has zero.
func (uc *GetBalance) Execute(ctx context.Context, p domain.Principal) (domain.Balance, error) {
	return uc.ledger.Balance(ctx, p.AccountID)
}

// CancelWithdrawal withdraws a request before processing started: PENDING → CANCELED, which
// gives its amount and fee back to the balance.
type CancelWithdrawal struct {
	repo  ports.WithdrawalRepository
	clock ports.Clock
}

// NewCancelWithdrawal builds the use case.
func NewCancelWithdrawal(repo ports.WithdrawalRepository, clock ports.Clock) *CancelWithdrawal {
	requirePorts("NewCancelWithdrawal", repo, clock)
	return &CancelWithdrawal{repo: repo, clock: clock}
}

// Execute cancels the withdrawal; any status but PENDING answers a
// domain.InvalidTransitionError.
func (uc *CancelWithdrawal) Execute(ctx context.Context, p domain.Principal, id string) (*domain.Withdrawal, error) {
	return uc.repo.Update(ctx, p.AccountID, id, func(w *domain.Withdrawal) error {
		return w.Cancel(uc.clock.Now())
	})
}

// Messages of the withdrawals the sandbox fails or rejects on request.
const (
	SandboxWithdrawalFailedMessage   = "the payout failed at the acquirer (sandbox)"
	SandboxWithdrawalRejectedMessage = "the payout was rejected by the gateway (sandbox)"
)

// FailWithdrawal is the sandbox acquirer reporting a processing error: PROCESSING → FAILED,
// which gives the money back.
type FailWithdrawal struct {
	repo  ports.WithdrawalRepository
	clock ports.Clock
}

// NewFailWithdrawal builds the use case.
func NewFailWithdrawal(repo ports.WithdrawalRepository, clock ports.Clock) *FailWithdrawal {
	requirePorts("NewFailWithdrawal", repo, clock)
	return &FailWithdrawal{repo: repo, clock: clock}
}

// Execute fails the withdrawal; any status but PROCESSING answers a
// domain.InvalidTransitionError.
func (uc *FailWithdrawal) Execute(ctx context.Context, p domain.Principal, id string) (*domain.Withdrawal, error) {
	return uc.repo.Update(ctx, p.AccountID, id, func(w *domain.Withdrawal) error {
		return w.Fail(SandboxWithdrawalFailedMessage, uc.clock.Now())
	})
}

// RejectWithdrawal is the gateway refusing a payout in the sandbox: PROCESSING → REJECTED,
// which gives the money back.
type RejectWithdrawal struct {
	repo  ports.WithdrawalRepository
	clock ports.Clock
}

// NewRejectWithdrawal builds the use case.
func NewRejectWithdrawal(repo ports.WithdrawalRepository, clock ports.Clock) *RejectWithdrawal {
	requirePorts("NewRejectWithdrawal", repo, clock)
	return &RejectWithdrawal{repo: repo, clock: clock}
}

// Execute rejects the withdrawal; any status but PROCESSING answers a
// domain.InvalidTransitionError.
func (uc *RejectWithdrawal) Execute(ctx context.Context, p domain.Principal, id string) (*domain.Withdrawal, error) {
	return uc.repo.Update(ctx, p.AccountID, id, func(w *domain.Withdrawal) error {
		return w.Reject(SandboxWithdrawalRejectedMessage, uc.clock.Now())
	})
}

// RefundWithdrawal is the sandbox's receiving institution returning the money of a processed
// payout: PROCESSED → REFUNDED, which gives the amount and fee back to the balance.
type RefundWithdrawal struct {
	repo  ports.WithdrawalRepository
	clock ports.Clock
}

// NewRefundWithdrawal builds the use case.
func NewRefundWithdrawal(repo ports.WithdrawalRepository, clock ports.Clock) *RefundWithdrawal {
	requirePorts("NewRefundWithdrawal", repo, clock)
	return &RefundWithdrawal{repo: repo, clock: clock}
}

// Execute refunds the withdrawal; any status but PROCESSED answers a
// domain.InvalidTransitionError.
func (uc *RefundWithdrawal) Execute(ctx context.Context, p domain.Principal, id string) (*domain.Withdrawal, error) {
	return uc.repo.Update(ctx, p.AccountID, id, func(w *domain.Withdrawal) error {
		return w.Refund(uc.clock.Now())
	})
}

// SettleWithdrawals is the sandbox acquirer confirming payouts by itself: a withdrawal that
// has been PROCESSING for the settle delay moves to PROCESSED, with the amount withdrawn, the
// processing date and an end-to-end id ('E', the payer's ISPB). Several instances may run it
// against one store: the version-checked update lets one of them win, and the others find the
// withdrawal PROCESSED (or failed, or rejected meanwhile) and leave it alone, so there is one
// transition and one event.
type SettleWithdrawals struct {
	repo  ports.WithdrawalRepository
	clock ports.Clock
	delay time.Duration
	ispb  string
	batch int
}

// NewSettleWithdrawals builds the settler; ispb is the paying institution's, in the
// end-to-end ids.
func NewSettleWithdrawals(repo ports.WithdrawalRepository, clock ports.Clock, delay time.Duration, ispb string) *SettleWithdrawals {
	requirePorts("NewSettleWithdrawals", repo, clock)
	if delay < 0 || len(ispb) != 8 {
		panic("application.NewSettleWithdrawals: the delay must be at least 0 and the ISPB 8 digits")
	}
	return &SettleWithdrawals{repo: repo, clock: clock, delay: delay, ispb: ispb, batch: 500}
}

// RunOnce settles what is due now and tells how many withdrawals it moved.
func (uc *SettleWithdrawals) RunOnce(ctx context.Context) (int, error) {
	due, err := uc.repo.ListByStatus(ctx, domain.WdProcessing, uc.clock.Now().Add(-uc.delay), uc.batch)
	if err != nil {
		return 0, err
	}
	moved := 0
	for _, w := range due {
		_, err := uc.repo.Update(ctx, w.AccountID(), w.ID(), func(w *domain.Withdrawal) error {
			now := uc.clock.Now()
			return w.Complete(domain.NewEndToEndID('E', uc.ispb, now), now)
		})
		switch {
		case err == nil:
			moved++
		case errors.Is(err, domain.ErrInvalidTransition):
			// Settled by another instance, or steered to FAILED or REJECTED, meanwhile.
		default:
			return moved, err
		}
	}
	return moved, nil
}

// The sandbox's PIX directory: fictitious, with a document whose check digits are right, so
// that every consumer of the API can parse it.
const (
	SandboxPayoutReceiverName = "Sandbox Receiver"
	sandboxPayoutReceiverCPF  = "52998224725"
)

// SandboxPixDirectory resolves PIX keys in the sandbox: every key belongs to "Sandbox
// Receiver", a checking account at the sandbox ISPB, an individual or a company holding the
// key's document when the key is a CPF or a CNPJ, otherwise an individual with a fixed sandbox
// CPF.
func SandboxPixDirectory(_ context.Context, key domain.PixKey) (domain.AccountHolder, error) {
	h := domain.AccountHolder{
		Type: domain.HolderPF, Name: SandboxPayoutReceiverName, Document: domain.MustParseDocument(sandboxPayoutReceiverCPF),
		BankAccount: domain.BankAccount{Type: "CACC", Digit: "1", ISPB: domain.SandboxISPB},
		Pix:         key,
	}
	if key.Type == domain.PixKeyCPF || key.Type == domain.PixKeyCNPJ {
		doc, err := domain.ParseDocument(key.Key)
		if err != nil {
			return domain.AccountHolder{}, fmt.Errorf("%w: %w", domain.ErrInvalidPixKey, err)
		}
		h.Document = doc
		if doc.Kind() == domain.CNPJ {
			h.Type = domain.HolderPJ
		}
	}
	return h, nil
}
