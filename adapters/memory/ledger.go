package memory

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/pixgate/pixgate/domain"
	"github.com/pixgate/pixgate/ports"
)

var _ ports.Ledger = (*Ledger)(nil)

// Ledger is the ports.Ledger of a Store; get it with Store.Ledger. Entries are kept per
// account in number order, which is also date order, so the balance is the last entry's, a
// page of the statement starts by index or binary search, and nothing ever scans history to
// answer a request.
type Ledger struct{ store *Store }

// apply records the postings of one status change, all or nothing: each journal entry among
// them (domain.Journals: a payment and its fee) is numbered, checked and applied by
// domain.NextJournal after everything before it, and nothing is appended until every one is
// accepted; when one is refused (a checked posting the balance does not cover) the error is
// returned and the ledgers are as they were. The caller holds the store's write lock, which
// every reader takes too, and stores the status change that raised the postings in the same
// critical section: no reader and no balance check ever sees some of a change's entries
// without the others, or without the change.
func (s *Store) apply(postings []domain.Posting, now time.Time) error {
	switch len(postings) {
	case 0:
		return nil
	case 1:
		// The common case (a status change moves one amount) needs no scratch space.
		p := postings[0]
		p.Journal = "" // a journal of one line, as domain.NextJournal names it
		l := s.accountOf(p.AccountID, true)
		e, err := domain.NextEntry(l.head(), p, now)
		if err != nil {
			return err
		}
		l.entries.append(e)
		return nil
	}
	next := make([]domain.Entry, 0, len(postings))
	for _, j := range domain.Journals(postings) {
		// The journals of one change may touch one ledger several times: each goes after the
		// lines this change numbered before it.
		var prev *domain.Entry
		for k := len(next) - 1; k >= 0 && prev == nil; k-- {
			if next[k].AccountID == j[0].AccountID {
				prev = &next[k]
			}
		}
		if prev == nil {
			if l := s.accountOf(j[0].AccountID, false); l != nil {
				prev = l.head()
			}
		}
		es, err := domain.NextJournal(prev, j, now)
		if err != nil {
			return err
		}
		next = append(next, es...)
	}
	for _, e := range next {
		l := s.accountOf(e.AccountID, true)
		l.entries.append(e)
	}
	return nil
}

// head is the account's latest entry, nil when it has none.
func (l *accountData) head() *domain.Entry {
	if l.entries.len() == 0 {
		return nil
	}
	return l.entries.at(l.entries.len() - 1)
}

// entryLog is an append-only list of entries kept in fixed-size chunks, so that appending to a
// ledger of a million entries never copies the ones already there (a slice would copy them all
// each time it grows), and an entry's address never changes.
type entryLog struct {
	chunks [][]domain.Entry
	n      int
}

const entryChunk = 4096

func (g *entryLog) append(e domain.Entry) {
	if g.n%entryChunk == 0 {
		g.chunks = append(g.chunks, make([]domain.Entry, 0, entryChunk))
	}
	last := len(g.chunks) - 1
	g.chunks[last] = append(g.chunks[last], e)
	g.n++
}

func (g *entryLog) len() int { return g.n }

func (g *entryLog) at(i int) *domain.Entry { return &g.chunks[i/entryChunk][i%entryChunk] }

// Balance implements ports.Ledger. An account without entries has a zero balance.
func (r *Ledger) Balance(ctx context.Context, accountID string) (domain.Balance, error) {
	if err := ctx.Err(); err != nil {
		return domain.Balance{}, err
	}
	s := r.store
	s.mu.RLock()
	defer s.mu.RUnlock()
	l := s.accountOf(accountID, false)
	if l == nil {
		return domain.Balance{}, nil
	}
	b := domain.Balance{Pending: l.pending}
	if h := l.head(); h != nil {
		b.Available, b.Blocked = h.BalanceAfter.Available, h.BalanceAfter.Blocked
	}
	return b, nil
}

// Entries implements ports.Ledger: it starts below f.Before by index and below f.EndDate by
// binary search, then walks back until it has limit matches or passes f.StartDate.
func (r *Ledger) Entries(ctx context.Context, f ports.EntryFilter, limit int) ([]domain.Entry, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	out := []domain.Entry{}
	if limit <= 0 {
		return out, nil
	}
	s := r.store
	s.mu.RLock()
	defer s.mu.RUnlock()
	l := s.accountOf(f.AccountID, false)
	if l == nil {
		return out, nil
	}
	end := l.entries.len()
	if f.Before > 0 {
		end = min(end, int(f.Before-1))
	}
	if f.EndDate != nil {
		end = min(end, sort.Search(end, func(i int) bool { return l.entries.at(i).CreatedAt.After(*f.EndDate) }))
	}
	for i := end - 1; i >= 0 && len(out) < limit; i-- {
		e := *l.entries.at(i)
		if f.StartDate != nil && e.CreatedAt.Before(*f.StartDate) {
			break
		}
		if len(f.Types) > 0 && !slices.Contains(f.Types, e.Type) {
			continue
		}
		out = append(out, e)
	}
	return out, nil
}

// Scan implements ports.Ledger. fn runs on a copy of the ledger taken under the lock, so it
// may call the store.
func (r *Ledger) Scan(ctx context.Context, accountID string, fn func(domain.Entry) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s := r.store
	s.mu.RLock()
	var entries []domain.Entry
	if l := s.accountOf(accountID, false); l != nil {
		entries = make([]domain.Entry, 0, l.entries.len())
		for i := range l.entries.len() {
			entries = append(entries, *l.entries.at(i))
		}
	}
	s.mu.RUnlock()
	for _, e := range entries {
		if err := fn(e); err != nil {
			return err
		}
	}
	return nil
}

