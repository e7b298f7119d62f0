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
	for _, j := range a.jobs {
		wg.Go(func() {
			every(ctx, j.interval, j.run, func(err error) { log.Error(j.name, slog.String("error", err.Error())) })
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
