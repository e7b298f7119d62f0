package storage_test

import (
	"context"
	"errors"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	pixmongo "github.com/pixgate/pixgate/adapters/mongo"
	"github.com/pixgate/pixgate/ports"
	"github.com/pixgate/pixgate/test/testdb"
)

// TestOutage stops the database while calls run, and starts it again: calls answer
// ports.ErrUnavailable during the outage (no panic, no other error), the same store works
// again once the database is back, and every write it acknowledged is still there.
func TestOutage(t *testing.T) {
	t.Parallel()
	srv := testdb.Start(t, testdb.Options{Restartable: true})
	cfg := srv.Config(t)
	cfg.OpTimeout, cfg.ServerSelectionTimeout = 2*time.Second, time.Second
	store := testdb.OpenStore(t, srv, cfg)
	ctx := ctxTimeout(t, 5*time.Minute)
	account := newID()

	var (
		mu           sync.Mutex
		acknowledged []string
		unavailable  atomic.Int64
		succeeded    atomic.Int64
		stop         = make(chan struct{})
		wg           sync.WaitGroup
	)
	// Callers keep writing and reading through the outage, as the HTTP handlers would.
	for range 3 {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				tx := paidTransaction(t, account, 100, base.Add(time.Duration(i)*time.Millisecond))
				err := store.Transactions().Create(ctx, tx)
				if err == nil {
					mu.Lock()
					acknowledged = append(acknowledged, tx.ID())
					mu.Unlock()
					_, err = store.Ledger().Balance(ctx, account)
				}
				if err == nil {
					_, err = store.Transactions().List(ctx, ports.TransactionFilter{AccountID: account}, ports.Page{Number: 1, Size: 5})
				}
				switch {
				case err == nil:
					succeeded.Add(1)
				case errors.Is(err, ports.ErrUnavailable):
					unavailable.Add(1)
					time.Sleep(50 * time.Millisecond)
				default:
					t.Errorf("a call during the outage answered %v, want nil or ErrUnavailable", err)
				}
			}
		})
	}
	waitFor(t, "calls to succeed before the outage", func() bool { return succeeded.Load() >= 5 })

	t0 := time.Now()
	if err := srv.Stop(ctx); err != nil {
		t.Fatalf("stop the database: %v", err)
	}
	if err := store.Ping(ctx); !errors.Is(err, ports.ErrUnavailable) {
		t.Errorf("Ping during the outage = %v, want ErrUnavailable", err)
	}
	if _, err := store.Transactions().Get(ctx, account, newID()); !errors.Is(err, ports.ErrUnavailable) {
		t.Errorf("Get during the outage = %v, want ErrUnavailable", err)
	}
	waitFor(t, "callers to see the outage", func() bool { return unavailable.Load() >= 3 })

	t1 := time.Now()
	if err := srv.Start(ctx); err != nil {
		t.Fatalf("start the database again: %v", err)
	}
	t2 := time.Now()
	// The same store, not reopened: the driver finds the server again by itself.
	waitFor(t, "the store to answer again", func() bool { return store.Ping(ctx) == nil })
	t.Logf("stop+outage %v, start %v, recovery %v", t1.Sub(t0), t2.Sub(t1), time.Since(t2))
	before := succeeded.Load()
	waitFor(t, "calls to succeed after the outage", func() bool { return succeeded.Load() >= before+5 })
	close(stop)
	wg.Wait()

	mu.Lock()
	defer mu.Unlock()
	for _, id := range acknowledged {
		if _, err := store.Transactions().Get(ctx, account, id); err != nil {
			t.Errorf("acknowledged transaction %s: %v", id, err)
		}
	}
	t.Logf("%d writes acknowledged, all found; %d calls answered ErrUnavailable during the outage",
		len(acknowledged), unavailable.Load())
}

// TestOpenUnreachable opens the adapter where no database listens.
func TestOpenUnreachable(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	start := time.Now()
	_, err = pixmongo.Open(context.Background(), pixmongo.Config{
		URI: "mongodb://127.0.0.1:" + strconv.Itoa(port) + "/", Database: "unreachable",
		OpenTimeout: 2 * time.Second, ServerSelectionTimeout: time.Second,
	})
	if !errors.Is(err, ports.ErrUnavailable) {
		t.Fatalf("Open = %v, want ErrUnavailable", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Open took %v to give up, want about its timeout", d)
	}
}

// waitFor polls cond for up to a minute.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
