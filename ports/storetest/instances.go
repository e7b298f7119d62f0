package storetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pixgate/pixgate/domain"
	"github.com/pixgate/pixgate/ports"
)

// Instance is what one instance of the service holds of a store: its storage ports.
type Instance struct {
	Stores
	Accounts ports.AccountRepository
}

// TestInstances races two instances of one store: newPair returns two sets of ports on one
// empty store, as two pixgate processes on one database hold them (two clients, nothing shared
// but the data). A store that lives in one process returns the same ports twice. Every
// guarantee the service makes across instances must hold: one transition and one event per
// expiry whichever instance's sweeper runs, no status change or delivery lease lost to the
// other, one lease per delivery, a revocation never undone by a record of use, one
// withdrawal per check of the balance, a payment and its fee recorded in one step, and one
// claim of a payout at a time, serialised with a cancel, and one claim of a devolution at a
// time.
func TestInstances(t *testing.T, newPair func(t *testing.T) (a, b Instance)) {
	for _, c := range []struct {
		name string
		run  func(t *testing.T, newPair func(t *testing.T) (a, b Instance))
	}{
		{"concurrent updates from two instances are all applied, none lost", instConcurrentUpdatesAllApplied},
		{"sweepers of two instances expire each charge once, with one event", instSweepersExpireOnce},
		{"status changes and delivery leases from two instances lose neither", instStatusChangesAndLeases},
		{"concurrent claims from two instances never hand one delivery to both", instOneLeasePerDelivery},
		{"two instances withdrawing at once from one account never overdraw", instWithdrawalsNeverOverdraw},
		{"payments with fees and withdrawals through two instances never overdraw", instPaymentFeeOneStep},
		{"a revocation racing records of use from another instance stays", instRevocationStays},
		{"claims of one payout from two instances hand it to one, and a cancel racing a claim makes one of the two", instPayoutClaims},
		{"claims of one devolution (a refund's, a late payment's) from two instances hand it to one", instDevolutionClaims},
	} {
		t.Run(c.name, func(t *testing.T) { c.run(t, newPair) })
	}
}

func instConcurrentUpdatesAllApplied(t *testing.T, newPair func(t *testing.T) (a, b Instance)) {
	t.Parallel()
	a, b := newPair(t)
	tx := createTransaction(t, a.Stores, txSpec{account: domain.NewID(), status: domain.TxPaid})
	const writers = 16
	errs := concurrently(writers, func(i int) error {
		s := []Instance{a, b}[i%2]
		_, err := s.Transactions.Update(context.Background(), tx.AccountID(), tx.ID(), toggle(minutes(10+i)))
		return err
	})
	for _, err := range errs {
		if err != nil {
			t.Errorf("Update: %v", err)
		}
	}
	got, err := b.Transactions.Get(context.Background(), tx.AccountID(), tx.ID())
	if err != nil {
		t.Fatal(err)
	}
	if len(got.History()) != len(tx.History())+writers || got.Version() != tx.Version()+writers {
		t.Errorf("%d history entries at version %d after %d updates; want %d at %d",
			len(got.History()), got.Version(), writers, len(tx.History())+writers, tx.Version()+writers)
	}
}

