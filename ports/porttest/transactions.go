package porttest

import (
	"context"
	"time"

	"github.com/pixgate/pixgate/domain"
	"github.com/pixgate/pixgate/ports"
)

var _ ports.TransactionRepository = (*Transactions)(nil)

// Transactions is a ports.TransactionRepository that passes each call to Repo after its
// Faults.
type Transactions struct {
	Repo ports.TransactionRepository
	*Faults
}

// NewTransactions wraps repo with faults of its own.
func NewTransactions(repo ports.TransactionRepository) *Transactions {
	return &Transactions{Repo: repo, Faults: &Faults{}}
}

func (r *Transactions) Create(ctx context.Context, t *domain.Transaction) error {
	if err := r.enter(ctx, "Create"); err != nil {
		return err
	}
	return r.Repo.Create(ctx, t)
}

func (r *Transactions) Get(ctx context.Context, accountID, id string) (*domain.Transaction, error) {
	if err := r.enter(ctx, "Get"); err != nil {
		return nil, err
	}
	return r.Repo.Get(ctx, accountID, id)
}

func (r *Transactions) GetByIdempotencyKey(ctx context.Context, accountID, key string) (*domain.Transaction, error) {
	if err := r.enter(ctx, "GetByIdempotencyKey"); err != nil {
		return nil, err
	}
	return r.Repo.GetByIdempotencyKey(ctx, accountID, key)
}

func (r *Transactions) Find(ctx context.Context, id string) (*domain.Transaction, error) {
	if err := r.enter(ctx, "Find"); err != nil {
		return nil, err
	}
	return r.Repo.Find(ctx, id)
}

func (r *Transactions) FindByPaymentToken(ctx context.Context, token string) (*domain.Transaction, error) {
	if err := r.enter(ctx, "FindByPaymentToken"); err != nil {
		return nil, err
	}
	return r.Repo.FindByPaymentToken(ctx, token)
}

func (r *Transactions) FindByPixLocation(ctx context.Context, id string) (*domain.Transaction, error) {
	if err := r.enter(ctx, "FindByPixLocation"); err != nil {
		return nil, err
	}
	return r.Repo.FindByPixLocation(ctx, id)
}

func (r *Transactions) FindByCobTxID(ctx context.Context, txid string) (*domain.Transaction, error) {
	if err := r.enter(ctx, "FindByCobTxID"); err != nil {
		return nil, err
	}
	return r.Repo.FindByCobTxID(ctx, txid)
}

func (r *Transactions) List(ctx context.Context, f ports.TransactionFilter, p ports.Page) (ports.TransactionPage, error) {
	if err := r.enter(ctx, "List"); err != nil {
		return ports.TransactionPage{}, err
	}
	return r.Repo.List(ctx, f, p)
}

func (r *Transactions) Update(ctx context.Context, accountID, id string, fn func(*domain.Transaction) error) (*domain.Transaction, error) {
	if err := r.enter(ctx, "Update"); err != nil {
		return nil, err
	}
	return r.Repo.Update(ctx, accountID, id, fn)
}

func (r *Transactions) ListExpired(ctx context.Context, now time.Time, limit int) ([]*domain.Transaction, error) {
	if err := r.enter(ctx, "ListExpired"); err != nil {
		return nil, err
	}
	return r.Repo.ListExpired(ctx, now, limit)
}

func (r *Transactions) ListDevolutionsDue(ctx context.Context, until time.Time, limit int) ([]*domain.Transaction, error) {
	if err := r.enter(ctx, "ListDevolutionsDue"); err != nil {
		return nil, err
	}
	return r.Repo.ListDevolutionsDue(ctx, until, limit)
}

func (r *Transactions) ListByStatus(ctx context.Context, status domain.TransactionStatus, until time.Time, limit int) ([]*domain.Transaction, error) {
	if err := r.enter(ctx, "ListByStatus"); err != nil {
		return nil, err
	}
	return r.Repo.ListByStatus(ctx, status, until, limit)
}
