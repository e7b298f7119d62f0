package storage_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pixgate/pixgate/adapters/pix"
	"github.com/pixgate/pixgate/application"
	"github.com/pixgate/pixgate/domain"
	"github.com/pixgate/pixgate/ports"
)

// wallClock is the system's clock: holds run out by it.
type wallClock struct{}

func (wallClock) Now() time.Time { return time.Now().UTC() }

// noDevolutions refuses every devolution: nothing here pays a charge it should not.
type noDevolutions struct{}

func (noDevolutions) RequestDevolution(context.Context, ports.Devolution) (ports.DevolutionResult, error) {
	return ports.DevolutionResult{}, ports.ErrAcquirerUnavailable
}

func (noDevolutions) Devolution(context.Context, string, string) (ports.DevolutionResult, error) {
	return ports.DevolutionResult{}, ports.ErrAcquirerUnavailable
}

// sharedListing is the PSP's listing both instances read. It counts the passes listing at
// once (a pass lists page 0 first and its last page last), and the most ever seen.
type sharedListing struct {
	mu       sync.Mutex
	pix      []ports.ReceivedPix
	inFlight atomic.Int32
	most     atomic.Int32
}

func (l *sharedListing) ListReceivedPix(_ context.Context, q ports.ReceivedPixQuery) (ports.ReceivedPixPage, error) {
	if q.Page == 0 {
		n := l.inFlight.Add(1)
		for {
			m := l.most.Load()
			if n <= m || l.most.CompareAndSwap(m, n) {
				break
			}
		}
	}
	time.Sleep(2 * time.Millisecond) // a PSP's answer takes a while: passes would overlap
	l.mu.Lock()
	defer l.mu.Unlock()
	const perPage = 3
	pages := max(1, (len(l.pix)+perPage-1)/perPage)
	page := ports.ReceivedPixPage{Page: q.Page, Pages: pages}
	for i := q.Page * perPage; i < len(l.pix) && i < (q.Page+1)*perPage; i++ {
		page.Pix = append(page.Pix, l.pix[i])
	}
	if q.Page+1 >= pages {
		l.inFlight.Add(-1)
	}
	return page, nil
}

// storePorts are the ports of one instance the use case needs.
type storePorts struct {
	tx     ports.TransactionRepository
	ledger ports.Ledger
}

// TestTwoInstancesReconcileOnePassAtATime runs the reconciliation of two instances on one
// database, again and again at once: one pass at a time holds it (on FerretDB through the
// write claims), and every payment the listing shows is applied once.
func TestTwoInstancesReconcileOnePassAtATime(t *testing.T) {
	t.Parallel()
	a, b := twoInstances(t, nil)
	ctx := ctxTimeout(t, 3*time.Minute)
	listing := &sharedListing{}
	now := time.Now().UTC()
	var ids []string
	for i := range 7 {
		tx, err := domain.NewTransaction(newID(), newPaymentToken(), "acct-recon", "APIPIX", domain.Order{
			Amount: 1000, PaymentMethod: domain.PaymentPIX, IsInfoProduct: true, ExpirationSeconds: 3600,
		}, domain.Idempotency{}, now.Add(-time.Minute))
		if err != nil {
			t.Fatal(err)
		}
		if err := tx.AttachPix(domain.PixResponse{URI: "000201" + tx.ID(), QRCodePNG: []byte("\x89PNG"), ExpiresAt: now.Add(time.Hour)}, now.Add(-time.Minute)); err != nil {
			t.Fatal(err)
		}
		if err := a.Transactions().Create(ctx, tx); err != nil {
			t.Fatal(err)
		}
		txid, err := pix.TxIDFromTransactionID(tx.ID())
		if err != nil {
			t.Fatal(err)
		}
		listing.pix = append(listing.pix, ports.ReceivedPix{EndToEndID: "E12345678202611281000recon" + string(rune('a'+i)) + "00000"[:5],
			TxID: txid, Amount: 1000, PaidAt: now.Add(-30 * time.Second)})
		ids = append(ids, tx.ID())
	}
	var applied atomic.Int32
	jobs := make([]*application.ReconcileWithAcquirer, 0, 4)
	for i, st := range []ports.Reconciliations{a.Reconciliations(), b.Reconciliations(), a.Reconciliations(), b.Reconciliations()} {
		store := []storePorts{{a.Transactions(), a.Ledger()}, {b.Transactions(), b.Ledger()}}[i%2]
		devolutions := application.NewSendDevolutions(store.tx, store.ledger, noDevolutions{}, wallClock{},
			application.DevolutionSettings{CheckEvery: time.Minute, Claim: time.Minute}, func(application.DevolutionReport) {})
		notes := application.NewApplyPixNotifications(store.tx, store.ledger, devolutions, pix.TxIDDecoder{}, wallClock{},
			domain.FeePolicy{}, nil, func(application.LatePayment) {})
		jobs = append(jobs, application.NewReconcileWithAcquirer(listing, st, store.tx, notes, wallClock{},
			application.ReconcileSettings{Holder: "instance-" + string(rune('a'+i))}, func(application.Reconciled) { applied.Add(1) }))
	}
	for round := range 5 {
		var wg sync.WaitGroup
		for _, j := range jobs {
			wg.Go(func() {
				if _, err := j.RunOnce(ctx); err != nil {
					t.Errorf("round %d: %v", round, err)
				}
			})
		}
		wg.Wait()
	}
	if most := listing.most.Load(); most != 1 {
		t.Fatalf("%d passes listed at once, want one at a time", most)
	}
	if n := applied.Load(); n != int32(len(ids)) {
		t.Fatalf("%d payments applied by the passes, want each of the %d once", n, len(ids))
	}
	for _, id := range ids {
		tx, err := b.Transactions().Find(ctx, id)
		if err != nil || tx.Status() != domain.TxPaid {
			t.Fatalf("%s: %v %v", id, tx.Status(), err)
		}
	}
	st, err := a.Reconciliations().ReconciliationState(ctx)
	if err != nil || st.Reached.IsZero() || st.Holder != "" {
		t.Fatalf("state %+v, %v: want a time reached and nobody holding", st, err)
	}
}
