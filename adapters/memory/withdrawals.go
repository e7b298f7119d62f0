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

// Create implements ports.WithdrawalRepository. The duplicate checks come before the balance
// check, so that a request repeated with its idempotency key learns that its withdrawal exists
// rather than that the balance, which the withdrawal itself used, is short. The check and the
// withdrawal's entry are made under the store's lock, with the insert. Create records version 1
// on w and clears the events and postings it stored.
func (r *Withdrawals) Create(ctx context.Context, w *domain.Withdrawal) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if w == nil {
		return errors.New("memory: nil withdrawal")
	}
	rec, events := w.Record(), w.Events()
	s := r.store
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.wdByID[rec.ID]; ok {
		return fmt.Errorf("withdrawal %s: %w", rec.ID, ports.ErrDuplicate)
	}
	l := s.accountOf(rec.AccountID, false)
	if key := rec.Idempotency.Key; key != "" && l != nil && l.wdByKey[key] != nil {
		return fmt.Errorf("withdrawal idempotency key: %w", ports.ErrDuplicate)
	}
	if err := s.events.admit(events); err != nil {
		return err
	}
	if err := s.apply(w.Postings(), rec.CreatedAt); err != nil {
		return err
	}

	rec.Version = 1
	stored := new(domain.WithdrawalRecord)
	*stored = rec
	s.wdByID[stored.ID] = stored
	s.indexPayoutDue(stored)
	l = s.accountOf(stored.AccountID, true)
	if key := stored.Idempotency.Key; key != "" {
		if l.wdByKey == nil {
			l.wdByKey = make(map[string]*domain.WithdrawalRecord)
		}
		l.wdByKey[key] = stored
	}
	l.wds = append(l.wds, stored)
	s.events.add(events)

	w.MarkStored(1)
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
	return domain.UnmarshalWithdrawalFromDatabase(*rec), nil
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
	if l := s.accountOf(accountID, false); l != nil && key != "" {
		rec = l.wdByKey[key]
	}
	if rec == nil {
		return nil, fmt.Errorf("withdrawal with idempotency key: %w", domain.ErrNotFound)
	}
	return domain.UnmarshalWithdrawalFromDatabase(*rec), nil
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
	working := domain.UnmarshalWithdrawalFromDatabase(*stored)
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
	if err := s.apply(working.Postings(), time.Now()); err != nil {
		return nil, err
	}

	rec.Version = stored.Version + 1
	*stored = rec
	s.indexPayoutDue(stored)
	s.events.add(events)
	return domain.UnmarshalWithdrawalFromDatabase(*stored), nil
}

// Find implements ports.WithdrawalRepository.
func (r *Withdrawals) Find(ctx context.Context, id string) (*domain.Withdrawal, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s := r.store
	s.mu.RLock()
	defer s.mu.RUnlock()
	rec := s.wdByID[id]
	if rec == nil {
		return nil, fmt.Errorf("withdrawal %s: %w", id, domain.ErrNotFound)
	}
	return domain.UnmarshalWithdrawalFromDatabase(*rec), nil
}

// ListPayoutsDue implements ports.WithdrawalRepository: it reads the withdrawals whose payout
// is not done, never the others.
func (r *Withdrawals) ListPayoutsDue(ctx context.Context, until time.Time, limit int) ([]*domain.Withdrawal, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s := r.store
	s.mu.RLock()
	defer s.mu.RUnlock()
	var found []*domain.WithdrawalRecord
	for _, rec := range s.wdPayoutDue {
		if !rec.PayoutDue.After(until) {
			found = append(found, rec)
		}
	}
	slices.SortFunc(found, func(a, b *domain.WithdrawalRecord) int {
		if c := a.PayoutDue.Compare(*b.PayoutDue); c != 0 {
			return c
		}
		return cmp.Compare(a.ID, b.ID)
	})
	out := make([]*domain.Withdrawal, 0, max(0, min(limit, len(found))))
	for _, rec := range found[:cap(out)] {
		out = append(out, domain.UnmarshalWithdrawalFromDatabase(*rec))
	}
	return out, nil
}

// indexPayoutDue keeps rec in wdPayoutDue while its payout is not done. The caller holds the
// lock for writing.
func (s *Store) indexPayoutDue(rec *domain.WithdrawalRecord) {
	if rec.PayoutDue != nil {
		s.wdPayoutDue[rec.ID] = rec
	} else {
		delete(s.wdPayoutDue, rec.ID)
	}
}

// ListByAccount implements ports.WithdrawalRepository, in creation order.
func (r *Withdrawals) ListByAccount(ctx context.Context, accountID string, p ports.Page) ([]*domain.Withdrawal, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s := r.store
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := []*domain.Withdrawal{}
	l := s.accountOf(accountID, false)
	if l == nil {
		return out, nil
	}
	for i, size := p.Skip(), p.Clamped().Size; i < len(l.wds) && len(out) < size; i++ {
		out = append(out, domain.UnmarshalWithdrawalFromDatabase(*l.wds[i]))
	}
	return out, nil
}
