package application_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/pixgate/pixgate/adapters/memory"
	"github.com/pixgate/pixgate/application"
	"github.com/pixgate/pixgate/domain"
	"github.com/pixgate/pixgate/ports"
)

// fakeReceived is the acquirer's listing of received PIX: what it holds, paged perPage at a
// time, and the queries it was asked; failPage makes that page's next query fail.
type fakeReceived struct {
	mu       sync.Mutex
	pix      []ports.ReceivedPix
	perPage  int
	failPage int // -1: none
	queries  []ports.ReceivedPixQuery
}

func (f *fakeReceived) ListReceivedPix(_ context.Context, q ports.ReceivedPixQuery) (ports.ReceivedPixPage, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.queries = append(f.queries, q)
	if q.Page == f.failPage {
		f.failPage = -1
		return ports.ReceivedPixPage{}, ports.ErrAcquirerUnavailable
	}
	var in []ports.ReceivedPix
	for _, p := range f.pix {
		if !p.PaidAt.Before(q.Start) && !p.PaidAt.After(q.End) {
			in = append(in, p)
		}
	}
	pages := max(1, (len(in)+f.perPage-1)/f.perPage)
	page := ports.ReceivedPixPage{Page: q.Page, Pages: pages}
	for i := q.Page * f.perPage; i < len(in) && i < (q.Page+1)*f.perPage; i++ {
		page.Pix = append(page.Pix, in[i])
	}
	return page, nil
}

type reconWorld struct {
	*lcWorld
	listing *fakeReceived
	state   *memory.Reconciliations
	told    []application.Reconciled
}

func newReconWorld(t *testing.T) *reconWorld {
	return &reconWorld{lcWorld: newLcWorld(t), listing: &fakeReceived{perPage: 2, failPage: -1}, state: memory.NewReconciliations()}
}

func (w *reconWorld) job(holder string) *application.ReconcileWithAcquirer {
	return application.NewReconcileWithAcquirer(w.listing, w.state, w.repo, w.acquirer(), w.clock,
		application.ReconcileSettings{Holder: holder}, func(r application.Reconciled) { w.told = append(w.told, r) })
}

// received is the listing's entry of the payment n.
func received(n application.PixNotification) ports.ReceivedPix {
	return ports.ReceivedPix{EndToEndID: n.EndToEndID, TxID: n.TxID, Amount: n.Amount, PaidAt: n.PaidAt}
}

func TestReconciliationPaysAChargeWhoseCallbackNeverCameOnce(t *testing.T) {
	w := newReconWorld(t)
	id := w.newTransaction(t)
	w.listing.pix = []ports.ReceivedPix{received(lcPayment(id))}
	w.clock.Advance(time.Minute)
	job := w.job("a")
	for pass := range 3 {
		changed, err := job.RunOnce(context.Background())
		if err != nil {
			t.Fatalf("pass %d: %v", pass, err)
		}
		if want := map[bool]int{true: 1, false: 0}[pass == 0]; changed != want {
			t.Fatalf("pass %d changed %d, want %d", pass, changed, want)
		}
		w.clock.Advance(time.Minute)
	}
	if tx := w.repo.stored(id); tx.Status() != domain.TxPaid || tx.EndToEnd() != lcE2E {
		t.Fatalf("the charge is %s (%s), want PAID by %s", tx.Status(), tx.EndToEnd(), lcE2E)
	}
	if n := countOf(w.repo.eventTypes(id), "transaction.paid"); n != 1 {
		t.Fatalf("%d transaction.paid events, want 1", n)
	}
	if len(w.told) != 1 || w.told[0].Result.TxID != fakeTxID(id) || w.told[0].Refund != nil {
		t.Fatalf("told %+v, want the one payment", w.told)
	}
	// The callback that comes after all changes nothing.
	if res := w.notify(t, lcPayment(id))[0]; res.Outcome != application.OutcomeAlreadyApplied {
		t.Fatalf("the late callback: %s", res.Outcome)
	}
}

func countOf(xs []string, x string) int {
	n := 0
	for _, v := range xs {
		if v == x {
			n++
		}
	}
	return n
}

func TestReconciliationWindows(t *testing.T) {
	w := newReconWorld(t)
	id := w.newTransaction(t) // created at lcStart, awaiting payment
	w.clock.Advance(3 * time.Hour)
	first := w.clock.Now()
	job := w.job("a")
	if _, err := job.RunOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	q := w.listing.queries[0]
	if created := w.repo.stored(id).CreatedAt(); !q.Start.Equal(created) || !q.End.Equal(first) {
		t.Fatalf("a new store's first pass asks %v to %v, want from the oldest charge awaiting payment (%v) to now (%v)", q.Start, q.End, created, first)
	}
	if st, _ := w.state.ReconciliationState(context.Background()); !st.Reached.Equal(first) || st.Holder != "" {
		t.Fatalf("state %+v, want reached %v and released", st, first)
	}
	w.clock.Advance(time.Minute)
	if _, err := job.RunOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	if q := w.listing.queries[1]; !q.Start.Equal(first.Add(-application.ReconcileOverlap)) || !q.End.Equal(w.clock.Now()) {
		t.Fatalf("the next pass asks %v to %v, want 10 minutes before the time reached (%v) to now", q.Start, q.End, first)
	}

	t.Run("without a charge awaiting payment the first pass looks back an hour", func(t *testing.T) {
		w := newReconWorld(t)
		if _, err := w.job("a").RunOnce(context.Background()); err != nil {
			t.Fatal(err)
		}
		if q := w.listing.queries[0]; !q.Start.Equal(w.clock.Now().Add(-time.Hour)) {
			t.Fatalf("starts at %v, want an hour ago", q.Start)
		}
	})
}

