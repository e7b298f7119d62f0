package storage_test

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	pixmongo "github.com/pixgate/pixgate/adapters/mongo"
	"github.com/pixgate/pixgate/domain"
	"github.com/pixgate/pixgate/ports"
	"github.com/pixgate/pixgate/test/testdb"
)

// twoInstances opens the adapter twice on one database, as two pixgate processes would: two
// clients, two sets of in-process locks, nothing shared but the server.
func twoInstances(t *testing.T, tweak func(*pixmongo.Config)) (a, b *pixmongo.Store) {
	srv := testdb.Shared(t)
	cfg := srv.Config(t)
	if tweak != nil {
		tweak(&cfg)
	}
	return testdb.OpenStore(t, srv, cfg), testdb.OpenStore(t, srv, cfg)
}

// TestVersionConflict makes another instance change a transaction between an update's read
// and its write (inside fn, so the interleaving is certain on any server), and checks that the
// version check catches it.
func TestVersionConflict(t *testing.T) {
	t.Parallel()

	t.Run("an update that lost the race reads again and applies fn to the winner's result", func(t *testing.T) {
		t.Parallel()
		a, b := twoInstances(t, nil)
		ctx := ctxTimeout(t, time.Minute)
		tx := paidTransaction(t, newID(), 1000, base)
		if err := a.Transactions().Create(ctx, tx); err != nil {
			t.Fatal(err)
		}
		calls := 0
		got, err := a.Transactions().Update(ctx, tx.AccountID(), tx.ID(), func(cur *domain.Transaction) error {
			calls++
			if calls == 1 { // the other instance gets in first
				if _, err := b.Transactions().Update(ctx, tx.AccountID(), tx.ID(), toggleDispute(base.Add(time.Minute))); err != nil {
					t.Errorf("the other instance's update: %v", err)
				}
			}
			return toggleDispute(base.Add(2 * time.Minute))(cur)
		})
		if err != nil {
			t.Fatalf("Update: %v", err)
		}
		if calls != 2 {
			t.Errorf("fn ran %d times, want 2 (once more after the conflict)", calls)
		}
		// PAID, then BLOCKED by the other instance, then PAID again by the retried fn.
		if got.Status() != domain.TxPaid || len(got.History()) != len(tx.History())+2 || got.Version() != tx.Version()+2 {
			t.Errorf("stored %s with %d history entries at version %d; want PAID, %d, %d",
				got.Status(), len(got.History()), got.Version(), len(tx.History())+2, tx.Version()+2)
		}
		ds, err := a.Outbox().Deliveries(ctx, tx.AccountID(), domain.ResourceTransaction, tx.ID())
		if err != nil || len(ds) != 4 { // pix_qrcode_generated, paid, blocked, paid
			t.Errorf("Deliveries = %d, %v; want 4: one per status entered, none lost", len(ds), err)
		}
	})

	t.Run("an update that keeps losing gives up with ErrVersionConflict and stores nothing", func(t *testing.T) {
		t.Parallel()
		a, b := twoInstances(t, func(c *pixmongo.Config) { c.MaxRetries = 2 })
		ctx := ctxTimeout(t, time.Minute)
		tx := paidTransaction(t, newID(), 1000, base)
		if err := a.Transactions().Create(ctx, tx); err != nil {
			t.Fatal(err)
		}
		calls := 0
		_, err := a.Transactions().Update(ctx, tx.AccountID(), tx.ID(), func(cur *domain.Transaction) error {
			calls++
			if _, err := b.Transactions().Update(ctx, tx.AccountID(), tx.ID(), toggleDispute(base.Add(time.Duration(calls)*time.Minute))); err != nil {
				t.Errorf("the other instance's update: %v", err)
			}
			return toggleDispute(base.Add(time.Hour))(cur)
		})
		if !errors.Is(err, ports.ErrVersionConflict) || calls != 2 {
			t.Fatalf("Update = %v after %d calls, want ErrVersionConflict after 2", err, calls)
		}
		got, err := a.Transactions().Get(ctx, tx.AccountID(), tx.ID())
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range got.History() {
			if e.Date.Equal(base.Add(time.Hour)) {
				t.Fatalf("the update that gave up stored its change: %+v", got.History())
			}
		}
		if got.Version() != tx.Version()+2 {
			t.Errorf("version %d, want %d: the other instance's two updates only", got.Version(), tx.Version()+2)
		}
	})

	t.Run("two instances withdrawing at once from one account never overdraw", func(t *testing.T) {
		t.Parallel()
		a, b := twoInstances(t, nil)
		ctx := ctxTimeout(t, 2*time.Minute)
		account := newID()
		if err := a.Transactions().Create(ctx, paidTransaction(t, account, 1000, base)); err != nil {
			t.Fatal(err)
		}
		var accepted atomic.Int64
		var wg sync.WaitGroup
		for i := range 16 {
			store := []*pixmongo.Store{a, b}[i%2]
			wg.Go(func() {
				w := withdrawal(t, account, 90, 10)
				switch err := store.Withdrawals().Create(ctx, w); {
				case err == nil:
					accepted.Add(1)
				case !errors.Is(err, domain.ErrInsufficientBalance):
					t.Errorf("Create: %v", err)
				}
			})
		}
		wg.Wait()
		if n := accepted.Load(); n != 10 {
			t.Errorf("%d withdrawals of 100 accepted on 1000, want 10", n)
		}
		if bal, err := a.Ledger().Balance(ctx, account); err != nil || bal != (domain.Balance{}) {
			t.Errorf("Balance = %+v, %v; want zero", bal, err)
		}
	})
}
