package application

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
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
	TxID       string       // the BR Code's txid, which names the transaction; empty when the PIX named none
	Amount     domain.Cents // `valor`
	PaidAt     time.Time    // `horario`
	Refunds    []PixRefund  // `devolucoes`
	// Invalid, when set, says why the entry is malformed by the API Pix specification: it
	// applies nothing and its outcome is OutcomeInvalid (the other fields may be empty).
	Invalid string
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
	// Nature is `natureza` as the acquirer sent it (empty when absent, which the specification
	// reads as ORIGINAL). Only a devolution of a MED nature, or of none stated, can be the
	// refund of an accepted dispute (medRefund).
	Nature string
}

// The natures of a devolution (`natureza`) that Banco Central's API Pix defines.
const (
	NatureOriginal         = "ORIGINAL"
	NatureWithdrawal       = "RETIRADA"
	NatureMEDOperational   = "MED_OPERACIONAL"
	NatureMEDFraud         = "MED_FRAUDE"
	NatureMEDPixAutomatico = "MED_PIX_AUTOMATICO"
)

// PixRefundNatures lists every natureza the specification defines, in its order.
func PixRefundNatures() []string {
	return []string{NatureOriginal, NatureWithdrawal, NatureMEDOperational, NatureMEDFraud, NatureMEDPixAutomatico}
}

// NotificationOutcome tells what became of one payment or refund of a callback.
type NotificationOutcome string

// The outcomes of POST /acquirer/pix. The callback answers 200 with one result per `pix` entry
// whenever its body is well-formed, so that the acquirer stops retrying entries that can never
// apply; a store failure answers 503 (or 500) instead, and the acquirer's retry then finds the
// entries applied before the failure "already_applied": nothing is lost or applied twice.
//
// Payments:
//   - applied: the payment moved the charge PIX_QRCODE_GENERATED → PAID (amountPaid = valor,
//     paymentDate = horario, endToEnd = endToEndId, feeAmount from the fee policy).
//   - already_applied: this endToEndId paid this charge before; nothing changes (acquirers
//     retry, and the answer is the same 200).
//   - unknown_txid: the txid is not one of pixgate's charges, or the PIX named no txid (a PIX
//     sent to the key without a charge). Nothing changes.
//   - invalid: the entry is malformed by the API Pix specification (detail says how): nothing
//     of it is looked at or applied, and the other entries of the batch apply as usual.
//   - amount_mismatch: valor differs from the charge's amount (whatever its status). Nothing
//     of the charge changes (it expires as usual), and the money is handled as a late
//     payment's: recorded in the suspense account, its full devolution to the payer requested
//     from the acquirer at once.
//   - duplicate_end_to_end: the endToEndId was applied to another charge already; an
//     end-to-end id identifies one payment, once. Nothing changes.
//   - invalid_time: horario lies before the charge was created, or more than
//     MaxPaymentClockSkew after the time the callback arrived: no payment of this charge could
//     have happened then. Nothing changes, and the entry's devolutions are not looked at
//     (each is invalid_time too).
//   - late_payment_refunded: the charge was not awaiting a payment (expired, failed, paid under
//     another endToEndId): the money is recorded in the suspense account and its full
//     devolution to the payer is requested from the acquirer at once. The charge keeps its
//     status.
//
// Money that pays no charge (late_payment_refunded, amount_mismatch) enters suspense once and
// its devolution is recorded once, when its claim is marked late, and sent by the devolution
// outbox (SendDevolutions), whose first step the delivery that stored the arrival takes at
// once: the acquirer's retries, and the later callback that reports the devolution, answer the
// same outcome and ask nothing more.
//
// Devolutions (each `devolucoes` element, matched by its id: a refund's id, or the devolution
// pixgate asked for a late payment):
//   - applied: DEVOLVIDO completed the refund (REFUNDED when nothing is left to refund,
//     otherwise back to PAID) or the MED refund (INFRACTION); NAO_REALIZADO failed the refund
//     (back to PAID with errorMessage); for a late payment (or a payment of another amount),
//     the money left suspense.
//   - already_applied: that result was recorded before.
//   - in_progress: EM_PROCESSAMENTO. Nothing changes until its final status comes.
//   - amount_mismatch: valor differs from the refund's amount. Nothing changes.
//   - unknown_refund: no refund of this payment has this id.
//   - invalid_transition: the refund already has the opposite final result. Nothing changes.
//
// Every result names the transaction's status after the entry (left out for unknown_txid) and,
// except for applied and already_applied, a detail in words.
const (
	OutcomeApplied             NotificationOutcome = "applied"
	OutcomeAlreadyApplied      NotificationOutcome = "already_applied"
	OutcomeUnknownTxID         NotificationOutcome = "unknown_txid"
	OutcomeAmountMismatch      NotificationOutcome = "amount_mismatch"
	OutcomeInvalidTransition   NotificationOutcome = "invalid_transition"
	OutcomeInProgress          NotificationOutcome = "in_progress"
	OutcomeDuplicateEndToEnd   NotificationOutcome = "duplicate_end_to_end"
	OutcomeLatePaymentRefunded NotificationOutcome = "late_payment_refunded"
	OutcomeUnknownRefund       NotificationOutcome = "unknown_refund"
	OutcomeInvalidTime         NotificationOutcome = "invalid_time"
	OutcomeInvalid             NotificationOutcome = "invalid"
)

