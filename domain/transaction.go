package domain

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"time"
)

// TransactionStatus is a status of the transaction state machine (docs/API.md, States and transitions).
type TransactionStatus string

const (
	TxPending              TransactionStatus = "PENDING"
	TxPixQRCodeGenerated   TransactionStatus = "PIX_QRCODE_GENERATED"
	TxPaid                 TransactionStatus = "PAID"
	TxProcessingRefund     TransactionStatus = "PROCESSING_REFUND"
	TxProcessingInfraction TransactionStatus = "PROCESSING_INFRACTION"
	TxRefunded             TransactionStatus = "REFUNDED"
	TxInfraction           TransactionStatus = "INFRACTION"
	TxFailed               TransactionStatus = "FAILED"
	TxBlocked              TransactionStatus = "BLOCKED"
)

// TransactionStatuses lists every transaction status.
func TransactionStatuses() []TransactionStatus {
	return []TransactionStatus{TxPending, TxPixQRCodeGenerated, TxPaid, TxProcessingRefund,
		TxProcessingInfraction, TxRefunded, TxInfraction, TxFailed, TxBlocked}
}

// ParseTransactionStatus accepts exactly one of TransactionStatuses.
func ParseTransactionStatus(s string) (TransactionStatus, error) {
	if slices.Contains(TransactionStatuses(), TransactionStatus(s)) {
		return TransactionStatus(s), nil
	}
	return "", fmt.Errorf("unknown transaction status %q", s)
}

// Final tells whether no transition leaves s.
func (s TransactionStatus) Final() bool {
	return s == TxRefunded || s == TxInfraction || s == TxFailed
}

// transactionMoves is the transaction state table (docs/API.md, States and transitions).
var transactionMoves = map[TransactionStatus][]TransactionStatus{
	TxPending:              {TxPixQRCodeGenerated, TxFailed},
	TxPixQRCodeGenerated:   {TxPaid, TxFailed},
	TxPaid:                 {TxProcessingRefund, TxBlocked},
	TxProcessingRefund:     {TxRefunded, TxPaid},
	TxBlocked:              {TxPaid, TxProcessingInfraction},
	TxProcessingInfraction: {TxInfraction},
}

// TransactionCanMove tells whether the state table allows from → to.
func TransactionCanMove(from, to TransactionStatus) bool {
	return slices.Contains(transactionMoves[from], to)
}

// PaymentMethod is how a transaction is paid; PIX is the only one.
type PaymentMethod string

const PaymentPIX PaymentMethod = "PIX"

// Expiration bounds of the PIX QR code, in seconds.
const (
	MinExpirationSeconds     = 60
	MaxExpirationSeconds     = 86400
	DefaultExpirationSeconds = 1800
)

// MaxItems bounds the items of one transaction.
const MaxItems = 100

// ExpiredMessage is the errorMessage of a transaction whose QR code expired unpaid.
const ExpiredMessage = "PIX QR code expired"

// Customer is the payer data a merchant gives at creation. Phones hold national digits.
type Customer struct {
	IP          string
	Name        string
	Email       string
	Document    Document
	Landline    string
	MobilePhone string
	Birthdate   string // YYYY-MM-DD; accepted, never returned
}

// Seller is the seller data a merchant gives at creation.
type Seller struct {
	Name     string
	Document Document
}

// Address is the customer's address; ZipCode holds 8 digits.
type Address struct {
	ZipCode, Number, Street, Neighborhood, City, State, Country, Complement string
}

// Item is one product of a sale.
type Item struct {
	Title       string
	Description string
	UnitPrice   Cents
	Quantity    int
}

// Order is what a merchant asked for when creating a transaction. It never changes afterwards,
// nor does anything it points at inside the transaction: NewTransaction keeps a copy, and
// Transaction.Order hands out copies.
// The HTTP adapter validates its shape; NewTransaction enforces the invariants money depends on.
type Order struct {
	Amount            Cents
	PaymentMethod     PaymentMethod
	WebhookURL        string
	ExternalCode      string
	Customer          *Customer
	Seller            *Seller
	IsInfoProduct     bool
	Address           *Address
	Items             []Item
	Metadata          []byte // a JSON object, compact, as the merchant sent it; nil when absent
	ExpirationSeconds int
}

