package memory

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/pixgate/pixgate/domain"
	"github.com/pixgate/pixgate/ports"
)

var _ ports.TransactionRepository = (*Transactions)(nil)

// Transactions is the ports.TransactionRepository of a Store; get it with Store.Transactions.
type Transactions struct{ store *Store }

// Create implements ports.TransactionRepository. It records version 1 on t and clears the
// events it stored.
func (r *Transactions) Create(ctx context.Context, t *domain.Transaction) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if t == nil {
		return errors.New("memory: nil transaction")
	}
	rec, events := t.Record(), t.Events()
	s := r.store
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.txByID[rec.ID]; ok {
		return fmt.Errorf("transaction %s: %w", rec.ID, ports.ErrDuplicate)
	}
	if _, ok := s.txByToken[rec.PaymentToken]; ok && rec.PaymentToken != "" {
		return fmt.Errorf("transaction payment token: %w", ports.ErrDuplicate)
	}
	if err := s.pixLocationTaken(rec); err != nil {
		return err
	}
	if key := rec.Idempotency.Key; key != "" {
		if l := s.accountOf(rec.AccountID, false); l != nil && l.txByKey[key] != nil {
			return fmt.Errorf("transaction idempotency key: %w", ports.ErrDuplicate)
		}
	}
	if err := s.events.admit(events); err != nil {
		return err
	}
	if err := s.apply(t.Postings(), rec.CreatedAt); err != nil {
		return err
	}

	rec.Version = 1
	stored := new(domain.TransactionRecord)
	*stored = rec
	s.txByID[stored.ID] = stored
	if stored.PaymentToken != "" {
		s.txByToken[stored.PaymentToken] = stored
	}
	s.indexPixLocation(stored)
	indexStatus(s.txByStatus, stored.ID, "", stored.Status, stored)
	l := s.accountOf(stored.AccountID, true)
	l.insert(stored)
	if key := stored.Idempotency.Key; key != "" {
		if l.txByKey == nil {
			l.txByKey = make(map[string]*domain.TransactionRecord)
		}
		l.txByKey[key] = stored
	}
	l.countPending(stored.Order.Amount, "", stored.Status)
	s.events.add(events)

	t.MarkStored(1)
	return nil
}

// Get implements ports.TransactionRepository.
func (r *Transactions) Get(ctx context.Context, accountID, id string) (*domain.Transaction, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s := r.store
	s.mu.RLock()
	defer s.mu.RUnlock()
	rec := s.txByID[id]
	if rec == nil || rec.AccountID != accountID {
		return nil, fmt.Errorf("transaction %s: %w", id, domain.ErrNotFound)
	}
	return domain.UnmarshalTransactionFromDatabase(*rec), nil
}

// GetByIdempotencyKey implements ports.TransactionRepository.
func (r *Transactions) GetByIdempotencyKey(ctx context.Context, accountID, key string) (*domain.Transaction, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s := r.store
	s.mu.RLock()
	defer s.mu.RUnlock()
	var rec *domain.TransactionRecord
	if l := s.accountOf(accountID, false); l != nil && key != "" {
		rec = l.txByKey[key]
	}
	if rec == nil {
		return nil, fmt.Errorf("transaction with idempotency key: %w", domain.ErrNotFound)
	}
	return domain.UnmarshalTransactionFromDatabase(*rec), nil
}

// Find implements ports.TransactionRepository.
func (r *Transactions) Find(ctx context.Context, id string) (*domain.Transaction, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s := r.store
	s.mu.RLock()
	defer s.mu.RUnlock()
	rec := s.txByID[id]
	if rec == nil {
		return nil, fmt.Errorf("transaction %s: %w", id, domain.ErrNotFound)
	}
	return domain.UnmarshalTransactionFromDatabase(*rec), nil
}

