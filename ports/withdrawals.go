package ports

import (
	"context"
	"time"

	"github.com/pixgate/pixgate/domain"
)

// WithdrawalRepository stores withdrawals with the events their transitions raised, and
// derives balances from the stored transactions and withdrawals.
//
// Every method is safe for concurrent use; errors as TransactionRepository's.
type WithdrawalRepository interface {
	// CreateReserving stores w, a new withdrawal, only when check accepts the balance of w's
	// account as it stands without w. Concurrent reservations of one account are serialised:
	// two withdrawals can never both pass check on the same money. check's error is returned
	// unchanged and nothing is stored. ErrDuplicate as TransactionRepository.Create, decided
	// before check runs: a retried request whose first attempt spent the balance must find its
	// withdrawal (a replay), not an insufficient balance.
	CreateReserving(ctx context.Context, w *domain.Withdrawal, check func(domain.Balance) error) error

	// Get returns one withdrawal of the account.
	Get(ctx context.Context, accountID, id string) (*domain.Withdrawal, error)

	// GetByIdempotencyKey returns the account's withdrawal created with key.
	GetByIdempotencyKey(ctx context.Context, accountID, key string) (*domain.Withdrawal, error)

	// Update is TransactionRepository.Update for withdrawals.
	Update(ctx context.Context, accountID, id string, fn func(*domain.Withdrawal) error) (*domain.Withdrawal, error)

	// ListByStatus returns up to limit withdrawals of any account in status whose last status
	// change happened at or before until, oldest first (the sandbox settles payouts with it).
	ListByStatus(ctx context.Context, status domain.WithdrawalStatus, until time.Time, limit int) ([]*domain.Withdrawal, error)

	// Balance derives the account's balance from its stored transactions and withdrawals.
	Balance(ctx context.Context, accountID string) (domain.Balance, error)
}

// Pinger reports whether a store answers; /readyz asks it. Ping answers nil or ErrUnavailable.
type Pinger interface {
	Ping(ctx context.Context) error
}