// Idempotency is the idempotency key a transaction or withdrawal was created with, and the
// fingerprint of the request that created it.
type Idempotency struct {
	Key         string
	Fingerprint string
}

// Payment is what the acquirer reports when a charge is paid.
type Payment struct {
	AmountPaid Cents
	PaidAt     time.Time
	EndToEnd   string
	Payer      *AccountHolder
	Receiver   *AccountHolder
	Fee        Cents
}

// Transaction is a PIX charge of a merchant and its lifecycle. Build it with NewTransaction;
// storage adapters rebuild it with UnmarshalTransactionFromDatabase and record their writes
// with MarkStored. Transitions append to the status history and raise events; any transition
// the state table does not allow returns an *InvalidTransitionError and changes nothing.
// Getters return copies (see clone.go): changing what they return changes nothing.
type Transaction struct {
	id             string
	paymentToken   string
	accountID      string
	acquirer       string
	order          Order
	idempotency    Idempotency
	createdAt      time.Time
	status         TransactionStatus
	history        []StatusEntry[TransactionStatus]
	pix            *PixResponse
	amountPaid     *Cents
	paymentDate    *time.Time
	infractionDate *time.Time
	errorMessage   string
	endToEnd       string
	endToEndRefund string
	payer          *AccountHolder
	receiver       *AccountHolder
	feeAmount      *Cents
	refunds        []Refund
	version        int64
	events         []Event
	postings       []Posting
}

// ErrInvalidOrder reports an order that breaks an invariant of the domain.
var ErrInvalidOrder = errors.New("invalid order")

// NewTransaction starts a transaction in PENDING. paymentToken is the capability of its hosted
// payment page (ValidPaymentToken, never the id).
func NewTransaction(id, paymentToken, accountID, acquirer string, order Order, idem Idempotency, now time.Time) (*Transaction, error) {
	if id == "" || accountID == "" || acquirer == "" {
		return nil, fmt.Errorf("%w: id, account and acquirer are required", ErrInvalidOrder)
	}
	if !ValidPaymentToken(paymentToken) || paymentToken == id {
		return nil, fmt.Errorf("%w: the payment token must be %d to %d characters [A-Za-z0-9_-] and not the id",
			ErrInvalidOrder, MinPaymentTokenLength, MaxPaymentTokenLength)
	}
	if _, err := NewAmount(int64(order.Amount)); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidOrder, err)
	}
	if order.PaymentMethod != PaymentPIX {
		return nil, fmt.Errorf("%w: payment method %q", ErrInvalidOrder, order.PaymentMethod)
	}
	if order.ExpirationSeconds < MinExpirationSeconds || order.ExpirationSeconds > MaxExpirationSeconds {
		return nil, fmt.Errorf("%w: expiration of %d s", ErrInvalidOrder, order.ExpirationSeconds)
	}
	if !order.IsInfoProduct && order.Address == nil {
		return nil, fmt.Errorf("%w: a physical product needs an address", ErrInvalidOrder)
	}
	if len(order.Items) > MaxItems {
		return nil, fmt.Errorf("%w: more than %d items", ErrInvalidOrder, MaxItems)
	}
	for _, it := range order.Items {
		if _, err := NewAmount(int64(it.UnitPrice)); err != nil || it.Quantity < 1 || it.Quantity > 100 {
			return nil, fmt.Errorf("%w: item %q", ErrInvalidOrder, it.Title)
		}
	}
	now = now.UTC().Truncate(time.Millisecond)
	return &Transaction{
		id: id, paymentToken: paymentToken, accountID: accountID, acquirer: acquirer, order: order.clone(),
		idempotency: idem, createdAt: now, status: TxPending,
		history: []StatusEntry[TransactionStatus]{{Status: TxPending, Date: now}},
	}, nil
}