// FindByPaymentToken implements ports.TransactionRepository with one map look-up.
func (r *Transactions) FindByPaymentToken(ctx context.Context, token string) (*domain.Transaction, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s := r.store
	s.mu.RLock()
	defer s.mu.RUnlock()
	rec := s.txByToken[token]
	if rec == nil || token == "" {
		return nil, fmt.Errorf("transaction by payment token: %w", domain.ErrNotFound)
	}
	return domain.UnmarshalTransactionFromDatabase(*rec), nil
}

// List implements ports.TransactionRepository. It scans the account's transactions from the
// newest, within the dates of f, copying those of the page and counting the rest; a filter on
// the id reads one transaction.
func (r *Transactions) List(ctx context.Context, f ports.TransactionFilter, p ports.Page) (ports.TransactionPage, error) {
	if err := ctx.Err(); err != nil {
		return ports.TransactionPage{}, err
	}
	skip, p := p.Skip(), p.Clamped()
	page := ports.TransactionPage{Items: make([]*domain.Transaction, 0, min(p.Size, 100))}

	s := r.store
	s.mu.RLock()
	defer s.mu.RUnlock()
	rows := s.rowsOf(&f)
	if unfiltered(&f) {
		// Every row matches: the count is known and the page is a slice of the rows.
		page.Total = len(rows)
		for i := len(rows) - 1 - skip; i >= 0 && len(page.Items) < p.Size; i-- {
			page.Items = append(page.Items, domain.UnmarshalTransactionFromDatabase(*rows[i].rec))
		}
		return page, nil
	}
	for i := len(rows) - 1; i >= 0; i-- {
		if !matches(&f, &rows[i]) {
			continue
		}
		if page.Total >= skip && len(page.Items) < p.Size {
			page.Items = append(page.Items, domain.UnmarshalTransactionFromDatabase(*rows[i].rec))
		}
		page.Total++
	}
	return page, nil
}

// rowsOf returns the part of the account's sorted transactions that f's id and dates allow.
func (s *Store) rowsOf(f *ports.TransactionFilter) []txRow {
	if f.ID != "" {
		rec := s.txByID[f.ID]
		if rec == nil || rec.AccountID != f.AccountID || f.StartDate != nil && rec.CreatedAt.Before(*f.StartDate) ||
			f.EndDate != nil && rec.CreatedAt.After(*f.EndDate) {
			return nil
		}
		return []txRow{rowOf(rec)}
	}
	l := s.accountOf(f.AccountID, false)
	if l == nil {
		return nil
	}
	rows := l.txs
	if f.EndDate != nil {
		end := *f.EndDate
		rows = rows[:sort.Search(len(rows), func(i int) bool { return rows[i].rec.CreatedAt.After(end) })]
	}
	if f.StartDate != nil {
		start := *f.StartDate
		rows = rows[sort.Search(len(rows), func(i int) bool { return !rows[i].rec.CreatedAt.Before(start) }):]
	}
	return rows
}

// Update implements ports.TransactionRepository. fn runs under the store's lock, on a copy
// that replaces the stored transaction only when fn succeeds; it must not call the store. The
// lock serialises writers, so the version read is always the version replaced: no conflict
// can happen and fn runs once.
func (r *Transactions) Update(ctx context.Context, accountID, id string, fn func(*domain.Transaction) error) (*domain.Transaction, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s := r.store
	s.mu.Lock()
	defer s.mu.Unlock()
	stored := s.txByID[id]
	if stored == nil || stored.AccountID != accountID {
		return nil, fmt.Errorf("transaction %s: %w", id, domain.ErrNotFound)
	}
	working := domain.UnmarshalTransactionFromDatabase(*stored)
	if err := fn(working); err != nil {
		return nil, err
	}
	rec, events := working.Record(), working.Events()
	if rec.ID != stored.ID || rec.AccountID != stored.AccountID || !rec.CreatedAt.Equal(stored.CreatedAt) ||
		rec.Idempotency != stored.Idempotency || rec.PaymentToken != stored.PaymentToken || pixLocation(&rec) != pixLocation(stored) {
		return nil, fmt.Errorf("memory: the update of transaction %s changed its identity", id)
	}
	if err := s.events.admit(events); err != nil {
		return nil, err
	}
	if err := s.apply(working.Postings(), time.Now()); err != nil {
		return nil, err
	}

	rec.Version = stored.Version + 1
	l := s.accountOf(accountID, false)
	l.countPending(stored.Order.Amount, stored.Status, rec.Status)
	indexStatus(s.txByStatus, id, stored.Status, rec.Status, stored)
	// The record is replaced in place: every index and the sorted list point at it, and
	// createdAt and id, which place it in that list, never change.
	*stored = rec
	l.refresh(stored)
	s.events.add(events)
	return domain.UnmarshalTransactionFromDatabase(*stored), nil
}

