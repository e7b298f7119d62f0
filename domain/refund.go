package domain

import (
	"errors"
	"fmt"
	"slices"
	"time"
)

// RefundStatus is where one refund of a transaction stands.
type RefundStatus string

const (
	RefundProcessing RefundStatus = "PROCESSING"
	RefundRefunded   RefundStatus = "REFUNDED"
	RefundFailed     RefundStatus = "FAILED"
)

// ParseRefundStatus accepts exactly one of the refund statuses.
func ParseRefundStatus(s string) (RefundStatus, error) {
	switch st := RefundStatus(s); st {
	case RefundProcessing, RefundRefunded, RefundFailed:
		return st, nil
	}
	return "", fmt.Errorf("unknown refund status %q", s)
}

// RefundWindow is how long after its payment a transaction may be refunded.
const RefundWindow = 90 * 24 * time.Hour

// MaxRefundReason bounds a refund's reason, in characters.
const MaxRefundReason = 140

// Refund is one refund (full or partial) of a paid transaction. Its ID, 1 to 35 characters
// [A-Za-z0-9], is the devolution id the acquirer knows it by.
type Refund struct {
	ID             string
	Amount         Cents
	Reason         string
	Status         RefundStatus
	EndToEndRefund string
	ErrorMessage   string
	CreatedAt      time.Time
	CompletedAt    *time.Time
	Idempotency    Idempotency
	// Step is the index, in the transaction's history, of the PROCESSING_REFUND entry its
	// request wrote.
	Step int
	// Dispatch is where the sending of its devolution stands (see DevolutionDispatch): due at
	// its request, nil once the refund is REFUNDED or FAILED.
	Dispatch DevolutionDispatch
}

// RefundRequest is what a merchant asks for when it refunds.
type RefundRequest struct {
	ID          string // the devolution id: 1 to 35 characters [A-Za-z0-9]
	Amount      Cents  // 0 means everything still refundable
	Reason      string
	Idempotency Idempotency
}

// ErrRefundNotAllowed refuses a refund the rules forbid whatever its amount: the payment is
// older than RefundWindow.
var ErrRefundNotAllowed = errors.New("refund not allowed")

// RefundAmountError refuses a refund amount above what is still refundable.
type RefundAmountError struct {
	Asked, Refundable Cents
}

func (e *RefundAmountError) Error() string {
	return fmt.Sprintf("a refund of %d cents exceeds the %d cents still refundable", e.Asked, e.Refundable)
}

// Refunds returns the transaction's refunds, oldest first.
func (t *Transaction) Refunds() []Refund { return cloneRefunds(t.refunds) }

// AmountRefunded is the sum of the completed refunds.
func (t *Transaction) AmountRefunded() Cents {
	var sum Cents
	for _, r := range t.refunds {
		if r.Status == RefundRefunded {
			sum += r.Amount
		}
	}
	return sum
}

// Refundable is what may still be refunded: the amount paid less every refund that did not fail.
func (t *Transaction) Refundable() Cents {
	if t.amountPaid == nil {
		return 0
	}
	left := *t.amountPaid
	for _, r := range t.refunds {
		if r.Status != RefundFailed {
			left -= r.Amount
		}
	}
	return left
}

// RefundInProgress returns the refund being processed, if any.
func (t *Transaction) RefundInProgress() (Refund, bool) {
	for _, r := range t.refunds {
		if r.Status == RefundProcessing {
			return r, true
		}
	}
	return Refund{}, false
}

// RefundByIdempotencyKey returns the refund requested with key, if any.
func (t *Transaction) RefundByIdempotencyKey(key string) (Refund, bool) {
	for _, r := range t.refunds {
		if key != "" && r.Idempotency.Key == key {
			return r, true
		}
	}
	return Refund{}, false
}

// RequestRefund starts a full or partial refund: PAID → PROCESSING_REFUND, with the amount
// moved from the merchant's available balance to its blocked one. The posting is checked: the
// ledger stores the change only when the available balance covers the amount.
//
// Refused, changing nothing: any status but PAID (*InvalidTransitionError, which includes a
// refund already in progress); a payment older than RefundWindow (ErrRefundNotAllowed); an
// amount above what is refundable (*RefundAmountError).
func (t *Transaction) RequestRefund(req RefundRequest, now time.Time) error {
	if t.status != TxPaid {
		return &InvalidTransitionError{Resource: string(ResourceTransaction), From: string(t.status), To: string(TxProcessingRefund)}
	}
	if t.paymentDate != nil && now.Sub(*t.paymentDate) > RefundWindow {
		return fmt.Errorf("%w: the payment is more than 90 days old", ErrRefundNotAllowed)
	}
	amount := req.Amount
	if amount == 0 {
		amount = t.Refundable()
	}
	if amount < 1 || amount > t.Refundable() {
		return &RefundAmountError{Asked: amount, Refundable: t.Refundable()}
	}
	if req.ID == "" || len(req.ID) > 35 || slices.ContainsFunc(t.refunds, func(r Refund) bool { return r.ID == req.ID }) {
		return fmt.Errorf("%w: refund id %q", ErrInvalidOrder, req.ID)
	}
	err := t.move(TxPaid, TxProcessingRefund, now, func() {
		t.errorMessage = ""
		t.refunds = append(t.refunds, Refund{
			ID: req.ID, Amount: amount, Reason: req.Reason, Status: RefundProcessing,
			CreatedAt: now.UTC().Truncate(time.Millisecond), Idempotency: req.Idempotency,
			Step: len(t.history), Dispatch: NewDevolutionDispatch(now),
		})
	})
	if err == nil {
		t.postRefund(req.ID, MoveRefundHold, LedgerAvailable, LedgerBlocked, amount, true)
	}
	return err
}

