package application

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/pixgate/pixgate/domain"
	"github.com/pixgate/pixgate/ports"
)

// PixNotification is one entry of the acquirer's callback (Banco Central's standard API Pix
// `pix` array): a PIX payment received for one of pixgate's charges, with the refunds
// (devoluções) made of it so far.
type PixNotification struct {
	EndToEndID string       // the payment's end-to-end id: its identity, and the transaction's endToEnd
	TxID       string       // the BR Code's txid, which names the transaction
	Amount     domain.Cents // `valor`
	PaidAt     time.Time    // `horario`
	Refunds    []PixRefund  // `devolucoes`
}

// PixRefundStatus is the `status` of a devolução.
type PixRefundStatus string

const (
	PixRefundInProgress PixRefundStatus = "EM_PROCESSAMENTO"
	PixRefundReturned   PixRefundStatus = "DEVOLVIDO"
	PixRefundNotDone    PixRefundStatus = "NAO_REALIZADO"
)

// PixRefund is one devolução of a payment.
type PixRefund struct {
	ID       string // the refund's id at the acquirer
	ReturnID string // `rtrId`: the refund's end-to-end id, the transaction's endToEndRefund
	Amount   domain.Cents
	Status   PixRefundStatus
	Reason   string // `motivo`, when the refund was not made
}

// NotificationOutcome tells what became of one payment or refund of a callback.
type NotificationOutcome string

// The outcomes of POST /acquirer/pix. The callback answers 200 with one result per `pix` entry
// whenever its body is well-formed, so that the acquirer stops retrying entries that can never
// apply; a store failure answers 503 (or 500) instead, and the acquirer's retry then finds the
// entries applied before the failure "already_applied": nothing is lost or applied twice.
//
//   - applied: the payment moved the transaction PIX_QRCODE_GENERATED → PAID (amountPaid =
//     valor, paymentDate = horario, endToEnd = endToEndId, feeAmount from the fee policy); a
//     DEVOLVIDO refund moved it PROCESSING_REFUND → REFUNDED, or PROCESSING_INFRACTION →
//     INFRACTION, with endToEndRefund = rtrId; a NAO_REALIZADO refund moved it
//     PROCESSING_REFUND → PAID with errorMessage naming the motivo.
//   - already_applied: the same notification was applied before (the transaction's endToEnd is
//     this endToEndId; its endToEndRefund is this rtrId; or it is back in PAID with this
//     motivo). Nothing changes: acquirers retry, and the answer is the same 200.
//   - unknown_txid: the txid is not one of pixgate's charges (not derived from a transaction
//     id, or no such transaction). Nothing changes; the money belongs to nobody pixgate knows.
//   - amount_mismatch: valor differs from the charge's amount (a payment), or from the amount
//     paid (a refund: pixgate refunds in full). Nothing changes: the transaction stays as it
//     was (an unpaid charge expires as usual) and operations return the money.
//   - invalid_transition: the transaction's status does not allow the move (a payment of an
//     expired or failed charge, a second payment of a paid one with another endToEndId, a
//     refund never asked for). Nothing changes; operations return or reconcile the money.
//   - in_progress: a refund EM_PROCESSAMENTO. Nothing changes until its final status comes.
//
// Every result names the transaction's status after the entry (left out for unknown_txid) and,
// except for applied and already_applied, a detail in words.
const (
	OutcomeApplied           NotificationOutcome = "applied"
	OutcomeAlreadyApplied    NotificationOutcome = "already_applied"
	OutcomeUnknownTxID       NotificationOutcome = "unknown_txid"
	OutcomeAmountMismatch    NotificationOutcome = "amount_mismatch"
	OutcomeInvalidTransition NotificationOutcome = "invalid_transition"
	OutcomeInProgress        NotificationOutcome = "in_progress"
)

