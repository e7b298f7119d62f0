package main

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/pixgate/pixgate/application"
)

// The background work of a serving pixgate comes in two shapes: jobs, which sweep the store
// (expiry, ledger recovery, the payout outbox, the sandbox's settling), and workers, which loop by themselves
// until they are stopped (the webhook dispatcher, the instance heartbeat). Both belong to the
// process, not to a use case: the use cases offer RunOnce or Run, and this file decides when
// they run.
//
// Each job runs on its own, at start and then on its application.Pace: after a sweep that
// found work it looks again soon (after application.SweepShare times that sweep's duration,
// its interval at most); after one that found nothing it waits its interval, stretched to
// SweepShare times the sweep's duration on a slow store, so that sweeps finding nothing on
// FerretDB, which reads the whole collection for them, keep the store busy a hundredth of the
// time per job; and never longer than its bound, whatever the store costs (where the bound
// cuts a wait short, the job takes more of the store's time: the bound wins; only a sweep
// longer than the bound is followed by as long a wait, so that a job sweeping for nothing
// keeps the store busy half the time at most). So no job waits behind another's sweep or
// cost, and work that is due (a change a crash left without its entries, a refund to settle,
// an expiry) is acted on within the job's bound plus the sweep's own time. The dispatcher (a
// worker) paces its idle polls the same way (application.DispatcherConfig.MaxPollInterval),
// and so does the payout outbox (a job). docs/STORAGE.md, "Background work" states the bounds; a
// change to the paces below changes them. On FerretDB on SQLite, whose sweeps read every
// document, the bounds cost the store's time (docs/PERFORMANCE.md measures how much).
//
// The jobs used to take turns and share one budget (after any sweep that took d, no sweep of
// any job for 19 times d): on FerretDB under load, with sweeps of a second or more, ledger
// recovery then came round every minute or two, and the books stayed incomplete that long
// after a crash.

// The paces of the jobs (application.Pace: the usual interval, and the bound on any wait).
const (
	// expiryEvery and expiryBound: an unpaid charge is FAILED within about 20 s of its expiry.
	expiryEvery = 10 * time.Second
	expiryBound = 20 * time.Second
	// recoverEvery and recoverBound: Recover takes what is older than RecoverAfter (10 s, or
	// twice PIXGATE_MONGODB_TIMEOUT), so after a crash each change has its entries within
	// 10 s + recoverBound + a sweep of the instance being up again. The bound is the shortest
	// of all: recovery's sweep is the dearest on FerretDB (it reads the ledger too), but the
	// books must not stay incomplete for long (under 30 s, the kill suite checks, on a busy
	// machine; with a bound of 10 s it took up to 25 s there).
	recoverEvery = 2 * time.Second
	recoverBound = 5 * time.Second
	// sandboxSettleBound bounds the sandbox's settling: a refund, an accepted dispute or a
	// withdrawal completes within PIXGATE_SANDBOX_SETTLE_SECONDS + 3 s + a sweep.
	sandboxSettleBound = 3 * time.Second
	// webhookPollBound bounds the dispatcher's idle poll: an event is claimed within 5 s + a
	// look.
	webhookPollBound = 5 * time.Second
	// payoutEvery and payoutBound pace the payout outbox with a PSP: a withdrawal's payout
	// leaves within about a second of its creation on a fast store, within 5 s + a sweep on a
	// slow one, and a payout due to be read back is read within the same bound. (The
	// sandbox's payouts keep the pace of its settling: wire_payouts.go.)
	payoutEvery = time.Second
	payoutBound = 5 * time.Second
)

// job is a sweep of the store, run at start and then on its pace.
type job struct {
	name string
	pace application.Pace
	run  func(context.Context) (int, error)
}

// worker is a task that runs until its context ends and then answers how it stopped.
type worker struct {
	name string
	run  func(context.Context) error
}

// timers is what the scheduler needs of time: the system's, or a test's fake clock.
type timers interface {
	Now() time.Time
	After(time.Duration) <-chan time.Time
}

// systemTimers is the system's time.
type systemTimers struct{}

func (systemTimers) Now() time.Time                         { return time.Now() }
func (systemTimers) After(d time.Duration) <-chan time.Time { return time.After(d) }

// sweepOn runs fn at once and then on pace until ctx ends, timed by clock; fn answers how much
// work it found. Errors go to report; the loop keeps going, since a store that is down now may
// be back next time.
func sweepOn(ctx context.Context, clock timers, pace application.Pace, fn func(context.Context) (int, error), report func(error)) {
	for {
		start := clock.Now()
		n, err := fn(ctx)
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			report(err)
		}
		select {
		case <-ctx.Done():
			return
		case <-clock.After(pace.Next(clock.Now().Sub(start), n > 0)):
		}
	}
}

// runJobs runs each job on its own until ctx ends; the function it returns waits for all of
// them to have stopped.
func runJobs(ctx context.Context, clock timers, jobs []job, log *slog.Logger) (wait func()) {
	var wg sync.WaitGroup
	for _, j := range jobs {
		wg.Go(func() {
			sweepOn(ctx, clock, j.pace, j.run, func(err error) { log.Error(j.name, slog.String("error", err.Error())) })
		})
	}
	return wg.Wait
}

// every runs fn at once and then every interval until ctx ends. Errors go to report; the loop
// keeps going. It is for what must happen on time whatever it costs (the heartbeat that keeps
// an instance in the registry), not for sweeps of the store.
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
	wg.Go(runJobs(ctx, systemTimers{}, a.jobs, log))
	for _, w := range a.workers {
		wg.Go(func() {
			if err := w.run(ctx); err != nil {
				log.Error(w.name, slog.String("error", err.Error()))
			}
		})
	}
	return wg.Wait
}
