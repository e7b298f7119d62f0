package domain

import (
	"fmt"
	"slices"
	"time"
)

// WithdrawalStatus is a status of the withdrawal state machine: PENDING → PROCESSING, CANCELED
// or FAILED (the PSP refused the payout request); PROCESSING → PROCESSED, FAILED or REJECTED;
// PROCESSED → REFUNDED.
type WithdrawalStatus string

const (
	WdPending    WithdrawalStatus = "PENDING"
	WdProcessing WithdrawalStatus = "PROCESSING"
	WdProcessed  WithdrawalStatus = "PROCESSED"
	WdFailed     WithdrawalStatus = "FAILED"
	WdCanceled   WithdrawalStatus = "CANCELED"
	WdRefunded   WithdrawalStatus = "REFUNDED"
	WdRejected   WithdrawalStatus = "REJECTED"
)

// WithdrawalStatuses lists every withdrawal status.
func WithdrawalStatuses() []WithdrawalStatus {
	return []WithdrawalStatus{WdPending, WdProcessing, WdProcessed, WdFailed, WdCanceled, WdRefunded, WdRejected}
}

// ParseWithdrawalStatus accepts exactly one of WithdrawalStatuses.
func ParseWithdrawalStatus(s string) (WithdrawalStatus, error) {
	if slices.Contains(WithdrawalStatuses(), WithdrawalStatus(s)) {
		return WithdrawalStatus(s), nil
	}
	return "", fmt.Errorf("unknown withdrawal status %q", s)
}

// Final tells whether no transition leaves s.
func (s WithdrawalStatus) Final() bool {
	return s == WdCanceled || s == WdFailed || s == WdRejected || s == WdRefunded
}

// HoldsMoney tells whether a withdrawal in s takes its amount and fee out of the balance:
// every status but the ones where the money never left (CANCELED, FAILED, REJECTED) or came
// back (REFUNDED).
func (s WithdrawalStatus) HoldsMoney() bool {
	return s == WdPending || s == WdProcessing || s == WdProcessed
}

var withdrawalMoves = map[WithdrawalStatus][]WithdrawalStatus{
	WdPending:    {WdProcessing, WdCanceled, WdFailed},
	WdProcessing: {WdProcessed, WdFailed, WdRejected},
	WdProcessed:  {WdRefunded},
}

// WithdrawalCanMove tells whether the state table allows from → to.
func WithdrawalCanMove(from, to WithdrawalStatus) bool {
	return slices.Contains(withdrawalMoves[from], to)
}

// WithdrawalMethod is how a withdrawal pays out; PIX is the only one.
const WithdrawalMethodPIX = "PIX"

// Payout is what a merchant asks for when it withdraws.
type Payout struct {
	Amount       Cents
	Fee          Cents
	PixKey       PixKey
	ExternalCode string
	WebhookURL   string
	Payer        *AccountHolder // the merchant's side, as the acquirer knows it
	Receiver     *AccountHolder // the owner of PixKey, as the PIX directory resolved it
}

// Withdrawal is a PIX payout of a merchant's balance and its lifecycle. Build it with
// NewWithdrawal; storage adapters rebuild it with UnmarshalWithdrawalFromDatabase and record
// their writes with MarkStored. Getters return copies (see clone.go).
type Withdrawal struct {
	id              string
	accountID       string
	acquirer        string
	payout          Payout
	idempotency     Idempotency
	createdAt       time.Time
	status          WithdrawalStatus
	history         []StatusEntry[WithdrawalStatus]
	amountWithdrawn *Cents
	processedDate   *time.Time
	errorMessage    string
	endToEnd        string
	dispatch        payoutDispatch
	version         int64
	events          []Event
	postings        []Posting
}

// NewWithdrawal starts a withdrawal in PENDING.
func NewWithdrawal(id, accountID, acquirer string, p Payout, idem Idempotency, now time.Time) (*Withdrawal, error) {
	if id == "" || accountID == "" || acquirer == "" {
		return nil, fmt.Errorf("%w: id, account and acquirer are required", ErrInvalidOrder)
	}
	if _, err := NewAmount(int64(p.Amount)); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidOrder, err)
	}
	if p.Fee < 0 {
		return nil, fmt.Errorf("%w: negative fee", ErrInvalidOrder)
	}
	key, err := NewPixKey(p.PixKey.Type, p.PixKey.Key)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidOrder, err)
	}
	p.PixKey = key
	now = now.UTC().Truncate(time.Millisecond)
	w := &Withdrawal{
		id: id, accountID: accountID, acquirer: acquirer, payout: p.clone(), idempotency: idem,
		createdAt: now, status: WdPending,
		history: []StatusEntry[WithdrawalStatus]{{Status: WdPending, Date: now}},
		// Its payout is due at once (withdrawal_payout.go).
		dispatch: payoutDispatch{due: &now},
	}
	// The money leaves available when the withdrawal is created; the ledger stores it only if
	// the available balance covers it.
	w.post(MoveWithdrawal, LedgerAvailable, LedgerPayouts, true)
	return w, nil
}