// TransactionRecord is everything a storage adapter keeps of a transaction.
type TransactionRecord struct {
	ID, AccountID, Acquirer string
	PaymentToken            string
	Order                   Order
	Idempotency             Idempotency
	CreatedAt               time.Time
	Status                  TransactionStatus
	History                 []StatusEntry[TransactionStatus]
	Pix                     *PixResponse
	AmountPaid              *Cents
	PaymentDate             *time.Time
	InfractionDate          *time.Time
	ErrorMessage            string
	EndToEnd                string
	EndToEndRefund          string
	Payer, Receiver         *AccountHolder
	FeeAmount               *Cents
	Refunds                 []Refund // oldest first
	Version                 int64
}

// UnmarshalTransactionFromDatabase rebuilds a stored transaction. It should be used only by
// storage adapters, for records this program wrote itself: it does not validate (the adapter
// checks the status it read with ParseTransactionStatus). The transaction shares what r points at (the order, the PIX data),
// which neither side may change afterwards (see clone.go).
func UnmarshalTransactionFromDatabase(r TransactionRecord) *Transaction {
	return &Transaction{
		id: r.ID, paymentToken: r.PaymentToken, accountID: r.AccountID, acquirer: r.Acquirer, order: r.Order,
		idempotency: r.Idempotency, createdAt: r.CreatedAt.UTC(), status: r.Status,
		history: slices.Clone(r.History), pix: r.Pix, amountPaid: r.AmountPaid, paymentDate: r.PaymentDate,
		infractionDate: r.InfractionDate, errorMessage: r.ErrorMessage, endToEnd: r.EndToEnd,
		endToEndRefund: r.EndToEndRefund, payer: r.Payer, receiver: r.Receiver,
		feeAmount: r.FeeAmount, refunds: slices.Clone(r.Refunds), version: r.Version,
	}
}

// Record is the transaction as a storage adapter keeps it. It is meant for storage adapters
// only, and shares what it points at with the transaction: neither side may change it.
func (t *Transaction) Record() TransactionRecord {
	return TransactionRecord{
		ID: t.id, PaymentToken: t.paymentToken, AccountID: t.accountID, Acquirer: t.acquirer, Order: t.order,
		Idempotency: t.idempotency, CreatedAt: t.createdAt, Status: t.status,
		History: slices.Clone(t.history), Pix: t.pix, AmountPaid: t.amountPaid,
		PaymentDate: t.paymentDate, InfractionDate: t.infractionDate,
		ErrorMessage: t.errorMessage, EndToEnd: t.endToEnd, EndToEndRefund: t.endToEndRefund,
		Payer: t.payer, Receiver: t.receiver, FeeAmount: t.feeAmount, Refunds: cloneRefunds(t.refunds),
		Version: t.version,
	}
}

func (t *Transaction) ID() string                                { return t.id }
func (t *Transaction) AccountID() string                         { return t.accountID }
func (t *Transaction) PaymentToken() string                      { return t.paymentToken }
func (t *Transaction) Acquirer() string                          { return t.acquirer }
func (t *Transaction) Order() Order                              { return t.order.clone() }
func (t *Transaction) Amount() Cents                             { return t.order.Amount }
func (t *Transaction) Idempotency() Idempotency                  { return t.idempotency }
func (t *Transaction) CreatedAt() time.Time                      { return t.createdAt }
func (t *Transaction) Status() TransactionStatus                 { return t.status }
func (t *Transaction) History() []StatusEntry[TransactionStatus] { return slices.Clone(t.history) }
func (t *Transaction) Pix() *PixResponse                         { return clonePix(t.pix) }

// PSPCharge is the charge the PSP made for t, or false when pixgate wrote t's code itself.
func (t *Transaction) PSPCharge() (PSPCharge, bool) {
	if t.pix == nil || t.pix.PSP.IsZero() {
		return PSPCharge{}, false
	}
	return t.pix.PSP, true
}
func (t *Transaction) AmountPaid() *Cents         { return clonePtr(t.amountPaid) }
func (t *Transaction) PaymentDate() *time.Time    { return clonePtr(t.paymentDate) }
func (t *Transaction) InfractionDate() *time.Time { return clonePtr(t.infractionDate) }
func (t *Transaction) ErrorMessage() string       { return t.errorMessage }
func (t *Transaction) EndToEnd() string           { return t.endToEnd }
func (t *Transaction) EndToEndRefund() string     { return t.endToEndRefund }
func (t *Transaction) Payer() *AccountHolder      { return clonePtr(t.payer) }
func (t *Transaction) Receiver() *AccountHolder   { return clonePtr(t.receiver) }
func (t *Transaction) FeeAmount() *Cents          { return clonePtr(t.feeAmount) }