func instSweepersExpireOnce(t *testing.T, newPair func(t *testing.T) (a, b Instance)) {
	t.Parallel()
	a, b := newPair(t)
	account := domain.NewID()
	var txs []*domain.Transaction
	for range 6 {
		txs = append(txs, createTransaction(t, a.Stores, txSpec{account: account, webhook: "https://shop.example.com/hooks"}))
	}
	now := epoch.Add(2 * time.Hour) // past every expiry
	var expired atomic.Int64
	errs := concurrently(8, func(i int) error {
		s := []Instance{a, b}[i%2]
		for _, tx := range txs {
			_, err := s.Transactions.Update(context.Background(), account, tx.ID(), func(cur *domain.Transaction) error {
				if cur.Status() != domain.TxPixQRCodeGenerated {
					return domain.ErrInvalidTransition
				}
				return cur.Expire(now)
			})
			switch {
			case err == nil:
				expired.Add(1)
			case !errors.Is(err, domain.ErrInvalidTransition):
				return err
			}
		}
		return nil
	})
	for _, err := range errs {
		if err != nil {
			t.Errorf("Update: %v", err)
		}
	}
	if n := expired.Load(); n != int64(len(txs)) {
		t.Errorf("%d expiries succeeded for %d charges, want one each", n, len(txs))
	}
	failed := domain.EventType(domain.ResourceTransaction, string(domain.TxFailed))
	for _, tx := range txs {
		got, err := a.Transactions.Get(context.Background(), account, tx.ID())
		if err != nil {
			t.Fatal(err)
		}
		if got.Status() != domain.TxFailed || len(got.History()) != len(tx.History())+1 {
			t.Errorf("%s: %s with %d history entries; want FAILED with %d", tx.ID(), got.Status(), len(got.History()), len(tx.History())+1)
		}
		ds, err := b.Outbox.Deliveries(context.Background(), account, domain.ResourceTransaction, tx.ID())
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, d := range ds {
			if d.Event.Type == failed {
				n++
			}
		}
		if n != 1 {
			t.Errorf("%s: %d %s events, want 1", tx.ID(), n, failed)
		}
	}
}