// post raises the ledger movement of the transition that just wrote the last history entry:
// the withdrawal's amount and fee, leaving or coming back.
func (w *Withdrawal) post(kind MovementType, debit, credit LedgerAccount, checked bool) {
	w.postings = append(w.postings, Posting{
		ID: postingID(w.id, len(w.history)-1, kind), Type: kind, AccountID: w.accountID,
		Resource: ResourceWithdrawal, ResourceID: w.id, Debit: debit, Credit: credit,
		Amount: w.Total(), Checked: checked, At: w.UpdatedAt(),
	})
}

// WithdrawalRecord is everything a storage adapter keeps of a withdrawal.
type WithdrawalRecord struct {
	ID, AccountID, Acquirer string
	Payout                  Payout
	Idempotency             Idempotency
	CreatedAt               time.Time
	Status                  WithdrawalStatus
	History                 []StatusEntry[WithdrawalStatus]
	AmountWithdrawn         *Cents
	ProcessedDate           *time.Time
	ErrorMessage            string
	EndToEnd                string
	// PayoutDue and PayoutClaims are where the sending of its payout stands (see
	// Withdrawal.PayoutDue and Withdrawal.PayoutClaims).
	PayoutDue    *time.Time
	PayoutClaims int
	Version      int64
}

// UnmarshalWithdrawalFromDatabase rebuilds a stored withdrawal. It should be used only by
// storage adapters, for records this program wrote itself: it does not validate (the adapter
// checks the status it read with ParseWithdrawalStatus). The withdrawal shares what r points
// at, which neither side may change afterwards (see clone.go).
func UnmarshalWithdrawalFromDatabase(r WithdrawalRecord) *Withdrawal {
	return &Withdrawal{
		id: r.ID, accountID: r.AccountID, acquirer: r.Acquirer, payout: r.Payout,
		idempotency: r.Idempotency, createdAt: r.CreatedAt.UTC(), status: r.Status,
		history: slices.Clone(r.History), amountWithdrawn: r.AmountWithdrawn, processedDate: r.ProcessedDate,
		errorMessage: r.ErrorMessage, endToEnd: r.EndToEnd, version: r.Version,
		dispatch: payoutDispatch{due: r.PayoutDue, claims: r.PayoutClaims},
	}
}

// Record is the withdrawal as a storage adapter keeps it. It is meant for storage adapters
// only, and shares what it points at with the withdrawal: neither side may change it.
func (w *Withdrawal) Record() WithdrawalRecord {
	return WithdrawalRecord{
		ID: w.id, AccountID: w.accountID, Acquirer: w.acquirer, Payout: w.payout,
		Idempotency: w.idempotency, CreatedAt: w.createdAt, Status: w.status,
		History: slices.Clone(w.history), AmountWithdrawn: w.amountWithdrawn,
		ProcessedDate: w.processedDate, ErrorMessage: w.errorMessage, EndToEnd: w.endToEnd,
		PayoutDue: w.dispatch.due, PayoutClaims: w.dispatch.claims, Version: w.version,
	}
}

func (w *Withdrawal) ID() string                               { return w.id }
func (w *Withdrawal) AccountID() string                        { return w.accountID }
func (w *Withdrawal) Acquirer() string                         { return w.acquirer }
func (w *Withdrawal) Payout() Payout                           { return w.payout.clone() }
func (w *Withdrawal) Amount() Cents                            { return w.payout.Amount }
func (w *Withdrawal) Fee() Cents                               { return w.payout.Fee }
func (w *Withdrawal) Idempotency() Idempotency                 { return w.idempotency }
func (w *Withdrawal) CreatedAt() time.Time                     { return w.createdAt }
func (w *Withdrawal) Status() WithdrawalStatus                 { return w.status }
func (w *Withdrawal) History() []StatusEntry[WithdrawalStatus] { return slices.Clone(w.history) }
func (w *Withdrawal) AmountWithdrawn() *Cents                  { return clonePtr(w.amountWithdrawn) }
func (w *Withdrawal) ProcessedDate() *time.Time                { return clonePtr(w.processedDate) }
func (w *Withdrawal) ErrorMessage() string                     { return w.errorMessage }
func (w *Withdrawal) EndToEnd() string                         { return w.endToEnd }
func (w *Withdrawal) UpdatedAt() time.Time                     { return w.history[len(w.history)-1].Date }
func (w *Withdrawal) Version() int64                           { return w.version }