// UpdatedAt is the date of the last status entered.
func (t *Transaction) UpdatedAt() time.Time { return t.history[len(t.history)-1].Date }

// Version counts the stored changes; storage adapters use it for optimistic concurrency.
func (t *Transaction) Version() int64 { return t.version }

// Events returns the events raised since the transaction was built, loaded or stored, oldest
// first.
func (t *Transaction) Events() []Event { return slices.Clone(t.events) }

// Postings returns the ledger movements raised since the transaction was built, loaded or
// stored.
func (t *Transaction) Postings() []Posting { return slices.Clone(t.postings) }

// MarkStored is for storage adapters only, and the only way the version changes: the adapter
// that writes the transaction, with its events and postings in the same write, records the
// version it wrote, and the transaction forgets the events and postings stored with it.
func (t *Transaction) MarkStored(version int64) {
	t.version, t.events, t.postings = version, nil, nil
}

// Expired tells whether the QR code of a transaction awaiting payment has expired at now.
func (t *Transaction) Expired(now time.Time) bool {
	return t.status == TxPixQRCodeGenerated && t.pix != nil && !now.Before(t.pix.ExpiresAt)
}

// move applies one trigger of the state table (history.go's move) and raises its event.
func (t *Transaction) move(from, to TransactionStatus, now time.Time, apply func()) error {
	if err := move(ResourceTransaction, &t.status, &t.history, from, to, TransactionCanMove, now, apply); err != nil {
		return err
	}
	if t.order.WebhookURL != "" {
		snap := *t
		snap.history = slices.Clone(t.history)
		snap.events, snap.postings = nil, nil
		snap.refunds = slices.Clone(t.refunds)
		t.events = append(t.events, Event{
			ID: NewID(), Type: EventType(ResourceTransaction, string(to)),
			AccountID: t.accountID, ResourceID: t.id, Kind: ResourceTransaction,
			WebhookURL: t.order.WebhookURL, CreatedAt: t.UpdatedAt(), Transaction: &snap,
		})
	}
	return nil
}

// AttachPix records the charge the emitter produced: PENDING → PIX_QRCODE_GENERATED.
func (t *Transaction) AttachPix(pix PixResponse, now time.Time) error {
	if err := pix.validate(t.id); err != nil {
		return err
	}
	return t.move(TxPending, TxPixQRCodeGenerated, now, func() {
		pix.ExpiresAt = pix.ExpiresAt.UTC()
		pix.PSP.CreatedAt = pix.PSP.CreatedAt.UTC()
		pix.QRCodePNG = bytes.Clone(pix.QRCodePNG)
		t.pix = &pix
	})
}

// FailEmission records that the emitter failed: PENDING → FAILED with the error's text. The
// transaction gives up its idempotency key: the merchant's retry with the same key must get a
// fresh attempt, not a replay of the failure.
func (t *Transaction) FailEmission(message string, now time.Time) error {
	return t.move(TxPending, TxFailed, now, func() {
		t.errorMessage = message
		t.idempotency = Idempotency{}
	})
}