// MaxPaymentClockSkew is how far in the future a payment's horario may lie, for the acquirer's
// clock running ahead of ours.
const MaxPaymentClockSkew = 5 * time.Minute

// paymentTimeRefusal says why horario cannot be the time a payment of t was made, or "". The
// creation is compared at whole seconds, as acquirers often send horario without a fraction:
// a charge created at 11:19:32.456 paid "at 11:19:32" is a fast payer, not a forgery. A charge
// its PSP made is compared with its creation by the PSP's clock (calendario.criacao), the clock
// horario is written by, so that a PSP whose clock is behind pixgate's never has a real payment
// refused.
func paymentTimeRefusal(horario time.Time, t *domain.Transaction, now time.Time) string {
	created := t.CreatedAt()
	if c, ok := t.PSPCharge(); ok {
		created = c.CreatedAt
	}
	switch {
	case horario.Before(created.Truncate(time.Second)):
		return fmt.Sprintf("horario %s is before the charge was created", horario.UTC().Format(time.RFC3339Nano))
	case horario.After(now.Add(MaxPaymentClockSkew)):
		return fmt.Sprintf("horario %s is more than %v in the future", horario.UTC().Format(time.RFC3339Nano), MaxPaymentClockSkew)
	}
	return ""
}

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

// LatePayment is what operators are told of a payment that belonged to no charge, once, when
// its devolution is first asked for: the claim, why it paid no charge (the outcome:
// OutcomeLatePaymentRefunded or OutcomeAmountMismatch), the devolution asked for it, and the
// acquirer's answer (or why there is none).
type LatePayment struct {
	Claim      ports.PaymentClaim
	Outcome    NotificationOutcome
	Devolution ports.Devolution
	Result     ports.DevolutionResult
	Err        error
}

// ApplyPixNotifications applies the acquirer's callback: for each entry, the txid names the
// transaction (whatever its account: the acquirer is not a merchant), the end-to-end id is
// claimed once for ever in the ledger's payment registry, the payment pays the charge, and each
// devolution settles its refund, each through one version-checked update that decides, on the
// stored transaction, whether the move was already made. Concurrent deliveries of one
// notification therefore make one transition, one event and one set of entries.
type ApplyPixNotifications struct {
	repo        ports.TransactionRepository
	ledger      ports.Ledger
	devolutions *SendDevolutions
	txids       ports.TxIDDecoder
	clock       ports.Clock
	fee         domain.FeePolicy
	receiver    *domain.AccountHolder
	late        func(LatePayment)
}

// NewApplyPixNotifications builds the use case. devolutions sends the devolutions of
// payments that paid no charge. receiver, the gateway's receiving account recorded on each
// payment, may be nil when it is not known. late is told of every payment that paid no charge,
// once (for a metric and a log line).
func NewApplyPixNotifications(repo ports.TransactionRepository, ledger ports.Ledger, devolutions *SendDevolutions, txids ports.TxIDDecoder, clock ports.Clock, fee domain.FeePolicy, receiver *domain.AccountHolder, late func(LatePayment)) *ApplyPixNotifications {
	requirePorts("NewApplyPixNotifications", repo, ledger, devolutions, txids, clock)
	if late == nil {
		panic("application.NewApplyPixNotifications: late is required")
	}
	return &ApplyPixNotifications{repo: repo, ledger: ledger, devolutions: devolutions, txids: txids, clock: clock,
		fee: fee, receiver: receiver, late: late}
}

// errUnchanged tells the repository to store nothing: the entry's decision was an outcome
// that leaves the transaction as it is.
var errUnchanged = errors.New("unchanged")

