package ports

import (
	"context"
	"time"

	"github.com/pixgate/pixgate/domain"
)

// WithdrawalRepository stores withdrawals with the events and ledger postings their
// transitions raised.
//
// Every method is safe for concurrent use; errors as TransactionRepository's.
type WithdrawalRepository interface {
	// Create stores w, a new withdrawal, and posts its withdrawal entry, only when the
	// account's available balance covers its amount and fee; otherwise it answers
	// domain.ErrInsufficientBalance and stores nothing. Withdrawals, refunds and every other
	// movement of one account are serialised by the ledger: two of them can never pass the
	// check on the same money. ErrDuplicate as TransactionRepository.Create, decided before the
	// balance is checked: a retried request whose first attempt spent the balance must find its
	// withdrawal (a replay), not an insufficient balance. Once stored, Create calls
	// w.MarkStored(1), as TransactionRepository.Create does.
	Create(ctx context.Context, w *domain.Withdrawal) error

	// Get returns one withdrawal of the account.
	Get(ctx context.Context, accountID, id string) (*domain.Withdrawal, error)

	// GetByIdempotencyKey returns the account's withdrawal created with key.
	GetByIdempotencyKey(ctx context.Context, accountID, key string) (*domain.Withdrawal, error)

	// Find returns a withdrawal whatever its account. It exists for the PSP's notifications of
	// payouts and the payout outbox, never for a merchant's request.
	Find(ctx context.Context, id string) (*domain.Withdrawal, error)

	// Update is TransactionRepository.Update for withdrawals. Two updates of one withdrawal
	// never run at once, from any number of processes: the payout outbox's claim
	// (domain.Withdrawal.ClaimPayout) and a merchant's cancel rely on it to serialise.
	Update(ctx context.Context, accountID, id string, fn func(*domain.Withdrawal) error) (*domain.Withdrawal, error)

	// ListPayoutsDue returns up to limit withdrawals of any account whose payout is due
	// (domain.Withdrawal.PayoutDue) at or before until, the earliest due first (then by id),
	// for the payout outbox. The look-up is by an index on the due time, which holds only the
	// withdrawals whose payout is not done: its cost does not grow with the withdrawals paid
	// out long ago.
	ListPayoutsDue(ctx context.Context, until time.Time, limit int) ([]*domain.Withdrawal, error)

	// ListByAccount returns one page of the account's withdrawals, oldest first (audits walk
	// them).
	ListByAccount(ctx context.Context, accountID string, p Page) ([]*domain.Withdrawal, error)
}

// Pinger reports whether a store answers; /readyz asks it. Ping answers nil or ErrUnavailable.
type Pinger interface {
	Ping(ctx context.Context) error
}
