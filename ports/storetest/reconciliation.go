package storetest

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pixgate/pixgate/ports"
)

// TestReconciliations checks the reconciliation's shared state: newPair returns the port as
// two instances of one empty store hold it (a store that lives in one process returns the
// same port twice). One instance at a time holds the reconciliation, however many ask at
// once; the time reached only moves forward, is stored only by the holder, and is what every
// instance reads.
func TestReconciliations(t *testing.T, newPair func(t *testing.T) (a, b ports.Reconciliations)) {
	for _, c := range []struct {
		name string
		run  func(t *testing.T, a, b ports.Reconciliations)
	}{
		{"a new store has reached nothing and nobody holds it", reconNew},
		{"a hold keeps the other instance out until it runs out or ends", reconHold},
		{"the time reached is stored by its holder only, and only forward", reconReached},
		{"of many instances asking at once, one holds it, round after round", reconRace},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			a, b := newPair(t)
			c.run(t, a, b)
		})
	}
}

func reconState(t *testing.T, r ports.Reconciliations) ports.ReconciliationState {
	t.Helper()
	st, err := r.ReconciliationState(context.Background())
	if err != nil {
		t.Fatalf("ReconciliationState: %v", err)
	}
	return st
}

func reconHolds(t *testing.T, r ports.Reconciliations, holder string, now time.Time, want bool) {
	t.Helper()
	got, err := r.HoldReconciliation(context.Background(), holder, now, now.Add(time.Minute))
	if err != nil || got != want {
		t.Fatalf("HoldReconciliation(%s, %s) = %v, %v; want %v", holder, now.Format(time.TimeOnly), got, err, want)
	}
}

func reconNew(t *testing.T, a, b ports.Reconciliations) {
	if st := reconState(t, b); !st.Reached.IsZero() || st.Holder != "" {
		t.Fatalf("a new store's state = %+v, want zero", st)
	}
	ctx := context.Background()
	if err := a.CompleteReconciliation(ctx, "a", minutes(1)); !errors.Is(err, ports.ErrReconciliationNotHeld) {
		t.Fatalf("Complete without a hold = %v, want ErrReconciliationNotHeld", err)
	}
	if err := a.ReleaseReconciliation(ctx, "a"); !errors.Is(err, ports.ErrReconciliationNotHeld) {
		t.Fatalf("Release without a hold = %v, want ErrReconciliationNotHeld", err)
	}
	if st := reconState(t, b); !st.Reached.IsZero() {
		t.Fatalf("a refused Complete stored %v", st.Reached)
	}
}

func reconHold(t *testing.T, a, b ports.Reconciliations) {
	ctx := context.Background()
	reconHolds(t, a, "a", minutes(0), true)
	if st := reconState(t, b); st.Holder != "a" || !st.HeldUntil.Equal(minutes(1)) {
		t.Fatalf("the other instance reads %+v, want held by a until %v", st, minutes(1))
	}
	reconHolds(t, b, "b", minutes(0), false)
	reconHolds(t, a, "a", minutes(0).Add(30*time.Second), true) // a renewal, to 1m30s
	reconHolds(t, b, "b", minutes(1), false)
	// Run out: a died, or its pass went long; b takes over, and a's late Complete stores nothing.
	reconHolds(t, b, "b", minutes(2), true)
	if err := a.CompleteReconciliation(ctx, "a", minutes(2)); !errors.Is(err, ports.ErrReconciliationNotHeld) {
		t.Fatalf("Complete by the holder whose hold ran out = %v, want ErrReconciliationNotHeld", err)
	}
	if err := a.ReleaseReconciliation(ctx, "a"); !errors.Is(err, ports.ErrReconciliationNotHeld) {
		t.Fatalf("Release by the holder whose hold ran out = %v, want ErrReconciliationNotHeld", err)
	}
	if st := reconState(t, a); st.Holder != "b" || !st.Reached.IsZero() {
		t.Fatalf("state %+v, want held by b and nothing reached", st)
	}
	if err := b.ReleaseReconciliation(ctx, "b"); err != nil {
		t.Fatal(err)
	}
	if st := reconState(t, a); st.Holder != "" || !st.Reached.IsZero() {
		t.Fatalf("after Release: %+v, want nobody holding, nothing reached", st)
	}
	reconHolds(t, a, "a", minutes(2), true) // released: taken at once, long before b's hold ran out
}

func reconReached(t *testing.T, a, b ports.Reconciliations) {
	ctx := context.Background()
	reconHolds(t, a, "a", minutes(0), true)
	if err := a.CompleteReconciliation(ctx, "a", minutes(10)); err != nil {
		t.Fatal(err)
	}
	if st := reconState(t, b); !st.Reached.Equal(minutes(10)) || st.Holder != "" {
		t.Fatalf("after Complete: %+v, want reached %v and nobody holding", st, minutes(10))
	}
	reconHolds(t, b, "b", minutes(1), true)
	if err := b.CompleteReconciliation(ctx, "b", minutes(5)); err != nil {
		t.Fatal(err)
	}
	if st := reconState(t, a); !st.Reached.Equal(minutes(10)) {
		t.Fatalf("an earlier time moved reached back to %v", st.Reached)
	}
	reconHolds(t, b, "b", minutes(2), true)
	if err := b.ReleaseReconciliation(ctx, "b"); err != nil {
		t.Fatal(err)
	}
	if st := reconState(t, a); !st.Reached.Equal(minutes(10)) {
		t.Fatalf("Release moved reached to %v", st.Reached)
	}
}

func reconRace(t *testing.T, a, b ports.Reconciliations) {
	const rounds, askers = 5, 8
	for round := range rounds {
		now := minutes(round * 10)
		var held atomic.Int32
		var holder atomic.Value
		errs := concurrently(askers, func(i int) error {
			r := []ports.Reconciliations{a, b}[i%2]
			name := fmt.Sprintf("instance%d", i)
			ok, err := r.HoldReconciliation(context.Background(), name, now, now.Add(time.Minute))
			if ok {
				held.Add(1)
				holder.Store(name)
			}
			return err
		})
		for _, err := range errs {
			if err != nil {
				t.Fatalf("round %d: HoldReconciliation: %v", round, err)
			}
		}
		if n := held.Load(); n != 1 {
			t.Fatalf("round %d: %d instances hold the reconciliation, want 1", round, n)
		}
		name := holder.Load().(string)
		if st := reconState(t, a); st.Holder != name {
			t.Fatalf("round %d: the store says %q holds it, the winner was %q", round, st.Holder, name)
		}
		if err := b.CompleteReconciliation(context.Background(), name, now.Add(time.Minute)); err != nil {
			t.Fatalf("round %d: Complete: %v", round, err)
		}
	}
	if st := reconState(t, b); !st.Reached.Equal(minutes((rounds-1)*10 + 1)) {
		t.Fatalf("reached %v after the rounds", st.Reached)
	}
}
