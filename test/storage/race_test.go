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

// pendingTransaction is a transaction of account awaiting payment whose QR code expired at
// expires.
func pendingTransaction(t testing.TB, account string, created, expires time.Time) *domain.Transaction {
	t.Helper()
	tx, err := domain.NewTransaction(newID(), newPaymentToken(), account, "SANDBOX", domain.Order{
		Amount: 1000, PaymentMethod: domain.PaymentPIX, IsInfoProduct: true,
		ExpirationSeconds: domain.DefaultExpirationSeconds, WebhookURL: "https://shop.example.com/hooks",
		Customer: &domain.Customer{Name: "Maria da Silva", Email: "maria@example.com", MobilePhone: "11987654321"},
	}, domain.Idempotency{}, created)
	if err != nil {
		t.Fatal(err)
	}
	if err := tx.AttachPix(domain.PixResponse{URI: "000201" + tx.ID(), QRCodePNG: []byte("\x89PNG" + tx.ID()),
		ExpiresAt: expires}, created.Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	return tx
}

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

// TestConcurrentInstances races two instances through the database alone: two clients, two
// sets of in-process locks. Every write to a document claims the document's state under a
// unique key first (the adapter's claims), so it holds on FerretDB v1, whose conditional
// updates are not atomic between clients, as on MongoDB.
func TestConcurrentInstances(t *testing.T) {
	t.Parallel()

	t.Run("concurrent updates from two instances are all applied, none lost", func(t *testing.T) {
		t.Parallel()
		a, b := twoInstances(t, nil)
		ctx := ctxTimeout(t, 2*time.Minute)
		tx := paidTransaction(t, newID(), 1000, base)
		if err := a.Transactions().Create(ctx, tx); err != nil {
			t.Fatal(err)
		}
		const writers = 16
		var wg sync.WaitGroup
		for i := range writers {
			store := []*pixmongo.Store{a, b}[i%2]
			wg.Go(func() {
				if _, err := store.Transactions().Update(ctx, tx.AccountID(), tx.ID(), toggleDispute(base.Add(time.Hour))); err != nil {
					t.Errorf("Update: %v", err)
				}
			})
		}
		wg.Wait()
		got, err := a.Transactions().Get(ctx, tx.AccountID(), tx.ID())
		if err != nil {
			t.Fatal(err)
		}
		if len(got.History()) != len(tx.History())+writers || got.Version() != tx.Version()+writers {
			t.Errorf("%d history entries at version %d after %d updates; want %d at %d",
				len(got.History()), got.Version(), writers, len(tx.History())+writers, tx.Version()+writers)
		}
	})

	t.Run("concurrent claims from two instances never hand one delivery to both", func(t *testing.T) {
		t.Parallel()
		a, b := twoInstances(t, nil)
		ctx := ctxTimeout(t, 2*time.Minute)
		account := newID()
		for i := range 8 {
			if err := a.Transactions().Create(ctx, paidTransaction(t, account, 1000, base.Add(time.Duration(i)*time.Second))); err != nil {
				t.Fatal(err)
			}
		}
		var mu sync.Mutex
		owners := map[string]string{}
		var wg sync.WaitGroup
		for i := range 8 {
			store, owner := []*pixmongo.Store{a, b}[i%2], "dispatcher-"+string(rune('a'+i))
			wg.Go(func() {
				ds, err := store.Outbox().Claim(ctx, owner, base.Add(time.Hour), time.Minute, 3, nil)
				if err != nil {
					t.Errorf("Claim: %v", err)
				}
				mu.Lock()
				defer mu.Unlock()
				for _, d := range ds {
					if prev, ok := owners[d.Event.ID]; ok {
						t.Errorf("event %s claimed by %s and %s", d.Event.ID, prev, owner)
					}
					owners[d.Event.ID] = owner
				}
			})
		}
		wg.Wait()
	})

	t.Run("sweepers of two instances expire each charge once, with one event", func(t *testing.T) {
		t.Parallel()
		a, b := twoInstances(t, nil)
		ctx := ctxTimeout(t, 2*time.Minute)
		account := newID()
		var txs []*domain.Transaction
		for range 6 {
			tx := pendingTransaction(t, account, base, base.Add(time.Minute))
			if err := a.Transactions().Create(ctx, tx); err != nil {
				t.Fatal(err)
			}
			txs = append(txs, tx)
		}
		now := base.Add(time.Hour)
		failedEvent := domain.EventType(domain.ResourceTransaction, string(domain.TxFailed))
		var expired atomic.Int64
		var wg sync.WaitGroup
		for i := range 8 { // eight sweepers, four per instance, each over every charge
			store := []*pixmongo.Store{a, b}[i%2]
			wg.Go(func() {
				for _, tx := range txs {
					_, err := store.Transactions().Update(ctx, account, tx.ID(), func(cur *domain.Transaction) error {
						if cur.Status() != domain.TxPixQRCodeGenerated {
							return domain.ErrInvalidTransition
						}
						return cur.Expire(now)
					})
					switch {
					case err == nil:
						expired.Add(1)
					case !errors.Is(err, domain.ErrInvalidTransition):
						t.Errorf("Update: %v", err)
					}
				}
			})
		}
		wg.Wait()
		if n := expired.Load(); n != int64(len(txs)) {
			t.Errorf("%d expiries succeeded for %d charges, want one each", n, len(txs))
		}
		for _, tx := range txs {
			got, err := a.Transactions().Get(ctx, account, tx.ID())
			if err != nil {
				t.Fatal(err)
			}
			if got.Status() != domain.TxFailed || len(got.History()) != len(tx.History())+1 || got.Version() != tx.Version()+1 {
				t.Errorf("%s: %s with %d history entries at version %d; want FAILED, %d, %d", tx.ID(), got.Status(),
					len(got.History()), got.Version(), len(tx.History())+1, tx.Version()+1)
			}
			ds, err := b.Outbox().Deliveries(ctx, account, domain.ResourceTransaction, tx.ID())
			if err != nil {
				t.Fatal(err)
			}
			failed := 0
			for _, d := range ds {
				if d.Event.Type == failedEvent {
					failed++
				}
			}
			if failed != 1 {
				t.Errorf("%s: %d %s events, want 1", tx.ID(), failed, failedEvent)
			}
		}
	})

	t.Run("status changes and delivery leases from two instances lose neither", func(t *testing.T) {
		t.Parallel()
		a, b := twoInstances(t, nil)
		ctx := ctxTimeout(t, 2*time.Minute)
		tx := paidTransaction(t, newID(), 1000, base)
		if err := a.Transactions().Create(ctx, tx); err != nil {
			t.Fatal(err)
		}
		const writers = 8
		var wg sync.WaitGroup
		for range writers {
			wg.Go(func() {
				if _, err := a.Transactions().Update(ctx, tx.AccountID(), tx.ID(), toggleDispute(base.Add(time.Hour))); err != nil {
					t.Errorf("Update: %v", err)
				}
			})
		}
		var leased, recorded atomic.Int64
		for i := range 4 { // the other instance's dispatchers lease and record deliveries meanwhile
			owner := "dispatcher-" + string(rune('a'+i))
			wg.Go(func() {
				for range 4 {
					ds, err := b.Outbox().Claim(ctx, owner, base.Add(2*time.Hour), time.Minute, 2, nil)
					if err != nil {
						t.Errorf("Claim: %v", err)
						return
					}
					for _, d := range ds {
						leased.Add(1)
						err := b.Outbox().RecordAttempt(ctx, d.Event.ID, owner, ports.Attempt{At: base.Add(2 * time.Hour), StatusCode: 204},
							ports.DeliveryDelivered, base.Add(2*time.Hour))
						if err != nil {
							t.Errorf("RecordAttempt: %v", err)
							continue
						}
						recorded.Add(1)
					}
				}
			})
		}
		wg.Wait()
		got, err := a.Transactions().Get(ctx, tx.AccountID(), tx.ID())
		if err != nil {
			t.Fatal(err)
		}
		if len(got.History()) != len(tx.History())+writers || got.Version() != tx.Version()+writers {
			t.Errorf("%d history entries at version %d after %d updates; want %d at %d",
				len(got.History()), got.Version(), writers, len(tx.History())+writers, tx.Version()+writers)
		}
		ds, err := a.Outbox().Deliveries(ctx, tx.AccountID(), domain.ResourceTransaction, tx.ID())
		if err != nil {
			t.Fatal(err)
		}
		// qrcode generated, paid, and one event per status change: none lost to a lease write.
		if want := 2 + writers; len(ds) != want {
			t.Errorf("%d deliveries, want %d", len(ds), want)
		}
		delivered := 0
		for _, d := range ds {
			if d.Status == ports.DeliveryDelivered {
				delivered++
				if len(d.Attempts) != 1 {
					t.Errorf("event %s delivered with %d attempts recorded, want 1", d.Event.ID, len(d.Attempts))
				}
			}
		}
		if int64(delivered) != recorded.Load() {
			t.Errorf("%d deliveries stored as delivered, %d attempts recorded (%d leased): a lease write lost", delivered, recorded.Load(), leased.Load())
		}
	})

	t.Run("a revocation racing records of use from another instance stays", func(t *testing.T) {
		t.Parallel()
		a, b := twoInstances(t, nil)
		ctx := ctxTimeout(t, 2*time.Minute)
		acct, err := domain.NewAccount(newID(), "Loja", domain.AllScopes(), "whsec_x", base)
		if err != nil {
			t.Fatal(err)
		}
		if err := a.Accounts().CreateAccount(ctx, acct); err != nil {
			t.Fatal(err)
		}
		for round := range 5 {
			cred := domain.Credential{ClientID: newID(), AccountID: acct.ID(), SecretHash: []byte("hash"), CreatedAt: base}
			if err := a.Accounts().CreateCredential(ctx, cred); err != nil {
				t.Fatal(err)
			}
			var wg sync.WaitGroup
			for i := range 8 {
				wg.Go(func() {
					if err := b.Accounts().RecordCredentialUse(ctx, cred.ClientID, base.Add(time.Duration(round*10+i)*time.Second)); err != nil {
						t.Errorf("RecordCredentialUse: %v", err)
					}
				})
			}
			wg.Go(func() {
				if err := a.Accounts().RevokeCredential(ctx, acct.ID(), cred.ClientID, base.Add(time.Hour)); err != nil {
					t.Errorf("RevokeCredential: %v", err)
				}
			})
			wg.Wait()
			got, err := b.Accounts().GetCredential(ctx, cred.ClientID)
			if err != nil {
				t.Fatal(err)
			}
			if got.RevokedAt == nil {
				t.Fatalf("round %d: the revocation of %s was lost to a record of use", round, cred.ClientID)
			}
		}
	})
}
