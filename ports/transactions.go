package ports

import (
	"context"
	"math"
	"time"

	"github.com/pixgate/pixgate/domain"
)

// TransactionFilter selects the transactions of one account. Every set field must match
// (AND); zero fields select everything. Values arrive validated and normalised by the caller.
type TransactionFilter struct {
	AccountID        string // required: lists never cross accounts
	StartDate        *time.Time
	EndDate          *time.Time // inclusive, like StartDate, on createdAt
	Statuses         []domain.TransactionStatus
	PaymentMethods   []domain.PaymentMethod
	CustomerEmail    string // exact, case-insensitive
	CustomerName     string // case-insensitive substring
	CustomerDocument string // the document's normalised value (domain.Document.Value)
	CustomerPhone    string // national digits; matches the landline or the mobile phone
	ID               string
	EndToEnd         string
	EndToEndRefund   string
	ExternalCode     string
	MinAmount        *domain.Cents // inclusive
	MaxAmount        *domain.Cents // inclusive
}

// Page asks for one page of a list: Number counts from 1, Size is at least 1. Every store reads
// a Number or a Size below 1 as 1 (Clamped), and answers a page past the end, however far, as
// an empty page.
type Page struct {
	Number int
	Size   int
}

// Clamped is p as stores read it: Number and Size at least 1.
func (p Page) Clamped() Page {
	return Page{Number: max(p.Number, 1), Size: max(p.Size, 1)}
}

// Skip is how many items come before the clamped page, math.MaxInt when that many would not
// fit in an int.
func (p Page) Skip() int {
	p = p.Clamped()
	if p.Number-1 > math.MaxInt/p.Size {
		return math.MaxInt
	}
	return (p.Number - 1) * p.Size
}

// TransactionPage is one page of a list and the number of transactions matching the filter.
type TransactionPage struct {
	Items []*domain.Transaction
	Total int
}

// TransactionRepository stores transactions, and in the same write the events their
// transitions raised (the outbox) and the ledger postings they raised: a status change, its
// notification and its entries are never separated.
//
// Every method is safe for concurrent use. Reads scoped to an account answer domain.ErrNotFound
// for another account's transaction exactly as for a missing one. A store that cannot be
// reached answers ErrUnavailable. Aggregates returned are the caller's own copies.
type TransactionRepository interface {
	// Create stores a new transaction and its raised events. It answers ErrDuplicate when the
	// id exists, when another transaction has the same payment token, or when the account already has a transaction with the same non-empty
	// idempotency key (the caller then reads the winner with GetByIdempotencyKey). Once stored,
	// Create calls t.MarkStored(1): t is at version 1 and no longer holds the events and
	// postings stored with it.
	Create(ctx context.Context, t *domain.Transaction) error

	// Get returns one transaction of the account.
	Get(ctx context.Context, accountID, id string) (*domain.Transaction, error)

	// GetByIdempotencyKey returns the account's transaction created with key.
	GetByIdempotencyKey(ctx context.Context, accountID, key string) (*domain.Transaction, error)

	// Find returns a transaction whatever its account. It exists for the acquirer's
	// notifications and the background sweepers, never for a merchant's request.
	Find(ctx context.Context, id string) (*domain.Transaction, error)

	// FindByPaymentToken returns the transaction whose hosted payment page token is token,
	// whatever its account (the page is a capability URL: the token is the authority), or
	// domain.ErrNotFound. The look-up is by an index (never a scan), so an unknown token costs
	// what a known one does.
	FindByPaymentToken(ctx context.Context, token string) (*domain.Transaction, error)

	// FindByPixLocation returns the transaction whose dynamic charge has location id id,
	// whatever its account (the location is a capability URL), or domain.ErrNotFound. Like
	// FindByPaymentToken, the look-up is by an index, never a scan.
	FindByPixLocation(ctx context.Context, id string) (*domain.Transaction, error)

	// FindByCobTxID returns the transaction whose dynamic charge has txid txid, whatever its
	// account (for the acquirer's callback), or domain.ErrNotFound, through an index. Create
	// answers ErrDuplicate for a location id or a cob txid that another transaction has.
	FindByCobTxID(ctx context.Context, txid string) (*domain.Transaction, error)

	// List returns one page of the transactions matching f, ordered by createdAt descending,
	// then id descending. A page past the end has no items and the right Total.
	List(ctx context.Context, f TransactionFilter, p Page) (TransactionPage, error)

	// Update loads the account's transaction, applies fn and stores the result and the events
	// fn raised, all or nothing. The write is guarded by the version read, so two concurrent
	// changes never both win: on a conflict Update reloads and applies fn again (fn must be
	// free of side effects beyond the aggregate). An error from fn is returned unchanged and
	// nothing is stored. The postings fn raised are posted to the ledger with the change; when
	// a checked one (a refund) finds the available balance short, Update answers
	// domain.ErrInsufficientBalance and stores nothing. It returns the transaction as stored.
	Update(ctx context.Context, accountID, id string, fn func(*domain.Transaction) error) (*domain.Transaction, error)

	// ListExpired returns up to limit transactions of any account still awaiting payment
	// whose QR code expired at or before now.
	ListExpired(ctx context.Context, now time.Time, limit int) ([]*domain.Transaction, error)

	// ListDevolutionsDue returns up to limit transactions of any account whose refund in
	// progress has its devolution due at or before until (domain.Transaction.DevolutionDue),
	// the earliest first, through an index: never one whose refund is done.
	ListDevolutionsDue(ctx context.Context, until time.Time, limit int) ([]*domain.Transaction, error)

	// ListByStatus returns up to limit transactions of any account in status whose last
	// status change happened at or before until, oldest first (the sandbox settles refunds
	// with it).
	ListByStatus(ctx context.Context, status domain.TransactionStatus, until time.Time, limit int) ([]*domain.Transaction, error)
}