// PixNotificationResult is what became of one PixNotification.
type PixNotificationResult struct {
	EndToEndID string
	TxID       string
	Outcome    NotificationOutcome // of the payment
	Detail     string
	Status     domain.TransactionStatus // after the entry; empty for OutcomeUnknownTxID
	Refunds    []PixRefundResult        // one per PixRefund, in order
}

// PixRefundResult is what became of one PixRefund.
type PixRefundResult struct {
	ID, ReturnID string
	Outcome      NotificationOutcome
	Detail       string
}

// ApplyPixNotifications applies the acquirer's callback: for each entry, the txid names the
// transaction (whatever its account: the acquirer is not a merchant), the payment pays it and
// each refund settles it, each through one version-checked update that decides, on the stored
// transaction, whether the move was already made. Concurrent deliveries of one notification
// therefore make one transition and one event.
type ApplyPixNotifications struct {
	repo     ports.TransactionRepository
	txids    ports.TxIDDecoder
	clock    ports.Clock
	fee      domain.FeePolicy
	receiver *domain.AccountHolder
}

// NewApplyPixNotifications builds the use case. receiver, the gateway's receiving account
// recorded on each payment, may be nil when it is not known.
func NewApplyPixNotifications(repo ports.TransactionRepository, txids ports.TxIDDecoder, clock ports.Clock, fee domain.FeePolicy, receiver *domain.AccountHolder) *ApplyPixNotifications {
	requirePorts("NewApplyPixNotifications", repo, txids, clock)
	return &ApplyPixNotifications{repo: repo, txids: txids, clock: clock, fee: fee, receiver: receiver}
}

// skipped is how an update's closure reports an outcome that changes nothing.
type skipped struct {
	outcome NotificationOutcome
	detail  string
}

func (s *skipped) Error() string { return string(s.outcome) + ": " + s.detail }

// Execute applies every entry in order and returns one result each. An error (the store
// failing) stops it; entries applied before stay applied.
func (uc *ApplyPixNotifications) Execute(ctx context.Context, entries []PixNotification) ([]PixNotificationResult, error) {
	results := make([]PixNotificationResult, 0, len(entries))
	for _, n := range entries {
		res, err := uc.apply(ctx, n)
		if err != nil {
			return nil, err
		}
		results = append(results, res)
	}
	return results, nil
}

func (uc *ApplyPixNotifications) apply(ctx context.Context, n PixNotification) (PixNotificationResult, error) {
	res := PixNotificationResult{EndToEndID: n.EndToEndID, TxID: n.TxID}
	t, err := uc.find(ctx, n.TxID)
	if errors.Is(err, domain.ErrNotFound) {
		res.Outcome, res.Detail = OutcomeUnknownTxID, "no transaction has this txid"
		for _, r := range n.Refunds {
			res.Refunds = append(res.Refunds, PixRefundResult{ID: r.ID, ReturnID: r.ReturnID, Outcome: OutcomeUnknownTxID, Detail: res.Detail})
		}
		return res, nil
	}
	if err != nil {
		return res, err
	}

	var status domain.TransactionStatus
	res.Outcome, res.Detail, status, err = uc.update(ctx, t, func(t *domain.Transaction) error { return uc.pay(t, n) })
	if err != nil {
		return res, err
	}
	for _, r := range n.Refunds {
		rr := PixRefundResult{ID: r.ID, ReturnID: r.ReturnID}
		if r.Status == PixRefundInProgress {
			rr.Outcome, rr.Detail = OutcomeInProgress, "the refund is in progress at the acquirer"
		} else {
			rr.Outcome, rr.Detail, status, err = uc.update(ctx, t, func(t *domain.Transaction) error { return uc.refund(t, r) })
			if err != nil {
				return res, err
			}
		}
		res.Refunds = append(res.Refunds, rr)
	}
	res.Status = status
	return res, nil
}