// RefundPostingID names the posting of type kind of refund id of transaction txID. Refund
// postings are named by the refund rather than by the history step, so that a store which
// posts the (checked) hold before it writes the transaction names it the same whatever else
// happened to the transaction meanwhile.
func RefundPostingID(txID, refundID string, kind MovementType) string {
	return txID + "/refund/" + refundID + "/" + string(kind)
}

func (t *Transaction) postRefund(refundID string, kind MovementType, debit, credit LedgerAccount, amount Cents, checked bool) {
	t.postings = append(t.postings, Posting{
		ID: RefundPostingID(t.id, refundID, kind), Type: kind, AccountID: t.accountID,
		Resource: ResourceTransaction, ResourceID: t.id, Debit: debit, Credit: credit,
		Amount: amount, Checked: checked, At: t.UpdatedAt(),
	})
}

// VoidPostingID names the posting that gives back a checked posting whose status change was
// never stored (a store that posts the check first, then lost the write). Audits accept such
// a pair, and nothing else, without a status change behind it.
func VoidPostingID(postingID string) string { return postingID + "/void" }

// Void is the posting that gives p back: the same amount the other way, unchecked. The voids
// of one journal's postings are one journal too, named after the void of its first posting.
func (p Posting) Void() Posting {
	v := p
	v.ID, v.Debit, v.Credit, v.Checked = VoidPostingID(p.ID), p.Credit, p.Debit, false
	if p.Journal != "" {
		v.Journal = VoidPostingID(p.Journal)
	}
	switch p.Type {
	case MoveRefundHold:
		v.Type = MoveRefundRelease
	case MoveWithdrawal:
		v.Type = MoveWithdrawalReversal
	}
	return v
}

// inProgress finds the processing refund id, or refuses the move to `to`.
func (t *Transaction) inProgress(id string, to TransactionStatus) (int, error) {
	for i, r := range t.refunds {
		if r.ID == id && r.Status == RefundProcessing && t.status == TxProcessingRefund {
			return i, nil
		}
	}
	return 0, &InvalidTransitionError{Resource: string(ResourceTransaction), From: string(t.status), To: string(to)}
}

// ConfirmRefund records the acquirer's refund id: its blocked amount leaves for the payer, and
// the transaction goes PROCESSING_REFUND → REFUNDED when nothing is left to refund, otherwise
// back to PAID.
func (t *Transaction) ConfirmRefund(id, endToEndRefund string, now time.Time) error {
	i, err := t.inProgress(id, TxRefunded)
	if err != nil {
		return err
	}
	to := TxRefunded
	if t.Refundable() > 0 {
		to = TxPaid // a partial refund: the rest may still be refunded
	}
	err = t.move(TxProcessingRefund, to, now, func() {
		at := now.UTC().Truncate(time.Millisecond)
		t.refunds[i].Status, t.refunds[i].EndToEndRefund, t.refunds[i].CompletedAt = RefundRefunded, endToEndRefund, &at
		t.refunds[i].Dispatch.Done()
		t.endToEndRefund = endToEndRefund
	})
	if err == nil {
		t.postRefund(id, MoveRefund, LedgerBlocked, LedgerClearing, t.refunds[i].Amount, false)
	}
	return err
}

// FailRefund records that the acquirer could not make refund id: PROCESSING_REFUND → PAID with
// the message, and the blocked amount goes back to available.
func (t *Transaction) FailRefund(id, message string, now time.Time) error {
	i, err := t.inProgress(id, TxPaid)
	if err != nil {
		return err
	}
	err = t.move(TxProcessingRefund, TxPaid, now, func() {
		at := now.UTC().Truncate(time.Millisecond)
		t.refunds[i].Status, t.refunds[i].ErrorMessage, t.refunds[i].CompletedAt = RefundFailed, message, &at
		t.refunds[i].Dispatch.Done()
		t.errorMessage = message
	})
	if err == nil {
		t.postRefund(id, MoveRefundRelease, LedgerBlocked, LedgerAvailable, t.refunds[i].Amount, false)
	}
	return err
}

// AsRefundRequested rebuilds the transaction as it stood right after refund id was requested:
// the answer a replay of that request shows, whatever happened since. false when the
// transaction has no such refund.
func (t *Transaction) AsRefundRequested(id string) (*Transaction, bool) {
	k := slices.IndexFunc(t.refunds, func(r Refund) bool { return r.ID == id })
	if k < 0 || t.refunds[k].Step >= len(t.history) {
		return nil, false
	}
	r := t.Record()
	step := t.refunds[k].Step
	r.Status, r.History, r.ErrorMessage = TxProcessingRefund, r.History[:step+1], ""
	r.Refunds = slices.Clone(t.refunds[:k+1])
	r.Refunds[k].Status, r.Refunds[k].EndToEndRefund, r.Refunds[k].ErrorMessage, r.Refunds[k].CompletedAt = RefundProcessing, "", "", nil
	r.Refunds[k].Dispatch = NewDevolutionDispatch(r.Refunds[k].CreatedAt)
	r.EndToEndRefund = ""
	for _, prior := range r.Refunds[:k] {
		if prior.Status == RefundRefunded {
			r.EndToEndRefund = prior.EndToEndRefund
		}
	}
	if !slices.ContainsFunc(r.History, func(e StatusEntry[TransactionStatus]) bool { return e.Status == TxBlocked }) {
		r.InfractionDate = nil
	}
	return UnmarshalTransactionFromDatabase(r), true
}
