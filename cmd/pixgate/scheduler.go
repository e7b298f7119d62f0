package main

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// The background work of a serving pixgate comes in two shapes: jobs, which sweep the store
// every interval (expiry, ledger recovery, the sandbox's settling), and workers, which loop by
// themselves until they are stopped (the webhook dispatcher). Both belong to the process, not
// to a use case: the use cases offer RunOnce or Run, and this file decides when they run.

// job is a task run at start and then every interval.
type job struct {
	name     string
	interval time.Duration
	run      func(context.Context) (int, error)
}

// worker is a task that runs until its context ends and then answers how it stopped.
type worker struct {
	name string
	run  func(context.Context) error
}

// sweepShare bounds the share of the time the jobs' sweeps may keep the store busy, all jobs
// of an instance together: the jobs take turns (one sweep at a time), and after a sweep that
// took d no sweep of any job starts sooner than (sweepShare-1) times d later; and a job's next
// sweep starts no sooner than sweepShare times its last one's duration, even when its interval
// is shorter. On a store that answers a sweep from an index (MongoDB, the memory store) a
// sweep takes a millisecond or so and the intervals rule. On one that reads the whole
// collection for it (FerretDB v1 on SQLite, whose only indexed look-up is by _id), a sweep's
// cost grows with the collection: at 700 stored transactions the sweeps every 500 ms to 10 s
// (sandbox settling, expiry, ledger recovery) kept FerretDB busy for most of a core with no
// request at all, and creations got what was left; paced one by one, four jobs still took up
// to a fifth of its time. Bounded so, the jobs of an instance take at most a twentieth of the
// store's time, and what they sweep for is found later on such a store, never lost.
const sweepShare = 20

// sweepBudget makes the jobs of one instance take turns and spaces their sweeps so that,
// together, they keep the store busy for at most 1/sweepShare of the time.
type sweepBudget struct {
	turn chan struct{} // holds one token: the right to sweep
	next time.Time     // no sweep starts before; guarded by turn
}

func newSweepBudget() *sweepBudget {
	b := &sweepBudget{turn: make(chan struct{}, 1)}
	b.turn <- struct{}{}
	return b
}

// sweep waits for the turn and the budget, runs fn, and charges its duration; it answers how
// long fn took, or ctx's error when ctx ends first.
func (b *sweepBudget) sweep(ctx context.Context, fn func(context.Context) (int, error)) (time.Duration, error) {
	select {
	case <-b.turn:
	case <-ctx.Done():
		return 0, ctx.Err()
	}
	defer func() { b.turn <- struct{}{} }()
	if wait := time.Until(b.next); wait > 0 {
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return 0, ctx.Err()
		case <-t.C:
		}
	}
	start := time.Now()
	_, err := fn(ctx)
	took := time.Since(start)
	b.next = time.Now().Add((sweepShare - 1) * took)
	return took, err
}

// sweepEvery runs a job's fn at once and then every interval, or every sweepShare times the
// last run's duration when that is longer, each run taking its turn in budget, until ctx ends.
// Errors go to report.
func sweepEvery(ctx context.Context, budget *sweepBudget, interval time.Duration, fn func(context.Context) (int, error), report func(error)) {
	for {
		took, err := budget.sweep(ctx, fn)
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			report(err)
		}
		t := time.NewTimer(sweepWait(interval, took))
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
}

// sweepWait is the wait before the next sweep of a job whose last sweep took took.
func sweepWait(interval, took time.Duration) time.Duration {
	return max(interval, sweepShare*took)
}

// every runs fn at once and then every interval until ctx ends. Errors go to report; the loop
// keeps going, since a store that is down now may be back next time.
func every(ctx context.Context, interval time.Duration, fn func(context.Context) (int, error), report func(error)) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		if _, err := fn(ctx); err != nil && ctx.Err() == nil {
			report(err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// startBackground runs every job and worker of the app until ctx ends; the function it
// returns waits for all of them to have stopped.
func (a *app) startBackground(ctx context.Context, log *slog.Logger) (wait func()) {
	var wg sync.WaitGroup
	budget := newSweepBudget()
	for _, j := range a.jobs {
		wg.Go(func() {
			sweepEvery(ctx, budget, j.interval, j.run, func(err error) { log.Error(j.name, slog.String("error", err.Error())) })
		})
	}
	for _, w := range a.workers {
		wg.Go(func() {
			if err := w.run(ctx); err != nil {
				log.Error(w.name, slog.String("error", err.Error()))
			}
		})
	}
	return wg.Wait
}
