package application_test

// Hand-written fakes of the ports the lifecycle use cases (sandbox, acquirer, creation and
// expiry) need. Their names start with "lc" so that they cannot collide with the fakes of other
// use cases in this package.

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/pixgate/pixgate/domain"
	"github.com/pixgate/pixgate/ports"
)

type lcClock struct {
	mu  sync.Mutex
	now time.Time
}

func newLcClock(at time.Time) *lcClock { return &lcClock{now: at} }

func (c *lcClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *lcClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

type lcIDs struct {
	mu sync.Mutex
	n  int
}

func (g *lcIDs) NewID() string {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.n++
	return fmt.Sprintf("1c000000-0000-4000-8000-%012d", g.n)
}

// lcTokens makes distinct payment page tokens, as readable as lcIDs' ids.
type lcTokens struct {
	mu sync.Mutex
	n  int
}

func (g *lcTokens) NewCapability() string {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.n++
	return fmt.Sprintf("lc-payment-token-%012d", g.n)
}

// lcEmitter writes a fake BR Code, or fails with err when set.
type lcEmitter struct{ err error }

func (e *lcEmitter) Acquirer() string { return "SANDBOX" }

func (e *lcEmitter) Emit(_ context.Context, c domain.PixCharge) (domain.PixCode, error) {
	if e.err != nil {
		return domain.PixCode{}, e.err
	}
	return domain.PixCode{URI: "000201-fake-code-of-" + c.TransactionID}, nil
}

type lcRenderer struct{}

func (lcRenderer) RenderPNG(_ context.Context, content string) ([]byte, error) {
	return []byte("\x89PNG" + content), nil
}

// lcTxIDs maps txids to transaction ids: the txid of a transaction is "tx" followed by its id
// without dashes, as far as this fake knows.
type lcTxIDs struct{}

func lcTxID(id string) string {
	out := []byte("tx")
	for i := 0; i < len(id); i++ {
		if id[i] != '-' {
			out = append(out, id[i])
		}
	}
	return string(out)
}

func (lcTxIDs) TransactionID(txid string) (string, error) {
	if len(txid) != 34 || txid[:2] != "tx" {
		return "", fmt.Errorf("txid %q: %w", txid, domain.ErrNotFound)
	}
	h := txid[2:]
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:], nil
}

// lcRepo is an in-memory ports.TransactionRepository with the optimistic concurrency of a
// real store: Update applies fn outside the lock on the version it read and writes only when
// the stored version is still that one, otherwise it reloads and applies fn again. Races in the
// tests therefore go through the same retries as on MongoDB.
type lcRepo struct {
	mu      sync.Mutex
	records map[string]domain.TransactionRecord
	events  []domain.Event
	// failUpdate, when it returns an error for an id, makes Update of that id fail with it.
	failUpdate func(id string) error
	// afterList runs after ListByStatus answered, to stage a change that makes the list stale.
	afterList func()
	conflicts int // version conflicts seen, for the tests that want races to have happened
}

var _ ports.TransactionRepository = (*lcRepo)(nil)

func newLcRepo() *lcRepo { return &lcRepo{records: map[string]domain.TransactionRecord{}} }

func (r *lcRepo) out(rec domain.TransactionRecord) *domain.Transaction {
	rec.History = slices.Clone(rec.History)
	return domain.UnmarshalTransactionFromDatabase(rec)
}

func (r *lcRepo) Create(_ context.Context, t *domain.Transaction) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.records[t.ID()]; ok {
		return ports.ErrDuplicate
	}
	for _, rec := range r.records {
		if k := t.Idempotency().Key; k != "" && rec.AccountID == t.AccountID() && rec.Idempotency.Key == k {
			return ports.ErrDuplicate
		}
		if rec.PaymentToken == t.PaymentToken() {
			return ports.ErrDuplicate
		}
	}
	rec := t.Record()
	rec.Version = 1
	r.records[t.ID()] = rec
	r.events = append(r.events, t.Events()...)
	t.MarkStored(1)
	return nil
}

func (r *lcRepo) Get(_ context.Context, accountID, id string) (*domain.Transaction, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	rec, ok := r.records[id]
	if !ok || rec.AccountID != accountID {
		return nil, fmt.Errorf("transaction %s: %w", id, domain.ErrNotFound)
	}
	return r.out(rec), nil
}

func (r *lcRepo) GetByIdempotencyKey(_ context.Context, accountID, key string) (*domain.Transaction, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, rec := range r.records {
		if rec.AccountID == accountID && rec.Idempotency.Key == key {
			return r.out(rec), nil
		}
	}
	return nil, domain.ErrNotFound
}

func (r *lcRepo) Find(_ context.Context, id string) (*domain.Transaction, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	rec, ok := r.records[id]
	if !ok {
		return nil, fmt.Errorf("transaction %s: %w", id, domain.ErrNotFound)
	}
	return r.out(rec), nil
}

func (r *lcRepo) FindByPaymentToken(_ context.Context, token string) (*domain.Transaction, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, rec := range r.records {
		if token != "" && rec.PaymentToken == token {
			return r.out(rec), nil
		}
	}
	return nil, fmt.Errorf("payment token: %w", domain.ErrNotFound)
}