// Pay records the acquirer's confirmation: PIX_QRCODE_GENERATED → PAID.
func (t *Transaction) Pay(p Payment, now time.Time) error {
	if t.status != TxPixQRCodeGenerated {
		return &InvalidTransitionError{Resource: string(ResourceTransaction), From: string(t.status), To: string(TxPaid)}
	}
	if p.AmountPaid < 1 || p.Fee < 0 || p.Fee > p.AmountPaid {
		return fmt.Errorf("%w: paid %d with fee %d", ErrInvalidOrder, p.AmountPaid, p.Fee)
	}
	err := t.move(TxPixQRCodeGenerated, TxPaid, now, func() {
		paid, fee, at := p.AmountPaid, p.Fee, p.PaidAt.UTC().Truncate(time.Millisecond)
		t.amountPaid, t.feeAmount, t.paymentDate = &paid, &fee, &at
		t.endToEnd, t.payer, t.receiver = p.EndToEnd, clonePtr(p.Payer), clonePtr(p.Receiver)
	})
	if err == nil {
		// The fee joins the payment's journal: the ledger records both in one step, so that no
		// debit ever sees the money paid without the fee charged on it.
		paid := t.post("", MovePayment, LedgerClearing, LedgerAvailable, p.AmountPaid, false)
		if p.Fee > 0 {
			t.post(paid, MoveFee, LedgerAvailable, LedgerFees, p.Fee, false)
		}
	}
	return err
}

// post raises the ledger movement of the transition that just wrote the last history entry,
// in the journal entry journal ("" starts one), and returns its id.
func (t *Transaction) post(journal string, kind MovementType, debit, credit LedgerAccount, amount Cents, checked bool) string {
	id := postingID(t.id, len(t.history)-1, kind)
	t.postings = append(t.postings, Posting{
		ID: id, Type: kind, AccountID: t.accountID,
		Resource: ResourceTransaction, ResourceID: t.id, Debit: debit, Credit: credit,
		Amount: amount, Checked: checked, At: t.UpdatedAt(), Journal: journal,
	})
	return id
}

// Expire fails an unpaid transaction whose QR code expired: PIX_QRCODE_GENERATED → FAILED.
func (t *Transaction) Expire(now time.Time) error {
	if t.status == TxPixQRCodeGenerated && !t.Expired(now) {
		if t.pix == nil {
			return fmt.Errorf("%w: the transaction has no QR code", ErrNotExpired)
		}
		return fmt.Errorf("%w: the QR code expires at %s", ErrNotExpired, t.pix.ExpiresAt.Format(time.RFC3339))
	}
	return t.move(TxPixQRCodeGenerated, TxFailed, now, func() { t.errorMessage = ExpiredMessage })
}

// ErrNotExpired refuses to expire a transaction whose QR code is still valid.
var ErrNotExpired = errors.New("not expired yet")

// OpenDispute blocks the funds of a paid transaction under MED: PAID → BLOCKED. The hold is
// the amount paid less what was refunded already, taken in full even when it leaves the
// merchant's available balance negative (a dispute is not the merchant's choice).
func (t *Transaction) OpenDispute(now time.Time) error {
	err := t.move(TxPaid, TxBlocked, now, func() {
		at := now.UTC().Truncate(time.Millisecond)
		t.infractionDate = &at
	})
	if err == nil {
		t.post("", MoveDisputeHold, LedgerAvailable, LedgerBlocked, t.Disputed(), false)
	}
	return err
}

// Disputed is what a MED dispute holds: the amount paid less the completed refunds.
func (t *Transaction) Disputed() Cents {
	if t.amountPaid == nil {
		return 0
	}
	return *t.amountPaid - t.AmountRefunded()
}

// RejectDispute releases the funds: BLOCKED → PAID.
func (t *Transaction) RejectDispute(now time.Time) error {
	err := t.move(TxBlocked, TxPaid, now, func() {})
	if err == nil {
		t.post("", MoveDisputeRelease, LedgerBlocked, LedgerAvailable, t.Disputed(), false)
	}
	return err
}

// AcceptDispute starts the MED refund: BLOCKED → PROCESSING_INFRACTION. The money stays
// blocked until the MED refund completes.
func (t *Transaction) AcceptDispute(now time.Time) error {
	return t.move(TxBlocked, TxProcessingInfraction, now, func() {})
}

// CompleteInfraction records the MED refund: PROCESSING_INFRACTION → INFRACTION; the blocked
// money leaves for the payer.
func (t *Transaction) CompleteInfraction(endToEndRefund string, now time.Time) error {
	err := t.move(TxProcessingInfraction, TxInfraction, now, func() { t.endToEndRefund = endToEndRefund })
	if err == nil {
		t.post("", MoveDisputeDebit, LedgerBlocked, LedgerClearing, t.Disputed(), false)
	}
	return err
}