// decision is how an entry of the callback judges the stored transaction: OutcomeApplied after
// it applied its transition to t, or the outcome (and detail) that leaves t as it is.
type decision func(t *domain.Transaction) (outcome NotificationOutcome, detail string, err error)

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
	if n.Invalid != "" {
		res.Outcome, res.Detail = OutcomeInvalid, n.Invalid
		return res, nil
	}
	t, err := uc.find(ctx, n.TxID)
	if errors.Is(err, domain.ErrNotFound) {
		res.Outcome, res.Detail = OutcomeUnknownTxID, "no transaction has this txid"
		if n.TxID == "" {
			res.Detail = "the PIX names no txid: it pays no charge of pixgate's"
		}
		for _, r := range n.Refunds {
			res.Refunds = append(res.Refunds, PixRefundResult{ID: r.ID, ReturnID: r.ReturnID, Outcome: OutcomeUnknownTxID, Detail: res.Detail})
		}
		return res, nil
	}
	if err != nil {
		return res, err
	}
	// Before the claim: a payment time no payment of this charge could have is refused before
	// its end-to-end id is registered, so that nothing at all is recorded for it.
	if why := paymentTimeRefusal(n.PaidAt, t, uc.clock.Now()); why != "" {
		res.Outcome, res.Detail, res.Status = OutcomeInvalidTime, why, t.Status()
		for _, r := range n.Refunds {
			res.Refunds = append(res.Refunds, PixRefundResult{ID: r.ID, ReturnID: r.ReturnID, Outcome: OutcomeInvalidTime, Detail: why})
		}
		return res, nil
	}

	claim, err := uc.ledger.ClaimPayment(ctx, ports.PaymentClaim{
		EndToEndID: n.EndToEndID, TransactionID: t.ID(), AccountID: t.AccountID(), Amount: n.Amount,
		CreatedAt: uc.clock.Now().UTC().Truncate(time.Millisecond),
	})
	if err != nil {
		return res, err
	}
	status := t.Status()
	switch {
	case claim.TransactionID != t.ID():
		res.Outcome, res.Detail = OutcomeDuplicateEndToEnd, "this endToEndId was applied to another charge"
	case claim.Late:
		res.Outcome, res.Detail, err = uc.latePayment(ctx, claim, t)
	default:
		res.Outcome, res.Detail, status, err = uc.update(ctx, t, func(t *domain.Transaction) (NotificationOutcome, string, error) { return uc.pay(t, n) })
		if err == nil && (res.Outcome == OutcomeLatePaymentRefunded || res.Outcome == OutcomeAmountMismatch) {
			claim.Late = true
			res.Outcome, res.Detail, err = uc.latePayment(ctx, claim, t)
		}
	}
	if err != nil {
		return res, err
	}
	for _, r := range n.Refunds {
		rr := PixRefundResult{ID: r.ID, ReturnID: r.ReturnID}
		switch {
		case res.Outcome == OutcomeDuplicateEndToEnd:
			rr.Outcome, rr.Detail = OutcomeUnknownRefund, "this endToEndId belongs to another charge"
		case r.Status == PixRefundInProgress:
			rr.Outcome, rr.Detail = OutcomeInProgress, "the devolution is in progress at the acquirer"
		case claim.Late:
			rr.Outcome, rr.Detail, err = uc.lateReturn(ctx, claim, r)
		default:
			rr.Outcome, rr.Detail, status, err = uc.update(ctx, t, func(t *domain.Transaction) (NotificationOutcome, string, error) { return uc.refund(t, r) })
		}
		if err != nil {
			return res, err
		}
		res.Refunds = append(res.Refunds, rr)
	}
	res.Status = status
	return res, nil
}

func (uc *ApplyPixNotifications) find(ctx context.Context, txid string) (*domain.Transaction, error) {
	if txid == "" {
		return nil, domain.ErrNotFound
	}
	id, err := uc.txids.TransactionID(txid)
	if errors.Is(err, domain.ErrNotFound) && domain.ValidCobTxID(txid) {
		// Not a static code's txid, which encodes the transaction id: a dynamic charge's,
		// which is random, and which the store's index leads to.
		return uc.repo.FindByCobTxID(ctx, txid)
	}
	if err != nil {
		return nil, err
	}
	return uc.repo.Find(ctx, id)
}

