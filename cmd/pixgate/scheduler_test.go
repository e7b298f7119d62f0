package main

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// A sweep answered from an index waits its interval; one that reads a whole collection on a
// slow store waits sweepShare times what it took, so that the sweeps never keep the store busy
// for more than a small share of the time.
func TestSweepWaitBoundsTheStoreShareOfSweeps(t *testing.T) {
	for _, c := range []struct {
		interval, took, want time.Duration
	}{
		{10 * time.Second, time.Millisecond, 10 * time.Second},
		{500 * time.Millisecond, 2 * time.Millisecond, 500 * time.Millisecond},
		{500 * time.Millisecond, 140 * time.Millisecond, sweepShare * 140 * time.Millisecond},
		{10 * time.Second, 2 * time.Second, sweepShare * 2 * time.Second},
		{10 * time.Second, 0, 10 * time.Second},
	} {
		if got := sweepWait(c.interval, c.took); got != c.want {
			t.Errorf("sweepWait(%s, %s) = %s, want %s", c.interval, c.took, got, c.want)
		}
	}
}

// The jobs of an instance take turns and, together, keep the store busy for at most a
// sweepShare-th of the time: three jobs whose sweeps take 10 ms, each asking for a sweep every
// millisecond, run one at a time and about five times a second in all (each paced alone, they
// would run fifteen times).
func TestJobsShareOneSweepBudget(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	budget := newSweepBudget()
	var running, overlaps, sweeps atomic.Int32
	sweep := func(context.Context) (int, error) {
		if running.Add(1) > 1 {
			overlaps.Add(1)
		}
		sweeps.Add(1)
		time.Sleep(10 * time.Millisecond)
		running.Add(-1)
		return 0, nil
	}
	var wg sync.WaitGroup
	for range 3 {
		wg.Go(func() { sweepEvery(ctx, budget, time.Millisecond, sweep, func(err error) { t.Error(err) }) })
	}
	wg.Wait()
	if overlaps.Load() > 0 {
		t.Fatalf("%d sweeps ran beside another", overlaps.Load())
	}
	// 10 ms of sweeping, then 190 ms of rest: at most 6 starts in a second, with slack for a
	// slow machine's longer sleeps (which only space them more).
	if n := sweeps.Load(); n < 2 || n > 7 {
		t.Fatalf("%d sweeps in a second, want 2 to 7", n)
	}
}