func TestReconciliationStoresTheTimeReachedOnlyOnceEveryPageApplied(t *testing.T) {
	w := newReconWorld(t)
	var ids []string
	for i := range 5 {
		id := w.newTransaction(t)
		n := lcPayment(id)
		n.EndToEndID = lcE2E[:31] + string(rune('a'+i))
		w.listing.pix = append(w.listing.pix, received(n))
		ids = append(ids, id)
	}
	w.clock.Advance(time.Minute)
	w.listing.failPage = 2 // pages of 2: the fifth payment's page fails
	job := w.job("a")
	if _, err := job.RunOnce(context.Background()); !errors.Is(err, ports.ErrAcquirerUnavailable) {
		t.Fatalf("a pass whose last page failed: %v", err)
	}
	st, _ := w.state.ReconciliationState(context.Background())
	if !st.Reached.IsZero() || st.Holder != "" {
		t.Fatalf("after a failed pass: %+v, want nothing reached and nobody holding", st)
	}
	if w.repo.stored(ids[3]).Status() != domain.TxPaid || w.repo.stored(ids[4]).Status() == domain.TxPaid {
		t.Fatalf("the pages before the failure apply, the failed one does not")
	}
	w.clock.Advance(time.Minute)
	changed, err := job.RunOnce(context.Background())
	if err != nil || changed != 1 {
		t.Fatalf("the next pass: %d changed, %v; want the one payment left", changed, err)
	}
	if st, _ := w.state.ReconciliationState(context.Background()); !st.Reached.Equal(w.clock.Now()) {
		t.Fatalf("reached %v, want %v", st.Reached, w.clock.Now())
	}
	for _, id := range ids {
		if n := countOf(w.repo.eventTypes(id), "transaction.paid"); n != 1 {
			t.Fatalf("%s: %d transaction.paid events", id, n)
		}
	}
}

func TestReconciliationRunsOnOneInstanceAtATime(t *testing.T) {
	w := newReconWorld(t)
	now := w.clock.Now()
	if ok, _ := w.state.HoldReconciliation(context.Background(), "other", now, now.Add(time.Minute)); !ok {
		t.Fatal("hold")
	}
	if changed, err := w.job("a").RunOnce(context.Background()); err != nil || changed != 0 || len(w.listing.queries) != 0 {
		t.Fatalf("while another instance holds it: %d, %v, %d queries; want nothing asked", changed, err, len(w.listing.queries))
	}
	w.clock.Advance(2 * time.Minute) // the other instance died: its hold runs out
	if _, err := w.job("a").RunOnce(context.Background()); err != nil || len(w.listing.queries) != 1 {
		t.Fatalf("once the hold ran out: %v, %d queries", err, len(w.listing.queries))
	}
}

func TestExpiryWaitsForTheReconciliationToCoverIt(t *testing.T) {
	w := newReconWorld(t)
	w.expire.AfterReconciliation(w.state)
	id := w.newTransaction(t) // expires 1800 s after lcStart
	w.clock.Advance(1800*time.Second + time.Minute)
	if moved, err := w.expire.RunOnce(context.Background()); err != nil || moved != 0 {
		t.Fatalf("before any pass: moved %d, %v; want none", moved, err)
	}
	// The PSP accepted the payment a second before the expiry; its callback was lost.
	paid := lcPayment(id)
	paid.PaidAt = lcStart.Add(1799 * time.Second)
	w.listing.pix = []ports.ReceivedPix{received(paid)}
	if _, err := w.job("a").RunOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	if moved, _ := w.expire.RunOnce(context.Background()); moved != 0 || w.repo.stored(id).Status() != domain.TxPaid {
		t.Fatalf("the charge is %s, want PAID by reconciliation, not expired", w.repo.stored(id).Status())
	}
	unpaid := w.newTransaction(t)
	w.clock.Advance(1800*time.Second + time.Minute)
	if moved, _ := w.expire.RunOnce(context.Background()); moved != 0 {
		t.Fatalf("expired before a pass covered its expiry")
	}
	if _, err := w.job("a").RunOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	if moved, err := w.expire.RunOnce(context.Background()); err != nil || moved != 1 || w.repo.stored(unpaid).Status() != domain.TxFailed {
		t.Fatalf("once covered: moved %d, %v; want the unpaid charge FAILED", moved, err)
	}
}