func instStatusChangesAndLeases(t *testing.T, newPair func(t *testing.T) (a, b Instance)) {
	t.Parallel()
	a, b := newPair(t)
	tx := createTransaction(t, a.Stores, txSpec{account: domain.NewID(), status: domain.TxPaid, webhook: "https://shop.example.com/hooks"})
	const writers = 8
	ctx := context.Background()
	var recorded atomic.Int64
	var wg sync.WaitGroup
	for i := range writers {
		wg.Go(func() {
			if _, err := a.Transactions.Update(ctx, tx.AccountID(), tx.ID(), toggle(minutes(10+i))); err != nil {
				t.Errorf("Update: %v", err)
			}
		})
	}
	for i := range 4 { // the other instance's dispatchers lease and record deliveries meanwhile
		owner := fmt.Sprintf("dispatcher-%d", i)
		wg.Go(func() {
			for range 4 {
				ds, err := b.Outbox.Claim(ctx, owner, minutes(120), time.Minute, 2, nil)
				if err != nil {
					t.Errorf("Claim: %v", err)
					return
				}
				for _, d := range ds {
					err := b.Outbox.RecordAttempt(ctx, d.Event.ID, owner, ports.Attempt{At: minutes(120), StatusCode: 204},
						ports.DeliveryDelivered, minutes(120))
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
	got, err := b.Transactions.Get(ctx, tx.AccountID(), tx.ID())
	if err != nil {
		t.Fatal(err)
	}
	if len(got.History()) != len(tx.History())+writers || got.Version() != tx.Version()+writers {
		t.Errorf("%d history entries at version %d after %d updates; want %d at %d",
			len(got.History()), got.Version(), writers, len(tx.History())+writers, tx.Version()+writers)
	}
	ds, err := a.Outbox.Deliveries(ctx, tx.AccountID(), domain.ResourceTransaction, tx.ID())
	if err != nil {
		t.Fatal(err)
	}
	// The QR code's and the payment's events, and one per status change: none lost.
	if want := 2 + writers; len(ds) != want {
		t.Errorf("%d deliveries, want %d: %v", len(ds), want, eventTypes(ds))
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
		t.Errorf("%d deliveries stored as delivered, %d attempts recorded: a lease write was lost", delivered, recorded.Load())
	}
}

func instOneLeasePerDelivery(t *testing.T, newPair func(t *testing.T) (a, b Instance)) {
	t.Parallel()
	a, b := newPair(t)
	account := domain.NewID()
	for i := range 8 {
		createTransaction(t, a.Stores, txSpec{account: account, status: domain.TxPaid, createdAt: epoch.Add(time.Duration(i) * time.Second),
			webhook: "https://shop.example.com/hooks"})
	}
	var mu sync.Mutex
	owners := map[string]string{}
	errs := concurrently(8, func(i int) error {
		s, owner := []Instance{a, b}[i%2], fmt.Sprintf("dispatcher-%d", i)
		ds, err := s.Outbox.Claim(context.Background(), owner, minutes(120), time.Minute, 3, nil)
		mu.Lock()
		defer mu.Unlock()
		for _, d := range ds {
			if prev, ok := owners[d.Event.ID]; ok {
				t.Errorf("event %s leased by %s and %s", d.Event.ID, prev, owner)
			}
			owners[d.Event.ID] = owner
		}
		return err
	})
	for _, err := range errs {
		if err != nil {
			t.Errorf("Claim: %v", err)
		}
	}
}

func instWithdrawalsNeverOverdraw(t *testing.T, newPair func(t *testing.T) (a, b Instance)) {
	t.Parallel()
	a, b := newPair(t)
	account := domain.NewID()
	fund(t, a.Stores, account, 1000)
	var accepted atomic.Int64
	errs := concurrently(16, func(i int) error {
		s := []Instance{a, b}[i%2]
		w := buildWithdrawal(t, wdSpec{account: account, amount: 90, fee: 10})
		switch err := s.Withdrawals.Create(context.Background(), w); {
		case err == nil:
			accepted.Add(1)
		case !errors.Is(err, domain.ErrInsufficientBalance):
			return err
		}
		return nil
	})
	for _, err := range errs {
		if err != nil {
			t.Errorf("Create: %v", err)
		}
	}
	if n := accepted.Load(); n != 10 {
		t.Errorf("%d withdrawals of 100 accepted on 1000, want 10", n)
	}
	if bal, err := b.Ledger.Balance(context.Background(), account); err != nil || bal != (domain.Balance{}) {
		t.Errorf("Balance = %+v, %v; want zero", bal, err)
	}
}

func instPaymentFeeOneStep(t *testing.T, newPair func(t *testing.T) (a, b Instance)) {
	t.Parallel()
	a, b := newPair(t)
	raceFeesAndWithdrawals(t, []Stores{a.Stores, b.Stores})
}

func instRevocationStays(t *testing.T, newPair func(t *testing.T) (a, b Instance)) {
	t.Parallel()
	a, b := newPair(t)
	ctx := context.Background()
	acct, err := domain.NewAccount(domain.NewID(), "Loja", domain.AllScopes(), "whsec_x", epoch)
	if err != nil {
		t.Fatal(err)
	}
	mustCreateAccount(t, a.Accounts, acct)
	for round := range 5 {
		cred := domain.Credential{ClientID: domain.NewID(), AccountID: acct.ID(), SecretHash: []byte("hash"), CreatedAt: epoch}
		mustCreateCredential(t, a.Accounts, cred)
		errs := concurrently(9, func(i int) error {
			if i == 0 {
				return a.Accounts.RevokeCredential(ctx, acct.ID(), cred.ClientID, minutes(60))
			}
			return b.Accounts.RecordCredentialUse(ctx, cred.ClientID, minutes(round*10+i))
		})
		for _, err := range errs {
			if err != nil {
				t.Errorf("revoke or record use: %v", err)
			}
		}
		got, err := b.Accounts.GetCredential(ctx, cred.ClientID)
		if err != nil {
			t.Fatal(err)
		}
		if got.RevokedAt == nil {
			t.Fatalf("round %d: the revocation of %s was lost to a record of use", round, cred.ClientID)
		}
	}
}

// toggle opens a dispute on a PAID transaction and rejects it on a BLOCKED one: a change that
// can be applied any number of times, each adding one history entry, so that a lost update
// shows as a missing entry.
func toggle(at time.Time) func(*domain.Transaction) error {
	return func(tx *domain.Transaction) error {
		if tx.Status() == domain.TxPaid {
			return tx.OpenDispute(at)
		}
		return tx.RejectDispute(at)
	}
}

func instPayoutClaims(t *testing.T, newPair func(t *testing.T) (a, b Instance)) {
	t.Parallel()
	a, b := newPair(t)
	repos := []ports.WithdrawalRepository{a.Withdrawals, b.Withdrawals}
	account := domain.NewID()
	for round := range 6 {
		w := fundedWithdrawal(t, a.Stores, wdSpec{account: account, createdAt: minutes(round)})
		if wins := claimConcurrently(t, repos, w, 8); wins != 1 {
			t.Fatalf("round %d: %d claims won, want exactly 1", round, wins)
		}
		cancelRacingClaim(t, repos, fundedWithdrawal(t, b.Stores, wdSpec{account: account, createdAt: minutes(round)}))
	}
}