// update lets decide judge the stored transaction, stores it when decide applied a
// transition, and tells the outcome and the status after it.
func (uc *ApplyPixNotifications) update(ctx context.Context, t *domain.Transaction, decide decision) (NotificationOutcome, string, domain.TransactionStatus, error) {
	var status domain.TransactionStatus
	var outcome NotificationOutcome
	var detail string
	stored, err := uc.repo.Update(ctx, t.AccountID(), t.ID(), func(t *domain.Transaction) error {
		status = t.Status()
		var err error
		if outcome, detail, err = decide(t); err != nil {
			return err
		}
		if outcome != OutcomeApplied {
			return errUnchanged
		}
		return nil
	})
	if err == nil {
		return OutcomeApplied, "", stored.Status(), nil
	}
	if errors.Is(err, errUnchanged) {
		return outcome, detail, status, nil
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

// pay decides what a payment does to its charge: pays it when it awaits exactly this amount.
// The amount is judged first, as it is on the acquirer's retries (see latePayment), where the
// charge's status may have moved on but its amount has not.
func (uc *ApplyPixNotifications) pay(t *domain.Transaction, n PixNotification) (NotificationOutcome, string, error) {
	switch {
	case t.EndToEnd() == n.EndToEndID:
		return OutcomeAlreadyApplied, "", nil
	case n.Amount != t.Amount():
		return OutcomeAmountMismatch, "", nil
	case t.Status() != domain.TxPixQRCodeGenerated:
		return OutcomeLatePaymentRefunded, "", nil
	case t.Expired(n.PaidAt):
		// Paid after the charge's expiration, which the sweeper has not marked yet: the charge
		// was unpaid past its expirationDate, so it fails as every expired charge does, and the
		// money goes back like any late payment's.
		return OutcomeLatePaymentRefunded, "", nil
	}
	var receiver *domain.AccountHolder
	if uc.receiver != nil {
		r := *uc.receiver
		receiver = &r
	}
	return OutcomeApplied, "", t.Pay(domain.Payment{
		AmountPaid: n.Amount, PaidAt: n.PaidAt, EndToEnd: n.EndToEndID, Receiver: receiver,
		Fee: uc.fee.For(n.Amount),
	}, uc.clock.Now())
}

// LateDevolutionID is the id of the devolution that returns the late payment endToEndID: 'L'
// and 34 hexadecimal characters of its hash, 35 in all as API Pix allows.
func LateDevolutionID(endToEndID string) string {
	sum := sha256.Sum256([]byte(endToEndID))
	return "L" + hex.EncodeToString(sum[:])[:34]
}

// latePayment handles a payment that paid no charge (claim): the claim is marked late, which
// records its full devolution to the payer, due at once, before anything is sent; its money is
// recorded in suspense; and, by the one delivery that stores that arrival (the ledger stores a
// posting once and says which call did), the devolution outbox takes its first step at once
// and operators are told. Retries and concurrent deliveries find the arrival stored and ask
// nothing; the outbox sends the devolution until the acquirer answers, even after a crash
// between the arrival and the first step.
func (uc *ApplyPixNotifications) latePayment(ctx context.Context, claim ports.PaymentClaim, t *domain.Transaction) (NotificationOutcome, string, error) {
	if err := uc.ledger.MarkLate(ctx, claim.EndToEndID, uc.clock.Now()); err != nil {
		return "", "", err
	}
	arrive, _ := domain.LatePaymentPostings(claim.EndToEndID, t.ID(), claim.Amount)
	arrive.At = uc.clock.Now()
	stored, err := uc.ledger.Post(ctx, arrive)
	if err != nil {
		return "", "", err
	}
	outcome, why := lateReason(claim, t)
	claim.TransactionID = t.ID()
	d := LateDevolution(claim)
	if stored == 1 {
		a, err := uc.devolutions.Late(ctx, claim.EndToEndID)
		if err != nil {
			return "", "", err
		}
		uc.late(LatePayment{Claim: claim, Outcome: outcome, Devolution: d, Result: a.Result, Err: a.Err})
	}
	return outcome, fmt.Sprintf("%s: devolution %s requested", why, d.ID), nil
}

// lateReason tells why the payment claim paid no charge t, the same on every delivery: its
// amount, which never changes, is judged before the charge's status, as pay judges them.
func lateReason(claim ports.PaymentClaim, t *domain.Transaction) (NotificationOutcome, string) {
	switch {
	case claim.Amount != t.Amount():
		return OutcomeAmountMismatch, fmt.Sprintf("valor %s differs from the charge's amount %s", claim.Amount.Reais(), t.Amount().Reais())
	case t.Status() == domain.TxPixQRCodeGenerated:
		return OutcomeLatePaymentRefunded, "the payment came after the charge's expirationDate" // and before the sweeper ran
	}
	return OutcomeLatePaymentRefunded, fmt.Sprintf("the charge is %s, not awaiting a payment", t.Status())
}

// returned records that a late payment left suspense for its payer; false when it had before.
func (uc *ApplyPixNotifications) returned(ctx context.Context, claim ports.PaymentClaim) (bool, error) {
	_, leave := domain.LatePaymentPostings(claim.EndToEndID, claim.TransactionID, claim.Amount)
	leave.At = uc.clock.Now()
	stored, err := uc.ledger.Post(ctx, leave)
	return stored == 1, err
}

// lateReturn applies a devolution the callback reports for a late payment.
func (uc *ApplyPixNotifications) lateReturn(ctx context.Context, claim ports.PaymentClaim, r PixRefund) (NotificationOutcome, string, error) {
	switch {
	case r.ID != LateDevolutionID(claim.EndToEndID):
		return OutcomeUnknownRefund, "no devolution of this payment has this id", nil
	case r.Amount != claim.Amount:
		return OutcomeAmountMismatch, fmt.Sprintf("valor %s differs from the late payment %s", r.Amount.Reais(), claim.Amount.Reais()), nil
	case r.Status != PixRefundReturned:
		return OutcomeInProgress, "the devolution was not made; it stays in suspense for operations", nil
	}
	fresh, err := uc.returned(ctx, claim)
	if err != nil || !fresh {
		return OutcomeAlreadyApplied, "", err
	}
	return OutcomeApplied, "", nil
}

func refundFailure(reason string) string {
	if reason == "" {
		return "the acquirer could not refund the payment"
	}
	return "the acquirer could not refund the payment: " + reason
}

// refund decides what a devolution does to the refund it names: settles it when it is in
// progress and the amounts agree.
func (uc *ApplyPixNotifications) refund(t *domain.Transaction, r PixRefund) (NotificationOutcome, string, error) {
	now := uc.clock.Now()
	var found *domain.Refund
	for _, rf := range t.Refunds() {
		if rf.ID == r.ID {
			found = &rf
		}
	}
	if found == nil {
		return uc.medRefund(t, r, now)
	}
	switch {
	case r.Amount != found.Amount:
		return OutcomeAmountMismatch, fmt.Sprintf("valor %s differs from the refund's amount %s", r.Amount.Reais(), found.Amount.Reais()), nil
	case r.Status == PixRefundReturned && found.Status == domain.RefundRefunded,
		r.Status == PixRefundNotDone && found.Status == domain.RefundFailed:
		return OutcomeAlreadyApplied, "", nil
	case found.Status != domain.RefundProcessing:
		return OutcomeInvalidTransition, fmt.Sprintf("the refund is %s already", found.Status), nil
	case r.Status == PixRefundReturned:
		return OutcomeApplied, "", t.ConfirmRefund(found.ID, r.ReturnID, now)
	case r.Status == PixRefundNotDone:
		return OutcomeApplied, "", t.FailRefund(found.ID, refundFailure(r.Reason), now)
	}
	return "", "", fmt.Errorf("refund %s: unknown status %q", r.ID, r.Status)
}

// medRefund applies a devolution pixgate did not ask for: the MED refund of an accepted
// dispute, which the payer's bank starts. A devolution whose natureza says the receiver asked
// for it (ORIGINAL, RETIRADA) is no MED refund, whatever the transaction's status.
func (uc *ApplyPixNotifications) medRefund(t *domain.Transaction, r PixRefund, now time.Time) (NotificationOutcome, string, error) {
	switch {
	case r.Nature == NatureOriginal || r.Nature == NatureWithdrawal:
		return OutcomeUnknownRefund, "no refund of this payment has this id", nil
	case t.Status() == domain.TxInfraction && t.EndToEndRefund() == r.ReturnID:
		return OutcomeAlreadyApplied, "", nil
	case t.Status() != domain.TxProcessingInfraction || r.Status != PixRefundReturned:
		return OutcomeUnknownRefund, "no refund of this payment has this id", nil
	case r.Amount != t.Disputed():
		return OutcomeAmountMismatch, fmt.Sprintf("valor %s differs from the disputed amount %s", r.Amount.Reais(), t.Disputed().Reais()), nil
	}
	return OutcomeApplied, "", t.CompleteInfraction(r.ReturnID, now)
}