// Ledgers implements ports.Ledger, in account id order.
func (r *Ledger) Ledgers(ctx context.Context) ([]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s := r.store
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := []string{}
	for id, l := range s.accounts {
		if l.entries.len() > 0 {
			out = append(out, id)
		}
	}
	slices.Sort(out)
	return out, nil
}

// Post implements ports.Ledger: each journal entry among postings in one step under the
// store's lock, skipping the postings stored already; a journal found partly stored has its
// missing postings recorded each on its own, as a store written before journals would need.
// It stops at the first journal refused, keeping those before it, and tells how many postings
// it stored.
func (r *Ledger) Post(ctx context.Context, postings ...domain.Posting) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	s := r.store
	s.mu.Lock()
	defer s.mu.Unlock()
	stored := 0
	for _, j := range domain.Journals(postings) {
		fresh := make([]domain.Posting, 0, len(j))
		for _, p := range j {
			if _, ok := s.posted[p.ID]; !ok && !slices.ContainsFunc(fresh, func(q domain.Posting) bool { return q.ID == p.ID }) {
				fresh = append(fresh, p)
			}
		}
		steps := [][]domain.Posting{fresh}
		if len(fresh) < len(j) {
			steps = steps[:0]
			for _, p := range fresh {
				steps = append(steps, []domain.Posting{p})
			}
		}
		for _, step := range steps {
			if err := s.apply(step, time.Now()); err != nil {
				return stored, fmt.Errorf("memory post: %w", err)
			}
			for _, p := range step {
				s.posted[p.ID] = struct{}{}
			}
			stored += len(step)
		}
	}
	return stored, nil
}

// ClaimPayment implements ports.Ledger.
func (r *Ledger) ClaimPayment(ctx context.Context, c ports.PaymentClaim) (ports.PaymentClaim, error) {
	if err := ctx.Err(); err != nil {
		return ports.PaymentClaim{}, err
	}
	s := r.store
	s.mu.Lock()
	defer s.mu.Unlock()
	if prior, ok := s.payments[c.EndToEndID]; ok {
		return cloneClaim(*prior), nil
	}
	c.CreatedAt = c.CreatedAt.UTC()
	c.Devolution.Due = utcMs(c.Devolution.Due)
	s.payments[c.EndToEndID] = &c
	return cloneClaim(c), nil
}

// MarkLate implements ports.Ledger.
func (r *Ledger) MarkLate(ctx context.Context, endToEndID string, due time.Time) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s := r.store
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.payments[endToEndID]
	if !ok {
		return fmt.Errorf("payment %s: %w", endToEndID, domain.ErrNotFound)
	}
	if !c.Late {
		c.Late, c.Devolution = true, domain.NewDevolutionDispatch(due)
	}
	return nil
}

// UpdateLateDevolution implements ports.Ledger: fn runs under the store's lock, on a copy, and
// only the devolution it leaves is kept.
func (r *Ledger) UpdateLateDevolution(ctx context.Context, endToEndID string, fn func(*ports.PaymentClaim) error) (ports.PaymentClaim, error) {
	if err := ctx.Err(); err != nil {
		return ports.PaymentClaim{}, err
	}
	s := r.store
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.payments[endToEndID]
	if !ok {
		return ports.PaymentClaim{}, fmt.Errorf("payment %s: %w", endToEndID, domain.ErrNotFound)
	}
	working := cloneClaim(*c)
	if err := fn(&working); err != nil {
		return ports.PaymentClaim{}, err
	}
	c.Devolution = working.Devolution
	c.Devolution.Due = utcMs(c.Devolution.Due)
	return cloneClaim(*c), nil
}

// LateDevolutionsDue implements ports.Ledger.
func (r *Ledger) LateDevolutionsDue(ctx context.Context, until time.Time, limit int) ([]ports.PaymentClaim, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s := r.store
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := []ports.PaymentClaim{}
	for _, c := range s.payments {
		if c.Late && c.Devolution.Due != nil && !c.Devolution.Due.After(until) {
			out = append(out, cloneClaim(*c))
		}
	}
	slices.SortFunc(out, func(a, b ports.PaymentClaim) int {
		if c := a.Devolution.Due.Compare(*b.Devolution.Due); c != 0 {
			return c
		}
		return cmp.Compare(a.EndToEndID, b.EndToEndID)
	})
	return out[:max(0, min(limit, len(out)))], nil
}

// cloneClaim copies c, sharing no memory with it.
func cloneClaim(c ports.PaymentClaim) ports.PaymentClaim {
	if c.Devolution.Due != nil {
		due := *c.Devolution.Due
		c.Devolution.Due = &due
	}
	return c
}

// utcMs is *t in UTC to the millisecond, as every store keeps times.
func utcMs(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	v := t.UTC().Truncate(time.Millisecond)
	return &v
}

// LatePayments implements ports.Ledger.
func (r *Ledger) LatePayments(ctx context.Context) ([]ports.PaymentClaim, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s := r.store
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := []ports.PaymentClaim{}
	for _, c := range s.payments {
		if c.Late {
			out = append(out, cloneClaim(*c))
		}
	}
	slices.SortFunc(out, func(a, b ports.PaymentClaim) int {
		if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
			return c
		}
		return cmp.Compare(a.EndToEndID, b.EndToEndID)
	})
	return out, nil
}

// Recover implements ports.Ledger: the memory store writes a status change and its entries
// under one lock, so a crash leaves nothing half done (it leaves nothing at all).
func (r *Ledger) Recover(ctx context.Context) (int, error) { return 0, ctx.Err() }