func (uc *ApplyPixNotifications) find(ctx context.Context, txid string) (*domain.Transaction, error) {
	id, err := uc.txids.TransactionID(txid)
	if err != nil {
		return nil, err
	}
	return uc.repo.Find(ctx, id)
}

// update applies fn to the stored transaction and tells the outcome and the status after it.
func (uc *ApplyPixNotifications) update(ctx context.Context, t *domain.Transaction, fn func(*domain.Transaction) error) (NotificationOutcome, string, domain.TransactionStatus, error) {
	var status domain.TransactionStatus
	stored, err := uc.repo.Update(ctx, t.AccountID(), t.ID(), func(t *domain.Transaction) error {
		status = t.Status()
		return fn(t)
	})
	if err == nil {
		return OutcomeApplied, "", stored.Status(), nil
	}
	if s, ok := errors.AsType[*skipped](err); ok {
		return s.outcome, s.detail, status, nil
	}
	if errors.Is(err, domain.ErrInvalidTransition) {
		return OutcomeInvalidTransition, err.Error(), status, nil
	}
	if errors.Is(err, domain.ErrNotFound) {
		// Found a moment ago and gone now: never for stored transactions, which are kept.
		return OutcomeUnknownTxID, "no transaction has this txid", "", nil
	}
	return "", "", "", err
}

func (uc *ApplyPixNotifications) pay(t *domain.Transaction, n PixNotification) error {
	if t.EndToEnd() == n.EndToEndID {
		return &skipped{outcome: OutcomeAlreadyApplied}
	}
	if t.Status() == domain.TxPixQRCodeGenerated && n.Amount != t.Amount() {
		return &skipped{OutcomeAmountMismatch, fmt.Sprintf("valor %s differs from the charge's amount %s", n.Amount.Reais(), t.Amount().Reais())}
	}
	if t.EndToEnd() != "" {
		// A second payment of one charge: money to return, said in words.
		return &skipped{OutcomeInvalidTransition, fmt.Sprintf("the transaction is %s, paid with another endToEndId (%s)", t.Status(), t.EndToEnd())}
	}
	var receiver *domain.AccountHolder
	if uc.receiver != nil {
		r := *uc.receiver
		receiver = &r
	}
	return t.Pay(domain.Payment{
		AmountPaid: n.Amount, PaidAt: n.PaidAt, EndToEnd: n.EndToEndID, Receiver: receiver,
		Fee: uc.fee.For(n.Amount),
	}, uc.clock.Now())
}

func refundFailure(reason string) string {
	if reason == "" {
		return "the acquirer could not refund the payment"
	}
	return "the acquirer could not refund the payment: " + reason
}

func (uc *ApplyPixNotifications) refund(t *domain.Transaction, r PixRefund) error {
	now := uc.clock.Now()
	switch r.Status {
	case PixRefundReturned:
		if (t.Status() == domain.TxRefunded || t.Status() == domain.TxInfraction) && t.EndToEndRefund() == r.ReturnID {
			return &skipped{outcome: OutcomeAlreadyApplied}
		}
		if paid := t.AmountPaid(); paid != nil && r.Amount != *paid &&
			(t.Status() == domain.TxProcessingRefund || t.Status() == domain.TxProcessingInfraction) {
			return &skipped{OutcomeAmountMismatch, fmt.Sprintf("valor %s differs from the amount paid %s; pixgate refunds in full", r.Amount.Reais(), paid.Reais())}
		}
		if t.Status() == domain.TxProcessingInfraction {
			return t.CompleteInfraction(r.ReturnID, now)
		}
		return t.ConfirmRefund(r.ReturnID, now)
	case PixRefundNotDone:
		message := refundFailure(r.Reason)
		if t.Status() == domain.TxPaid && t.ErrorMessage() == message {
			return &skipped{outcome: OutcomeAlreadyApplied}
		}
		return t.FailRefund(message, now)
	}
	return fmt.Errorf("refund %s: unknown status %q", r.ID, r.Status)
}
