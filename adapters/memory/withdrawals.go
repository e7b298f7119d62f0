package memory

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/pixgate/pixgate/domain"
	"github.com/pixgate/pixgate/ports"
)

var _ ports.WithdrawalRepository = (*Withdrawals)(nil)

// Withdrawals is the ports.WithdrawalRepository of a Store; get it with Store.Withdrawals.
type Withdrawals struct{ store *Store }

// CreateReserving implements ports.WithdrawalRepository. The duplicate checks come before
// check, so that a request repeated with its idempotency key learns that its withdrawal exists
// rather than that the balance, which the withdrawal itself used, is short. check runs under
// the store's lock and must not call the store. CreateReserving records version 1 on w and
// clears the events it stored.
func (r *Withdrawals) CreateReserving(ctx context.Context, w *domain.Withdrawal, check func(domain.Balance) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if w == nil || check == nil {
		return errors.New("memory: nil withdrawal or check")
	}
	rec, events := w.Record(), w.Events()
	s := r.store
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.wdByID[rec.ID]; ok {
		return fmt.Errorf("withdrawal %s: %w", rec.ID, ports.ErrDuplicate)
	}
	l := s.ledgerOf(rec.AccountID, false)
	if key := rec.Idempotency.Key; key != "" && l != nil && l.wdByKey[key] != nil {
		return fmt.Errorf("withdrawal idempotency key: %w", ports.ErrDuplicate)
	}
	if err := s.events.admit(events); err != nil {
		return err
	}
	var balance domain.Balance
	if l != nil {
		balance = l.totals.Balance()
	}
	if err := check(balance); err != nil {
		return err
	}

	rec.Version = 1
	stored := new(domain.WithdrawalRecord)
	*stored = ownWithdrawal(rec)
	s.wdByID[stored.ID] = stored
	indexStatus(s.wdByStatus, stored.ID, "", stored.Status, stored)
	l = s.ledgerOf(stored.AccountID, true)
	if key := stored.Idempotency.Key; key != "" {
		if l.wdByKey == nil {
			l.wdByKey = make(map[string]*domain.WithdrawalRecord)
		}
		l.wdByKey[key] = stored
	}
	l.countWithdrawal(stored, 1)
	s.events.add(events, nil)

	w.SetVersion(1)
	w.ClearEvents()
	return nil
}

// Get implements ports.WithdrawalRepository.
func (r *Withdrawals) Get(ctx context.Context, accountID, id string) (*domain.Withdrawal, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s := r.store
	s.mu.RLock()
	defer s.mu.RUnlock()
	rec := s.wdByID[id]
	if rec == nil || rec.AccountID != accountID {
		return nil, fmt.Errorf("withdrawal %s: %w", id, domain.ErrNotFound)
	}
	return withdrawalOut(rec), nil
}

// GetByIdempotencyKey implements ports.WithdrawalRepository.
func (r *Withdrawals) GetByIdempotencyKey(ctx context.Context, accountID, key string) (*domain.Withdrawal, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s := r.store
	s.mu.RLock()
	defer s.mu.RUnlock()
	var rec *domain.WithdrawalRecord
	if l := s.ledgerOf(accountID, false); l != nil && key != "" {
		rec = l.wdByKey[key]
	}
	if rec == nil {
		return nil, fmt.Errorf("withdrawal with idempotency key: %w", domain.ErrNotFound)
	}
	return withdrawalOut(rec), nil
}

// Update implements ports.WithdrawalRepository, as Transactions.Update does.
func (r *Withdrawals) Update(ctx context.Context, accountID, id string, fn func(*domain.Withdrawal) error) (*domain.Withdrawal, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s := r.store
	s.mu.Lock()
	defer s.mu.Unlock()
	stored := s.wdByID[id]
	if stored == nil || stored.AccountID != accountID {
		return nil, fmt.Errorf("withdrawal %s: %w", id, domain.ErrNotFound)
	}
	working := withdrawalOut(stored)
	if err := fn(working); err != nil {
		return nil, err
	}
	rec, events := working.Record(), working.Events()
	if rec.ID != stored.ID || rec.AccountID != stored.AccountID || !rec.CreatedAt.Equal(stored.CreatedAt) ||
		rec.Idempotency != stored.Idempotency {
		return nil, fmt.Errorf("memory: the update of withdrawal %s changed its identity", id)
	}
	if err := s.events.admit(events); err != nil {
		return nil, err
	}

	rec.Version = stored.Version + 1
	l := s.ledgerOf(accountID, false)
	l.countWithdrawal(stored, -1)
	indexStatus(s.wdByStatus, id, stored.Status, rec.Status, stored)
	*stored = ownWithdrawal(rec)
	l.countWithdrawal(stored, 1)
	s.events.add(events, nil)
	return withdrawalOut(stored), nil
}

// ListByStatus implements ports.WithdrawalRepository.
func (r *Withdrawals) ListByStatus(ctx context.Context, status domain.WithdrawalStatus, until time.Time, limit int) ([]*domain.Withdrawal, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s := r.store
	s.mu.RLock()
	defer s.mu.RUnlock()
	var found []*domain.WithdrawalRecord
	for _, rec := range s.wdByStatus[status] {
		if !lastDate(rec.History).After(until) {
			found = append(found, rec)
		}
	}
	slices.SortFunc(found, func(a, b *domain.WithdrawalRecord) int {
		if c := lastDate(a.History).Compare(lastDate(b.History)); c != 0 {
			return c
		}
		return cmp.Compare(a.ID, b.ID)
	})
	out := make([]*domain.Withdrawal, 0, max(0, min(limit, len(found))))
	for _, rec := range found[:cap(out)] {
		out = append(out, withdrawalOut(rec))
	}
	return out, nil
}

// Balance implements ports.WithdrawalRepository from the account's running totals. An account
// without transactions or withdrawals has a zero balance.
func (r *Withdrawals) Balance(ctx context.Context, accountID string) (domain.Balance, error) {
	if err := ctx.Err(); err != nil {
		return domain.Balance{}, err
	}
	s := r.store
	s.mu.RLock()
	defer s.mu.RUnlock()
	l := s.ledgerOf(accountID, false)
	if l == nil {
		return domain.Balance{}, nil
	}
	return l.totals.Balance(), nil
}