func (r *lcRepo) List(context.Context, ports.TransactionFilter, ports.Page) (ports.TransactionPage, error) {
	return ports.TransactionPage{}, errors.New("lcRepo: List is not used by the lifecycle tests")
}

func (r *lcRepo) Update(ctx context.Context, accountID, id string, fn func(*domain.Transaction) error) (*domain.Transaction, error) {
	for range 100 {
		r.mu.Lock()
		rec, ok := r.records[id]
		fail := r.failUpdate
		r.mu.Unlock()
		if !ok || rec.AccountID != accountID {
			return nil, fmt.Errorf("transaction %s: %w", id, domain.ErrNotFound)
		}
		if fail != nil {
			if err := fail(id); err != nil {
				return nil, err
			}
		}
		working := r.out(rec)
		if err := fn(working); err != nil {
			return nil, err
		}
		runtime.Gosched() // let concurrent writers interleave between the read and the write
		r.mu.Lock()
		if r.records[id].Version != rec.Version {
			r.conflicts++
			r.mu.Unlock()
			continue
		}
		next := working.Record()
		next.Version = rec.Version + 1
		r.records[id] = next
		r.events = append(r.events, working.Events()...)
		r.mu.Unlock()
		working.MarkStored(next.Version)
		return working, nil
	}
	return nil, ports.ErrVersionConflict
}

func (r *lcRepo) ListExpired(_ context.Context, now time.Time, limit int) ([]*domain.Transaction, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []*domain.Transaction
	for _, rec := range r.records {
		if t := r.out(rec); t.Expired(now) {
			out = append(out, t)
		}
	}
	return out[:min(limit, len(out))], nil
}

func (r *lcRepo) ListByStatus(_ context.Context, status domain.TransactionStatus, until time.Time, limit int) ([]*domain.Transaction, error) {
	r.mu.Lock()
	var out []*domain.Transaction
	for _, rec := range r.records {
		if t := r.out(rec); t.Status() == status && !t.UpdatedAt().After(until) {
			out = append(out, t)
		}
	}
	after := r.afterList
	r.mu.Unlock()
	slices.SortFunc(out, func(a, b *domain.Transaction) int {
		return cmp.Or(a.UpdatedAt().Compare(b.UpdatedAt()), cmp.Compare(a.ID(), b.ID()))
	})
	if after != nil {
		after()
	}
	return out[:min(limit, len(out))], nil
}

// stored returns the stored transaction whatever its account.
func (r *lcRepo) stored(id string) *domain.Transaction {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.out(r.records[id])
}

// eventTypes lists the types of the events stored for id, oldest first.
func (r *lcRepo) eventTypes(id string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, e := range r.events {
		if e.ResourceID == id {
			out = append(out, e.Type)
		}
	}
	return out
}

// lcLedger is the ledger's payment registry and the service's own postings, in memory; the
// merchants' entries are the store's business, which these use-case tests leave to the
// conformance suite.
type lcLedger struct {
	ports.Ledger // the methods these tests never reach
	mu           sync.Mutex
	claims       map[string]ports.PaymentClaim
	posted       []domain.Posting
}

func newLcLedger() *lcLedger { return &lcLedger{claims: map[string]ports.PaymentClaim{}} }

func (l *lcLedger) ClaimPayment(_ context.Context, c ports.PaymentClaim) (ports.PaymentClaim, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if prior, ok := l.claims[c.EndToEndID]; ok {
		return prior, nil
	}
	l.claims[c.EndToEndID] = c
	return c, nil
}

func (l *lcLedger) MarkLate(_ context.Context, e2e string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	c, ok := l.claims[e2e]
	if !ok {
		return domain.ErrNotFound
	}
	c.Late = true
	l.claims[e2e] = c
	return nil
}

func (l *lcLedger) Post(_ context.Context, postings ...domain.Posting) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, p := range postings {
		if !slices.ContainsFunc(l.posted, func(q domain.Posting) bool { return q.ID == p.ID }) {
			l.posted = append(l.posted, p)
		}
	}
	return nil
}

func (l *lcLedger) Scan(_ context.Context, account string, fn func(domain.Entry) error) error {
	l.mu.Lock()
	posted := slices.Clone(l.posted)
	l.mu.Unlock()
	for i, p := range posted {
		if p.AccountID == account {
			if err := fn(domain.Entry{Posting: p, Seq: int64(i + 1)}); err != nil {
				return err
			}
		}
	}
	return nil
}

func (l *lcLedger) postingTypes() []domain.MovementType {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []domain.MovementType
	for _, p := range l.posted {
		out = append(out, p.Type)
	}
	return out
}

// lcAcquirer records the devolutions asked for and answers with answer (in progress by
// default).
type lcAcquirer struct {
	mu     sync.Mutex
	asked  []ports.Devolution
	answer ports.DevolutionResult
	err    error
}

func (a *lcAcquirer) RequestDevolution(_ context.Context, d ports.Devolution) (ports.DevolutionResult, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.asked = append(a.asked, d)
	if a.answer.Status == "" {
		return ports.DevolutionResult{Status: ports.DevolutionInProgress}, a.err
	}
	return a.answer, a.err
}