// ListDevolutionsDue implements ports.TransactionRepository: it looks only at the
// transactions in a refund, the earliest due first.
func (r *Transactions) ListDevolutionsDue(ctx context.Context, until time.Time, limit int) ([]*domain.Transaction, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s := r.store
	s.mu.RLock()
	defer s.mu.RUnlock()
	type due struct {
		at  time.Time
		rec *domain.TransactionRecord
	}
	var found []due
	for _, rec := range s.txByStatus[domain.TxProcessingRefund] {
		for _, rf := range rec.Refunds {
			if rf.Status == domain.RefundProcessing && rf.Dispatch.Due != nil && !rf.Dispatch.Due.After(until) {
				found = append(found, due{*rf.Dispatch.Due, rec})
			}
		}
	}
	slices.SortFunc(found, func(a, b due) int {
		if c := a.at.Compare(b.at); c != 0 {
			return c
		}
		return cmp.Compare(a.rec.ID, b.rec.ID)
	})
	out := make([]*domain.Transaction, 0, max(0, min(limit, len(found))))
	for _, d := range found[:cap(out)] {
		out = append(out, domain.UnmarshalTransactionFromDatabase(*d.rec))
	}
	return out, nil
}

// ListExpired implements ports.TransactionRepository, soonest expired first.
func (r *Transactions) ListExpired(ctx context.Context, now time.Time, limit int) ([]*domain.Transaction, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s := r.store
	s.mu.RLock()
	defer s.mu.RUnlock()
	var found []*domain.TransactionRecord
	for _, rec := range s.txByStatus[domain.TxPixQRCodeGenerated] {
		if rec.Pix != nil && !now.Before(rec.Pix.ExpiresAt) {
			found = append(found, rec)
		}
	}
	slices.SortFunc(found, func(a, b *domain.TransactionRecord) int {
		if c := a.Pix.ExpiresAt.Compare(b.Pix.ExpiresAt); c != 0 {
			return c
		}
		return cmp.Compare(a.ID, b.ID)
	})
	return transactionsOut(found, limit), nil
}

// ListByStatus implements ports.TransactionRepository.
func (r *Transactions) ListByStatus(ctx context.Context, status domain.TransactionStatus, until time.Time, limit int) ([]*domain.Transaction, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s := r.store
	s.mu.RLock()
	defer s.mu.RUnlock()
	var found []*domain.TransactionRecord
	for _, rec := range s.txByStatus[status] {
		if !lastDate(rec.History).After(until) {
			found = append(found, rec)
		}
	}
	slices.SortFunc(found, func(a, b *domain.TransactionRecord) int {
		if c := lastDate(a.History).Compare(lastDate(b.History)); c != 0 {
			return c
		}
		return cmp.Compare(a.ID, b.ID)
	})
	return transactionsOut(found, limit), nil
}

func transactionsOut(recs []*domain.TransactionRecord, limit int) []*domain.Transaction {
	out := make([]*domain.Transaction, 0, max(0, min(limit, len(recs))))
	for _, rec := range recs[:cap(out)] {
		out = append(out, domain.UnmarshalTransactionFromDatabase(*rec))
	}
	return out
}

// lastDate is when the last status of a history was entered: the aggregate's UpdatedAt.
func lastDate[S ~string](h []domain.StatusEntry[S]) time.Time {
	if len(h) == 0 {
		return time.Time{}
	}
	return h[len(h)-1].Date
}
