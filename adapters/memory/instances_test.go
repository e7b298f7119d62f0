package memory_test

import (
	"context"
	"testing"
	"time"

	"github.com/pixgate/pixgate/adapters/memory"
	"github.com/pixgate/pixgate/ports"
	"github.com/pixgate/pixgate/ports/storetest"
)

// TestInstances: a memory store lives in one process, so its "two instances" are the same
// ports twice, and every guarantee across instances is its lock's.
func TestInstances(t *testing.T) {
	storetest.TestInstances(t, func(t *testing.T) (a, b storetest.Instance) {
		i := storetest.Instance{Stores: newStores(t), Accounts: memory.NewAccounts()}
		return i, i
	})
}

// TestInstancesRegistry counts the instances heard from within the time to live, and forgets
// one that leaves.
func TestInstancesRegistry(t *testing.T) {
	r := memory.NewInstances()
	ctx := context.Background()
	at := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	if n, err := r.Heartbeat(ctx, "a", at, 10*time.Second); err != nil || n != 1 {
		t.Fatalf("Heartbeat = %d, %v; want 1", n, err)
	}
	if n, _ := r.Heartbeat(ctx, "b", at.Add(time.Second), 10*time.Second); n != 2 {
		t.Errorf("two instances: Heartbeat = %d", n)
	}
	if n, _ := r.Heartbeat(ctx, "b", at.Add(12*time.Second), 10*time.Second); n != 1 {
		t.Errorf("a silent for 12 s of a 10 s time to live: Heartbeat = %d, want 1", n)
	}
	if err := r.Leave(ctx, "b"); err != nil {
		t.Fatal(err)
	}
	if n, _ := r.Heartbeat(ctx, "a", at.Add(13*time.Second), 10*time.Second); n != 1 {
		t.Errorf("after b left: Heartbeat = %d, want 1", n)
	}
}

// TestReconciliations: one memory store's state, held by "two instances" of one process.
func TestReconciliations(t *testing.T) {
	storetest.TestReconciliations(t, func(t *testing.T) (a, b ports.Reconciliations) {
		r := memory.NewReconciliations()
		return r, r
	})
}
