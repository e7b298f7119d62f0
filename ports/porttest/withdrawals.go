package porttest

import (
	"context"
	"time"

	"github.com/pixgate/pixgate/domain"
	"github.com/pixgate/pixgate/ports"
)

var _ ports.WithdrawalRepository = (*Withdrawals)(nil)

// Withdrawals is a ports.WithdrawalRepository that passes each call to Repo after its Faults.
type Withdrawals struct {
	Repo ports.WithdrawalRepository
	*Faults
}

// NewWithdrawals wraps repo with faults of its own.
func NewWithdrawals(repo ports.WithdrawalRepository) *Withdrawals {
	return &Withdrawals{Repo: repo, Faults: &Faults{}}
}

func (r *Withdrawals) Create(ctx context.Context, w *domain.Withdrawal) error {
	if err := r.enter(ctx, "Create"); err != nil {
		return err
	}
	return r.Repo.Create(ctx, w)
}

func (r *Withdrawals) Get(ctx context.Context, accountID, id string) (*domain.Withdrawal, error) {
	if err := r.enter(ctx, "Get"); err != nil {
		return nil, err
	}
	return r.Repo.Get(ctx, accountID, id)
}

func (r *Withdrawals) GetByIdempotencyKey(ctx context.Context, accountID, key string) (*domain.Withdrawal, error) {
	if err := r.enter(ctx, "GetByIdempotencyKey"); err != nil {
		return nil, err
	}
	return r.Repo.GetByIdempotencyKey(ctx, accountID, key)
}

func (r *Withdrawals) Find(ctx context.Context, id string) (*domain.Withdrawal, error) {
	if err := r.enter(ctx, "Find"); err != nil {
		return nil, err
	}
	return r.Repo.Find(ctx, id)
}

func (r *Withdrawals) Update(ctx context.Context, accountID, id string, fn func(*domain.Withdrawal) error) (*domain.Withdrawal, error) {
	if err := r.enter(ctx, "Update"); err != nil {
		return nil, err
	}
	return r.Repo.Update(ctx, accountID, id, fn)
}

func (r *Withdrawals) ListPayoutsDue(ctx context.Context, until time.Time, limit int) ([]*domain.Withdrawal, error) {
	if err := r.enter(ctx, "ListPayoutsDue"); err != nil {
		return nil, err
	}
	return r.Repo.ListPayoutsDue(ctx, until, limit)
}

func (r *Withdrawals) ListByAccount(ctx context.Context, accountID string, p ports.Page) ([]*domain.Withdrawal, error) {
	if err := r.enter(ctx, "ListByAccount"); err != nil {
		return nil, err
	}
	return r.Repo.ListByAccount(ctx, accountID, p)
}