// Total is what the withdrawal takes out of the balance: amount plus fee.
func (w *Withdrawal) Total() Cents { return w.payout.Amount + w.payout.Fee }

// Events returns the events raised since the withdrawal was built, loaded or stored, oldest
// first.
func (w *Withdrawal) Events() []Event { return slices.Clone(w.events) }

// Postings returns the ledger movements raised since the withdrawal was built, loaded or
// stored.
func (w *Withdrawal) Postings() []Posting { return slices.Clone(w.postings) }

// MarkStored is for storage adapters only, and the only way the version changes: the adapter
// that writes the withdrawal, with its events and postings in the same write, records the
// version it wrote, and the withdrawal forgets the events and postings stored with it.
func (w *Withdrawal) MarkStored(version int64) {
	w.version, w.events, w.postings = version, nil, nil
}

// move applies one trigger of the state table (history.go's move), posts the money's return
// when the withdrawal stops holding it, and raises its event.
func (w *Withdrawal) move(from, to WithdrawalStatus, now time.Time, apply func()) error {
	if err := move(ResourceWithdrawal, &w.status, &w.history, from, to, WithdrawalCanMove, now, apply); err != nil {
		return err
	}
	if !to.payoutLive() {
		// Nothing is left to send or to read back.
		w.dispatch.due = nil
	}
	if !to.HoldsMoney() {
		w.post(MoveWithdrawalReversal, LedgerPayouts, LedgerAvailable, false)
	}
	if w.payout.WebhookURL != "" {
		snap := *w
		snap.history = slices.Clone(w.history)
		snap.events, snap.postings = nil, nil
		w.events = append(w.events, Event{
			ID: NewID(), Type: EventType(ResourceWithdrawal, string(to)),
			AccountID: w.accountID, ResourceID: w.id, Kind: ResourceWithdrawal,
			WebhookURL: w.payout.WebhookURL, CreatedAt: w.UpdatedAt(), Withdrawal: &snap,
		})
	}
	return nil
}

// StartProcessing hands the payout to the acquirer: PENDING → PROCESSING.
func (w *Withdrawal) StartProcessing(now time.Time) error {
	return w.move(WdPending, WdProcessing, now, func() {})
}

// Cancel withdraws the request before processing: PENDING → CANCELED, only while its payout
// has never been claimed for sending (PayoutClaims is 0): once it may have reached the PSP, the
// PSP's answer decides, and a cancel is refused with an *InvalidTransitionError that says why.
func (w *Withdrawal) Cancel(now time.Time) error {
	if w.status == WdPending && w.dispatch.claims > 0 {
		return &InvalidTransitionError{Resource: string(ResourceWithdrawal), From: string(w.status), To: string(WdCanceled),
			Reason: "its payout has been sent to the PSP, whose answer decides"}
	}
	return w.move(WdPending, WdCanceled, now, func() {})
}

// Complete records the acquirer's confirmation: PROCESSING → PROCESSED.
func (w *Withdrawal) Complete(endToEnd string, now time.Time) error {
	return w.move(WdProcessing, WdProcessed, now, func() {
		amount, at := w.payout.Amount, now.UTC().Truncate(time.Millisecond)
		w.amountWithdrawn, w.processedDate, w.endToEnd = &amount, &at, endToEnd
	})
}

// Fail records a processing error: PROCESSING → FAILED.
func (w *Withdrawal) Fail(message string, now time.Time) error {
	return w.move(WdProcessing, WdFailed, now, func() { w.errorMessage = message })
}

// RefusePayout records that the PSP refused the payout request itself (a bad key, no funds at
// the PSP...), so that nothing was paid: PENDING → FAILED with the PSP's reason.
func (w *Withdrawal) RefusePayout(message string, now time.Time) error {
	return w.move(WdPending, WdFailed, now, func() { w.errorMessage = message })
}

// Reject records the gateway's refusal: PROCESSING → REJECTED.
func (w *Withdrawal) Reject(message string, now time.Time) error {
	return w.move(WdProcessing, WdRejected, now, func() { w.errorMessage = message })
}

// Refund records that the receiving institution returned the money: PROCESSED → REFUNDED.
func (w *Withdrawal) Refund(now time.Time) error {
	return w.move(WdProcessed, WdRefunded, now, func() {})
}
