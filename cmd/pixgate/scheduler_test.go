package main

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/pixgate/pixgate/application"
)

// The scheduler's tests run on fakeTimers: time moves only when the test or a job's fake sweep
// moves it, so a bound of seconds is checked without waiting for it.

// A job sweeps at once at start, then on its pace: soon after a sweep that found work, its
// interval (stretched on a slow store, up to its bound) after one that found nothing, and on
// after a failure, which it reports.
func TestAJobSweepsOnItsPace(t *testing.T) {
	clock := newFakeTimers()
	pace := application.Pace{Interval: 500 * time.Millisecond, Bound: 3 * time.Second}
	type sweep struct {
		took  time.Duration
		found int
		err   error
	}
	script := []sweep{
		{took: time.Millisecond, found: 3},     // work on a fast store: again after 100 ms
		{took: time.Millisecond},               // nothing: the interval, 500 ms
		{took: 20 * time.Millisecond},          // nothing on a slow store: 100 times, 2 s
		{took: 2 * time.Second, found: 1},      // work on a very slow store: the interval
		{took: 2 * time.Second},                // nothing on a very slow store: the bound, 3 s
		{took: time.Second, err: errStoreDown}, // a failure: like nothing found, 3 s
		{took: time.Millisecond},
	}
	wantGaps := []time.Duration{ // from the end of a sweep to the start of the next
		100 * time.Millisecond, 500 * time.Millisecond, 2 * time.Second, 500 * time.Millisecond, 3 * time.Second, 3 * time.Second,
	}
	var starts, ends []time.Time
	var reported []error
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		sweepOn(ctx, clock, pace, func(context.Context) (int, error) {
			s := script[len(starts)]
			starts = append(starts, clock.Now())
			clock.advance(s.took)
			ends = append(ends, clock.Now())
			if len(starts) == len(script) {
				cancel()
			}
			return s.found, s.err
		}, func(err error) { reported = append(reported, err) })
	}()
	for range len(script) - 1 {
		clock.fireNext(t, ctx, 1)
	}
	waitDone(t, done)
	if !starts[0].Equal(clock.start) {
		t.Errorf("the first sweep started at %s, not at once", starts[0].Sub(clock.start))
	}
	var gaps []time.Duration
	for i := 1; i < len(starts); i++ {
		gaps = append(gaps, starts[i].Sub(ends[i-1]))
	}
	if !slices.Equal(gaps, wantGaps) {
		t.Errorf("waits between sweeps %v, want %v", gaps, wantGaps)
	}
	if len(reported) != 1 || !errors.Is(reported[0], errStoreDown) {
		t.Errorf("reported %v, want the one failure", reported)
	}
}

// After a crash, the ledger's recovery must not wait behind other jobs: here another job's
// sweep never ends (a store that hangs on its collection) and a third found nothing in a
// minute, just before recovery's first sweep; recovery still sweeps on its own pace, never
// more than recoverBound after its last sweep ended. Under the shared budget it replaced, it
// would not have swept again for nineteen minutes, nor ever while the other sweep hung. (Its
// first sweep, which waited for the slow one, took a minute, and is followed by a minute's
// wait: a sweep longer than the bound is; the gaps after the second sweep are checked.)
func TestRecoveryNeverWaitsBehindTheOtherJobs(t *testing.T) {
	clock := newFakeTimers()
	ctx, cancel := context.WithCancel(context.Background())
	hung, slowSwept := make(chan struct{}), make(chan struct{})
	var mu sync.Mutex
	var starts, ends []time.Time
	const sweeps = 7
	jobs := []job{
		{name: "hanging", pace: application.Pace{Interval: time.Second, Bound: time.Second}, run: func(ctx context.Context) (int, error) {
			close(hung)
			<-ctx.Done()
			return 0, ctx.Err()
		}},
		// One sweep (then it waits an hour): the clock moves only for it.
		{name: "slow", pace: application.Pace{Interval: time.Second, Bound: time.Hour}, run: func(context.Context) (int, error) {
			clock.advance(time.Minute)
			close(slowSwept)
			return 0, nil
		}},
		{name: recoverJobName, pace: application.Pace{Interval: recoverEvery, Bound: recoverBound}, run: func(context.Context) (int, error) {
			<-slowSwept
			mu.Lock()
			defer mu.Unlock()
			starts = append(starts, clock.Now())
			clock.advance(2 * time.Second) // a slow store: stretched, the wait would be 200 s
			ends = append(ends, clock.Now())
			if len(starts) == sweeps {
				cancel()
			}
			return 0, nil
		}},
	}
	wait := runJobs(ctx, clock, jobs, slog.New(slog.NewTextHandler(io.Discard, nil)))
	<-hung
	// Two jobs wait on the clock at a time (the hanging one never does): fire whichever is
	// due first until recovery has swept enough, within a bounded number of steps.
	for i := 0; ; i++ {
		mu.Lock()
		n := len(starts)
		mu.Unlock()
		if n >= sweeps {
			break
		}
		if i > 1000 {
			t.Fatalf("recovery swept %d times in 1000 steps of the clock", n)
		}
		clock.fireNext(t, ctx, 2)
	}
	waitDone(t, waitChan(wait))
	for i := 2; i < len(starts); i++ {
		if gap := starts[i].Sub(ends[i-1]); gap > recoverBound {
			t.Errorf("recovery's sweep %d started %s after the one before ended, more than its bound %s", i+1, gap, recoverBound)
		}
	}
}

// A job that finds work looks again soon, while another job's idle sweep, slow on this store,
// is stretched: a backlog drains in sweeps 101 ms apart (1 ms each, then 100 times that), where
// the other job waits 10 s after its sweep of a second. (The draining job's first sweep waits
// for the other's to have moved the clock, so its gaps from the second on are checked.)
func TestAJobThatFindsWorkDoesNotWaitForAnotherJobsIdleSweeps(t *testing.T) {
	clock := newFakeTimers()
	ctx, cancel := context.WithCancel(context.Background())
	idleSwept := make(chan struct{})
	var mu sync.Mutex
	var starts []time.Time
	backlog := 5
	jobs := []job{
		// One sweep of a second (then it waits 10 s): the clock moves only for it.
		{name: "idle", pace: application.Pace{Interval: time.Second, Bound: 10 * time.Second}, run: func(context.Context) (int, error) {
			clock.advance(time.Second)
			close(idleSwept)
			return 0, nil
		}},
		{name: "draining", pace: application.Pace{Interval: 500 * time.Millisecond, Bound: 3 * time.Second}, run: func(context.Context) (int, error) {
			if len(starts) == 0 {
				<-idleSwept
			}
			mu.Lock()
			defer mu.Unlock()
			starts = append(starts, clock.Now())
			clock.advance(time.Millisecond)
			if backlog == 0 {
				cancel()
				return 0, nil
			}
			backlog--
			return 100, nil
		}},
	}
	wait := runJobs(ctx, clock, jobs, slog.New(slog.NewTextHandler(io.Discard, nil)))
	for i := 0; ; i++ {
		mu.Lock()
		n := len(starts)
		mu.Unlock()
		if n > 5 {
			break
		}
		if i > 100 {
			t.Fatalf("the draining job swept %d times in 100 steps of the clock", n)
		}
		clock.fireNext(t, ctx, 2)
	}
	waitDone(t, waitChan(wait))
	for i := 2; i < 6; i++ {
		if gap := starts[i].Sub(starts[i-1]); gap != 101*time.Millisecond {
			t.Errorf("sweep %d of the draining job came %s after the one before, want 101 ms", i+1, gap)
		}
	}
}

var errStoreDown = errors.New("the store is down")

// fakeTimers is a clock that moves only when told: advance moves it (a fake sweep taking its
// time) and fires the timers it passes; fireNext moves it to the earliest timer.
type fakeTimers struct {
	start time.Time
	asked chan struct{} // one value per After call

	mu      sync.Mutex
	now     time.Time
	pending []fakeTimer
}

type fakeTimer struct {
	at time.Time
	c  chan time.Time
}

func newFakeTimers() *fakeTimers {
	start := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	return &fakeTimers{start: start, now: start, asked: make(chan struct{}, 1000)}
}

func (f *fakeTimers) Now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

func (f *fakeTimers) After(d time.Duration) <-chan time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	c := make(chan time.Time, 1)
	if d <= 0 {
		c <- f.now
	} else {
		f.pending = append(f.pending, fakeTimer{at: f.now.Add(d), c: c})
	}
	f.asked <- struct{}{}
	return c
}

func (f *fakeTimers) advance(d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.moveTo(f.now.Add(d))
}

// moveTo sets the time to at and fires every timer due by then; f.mu is held.
func (f *fakeTimers) moveTo(at time.Time) {
	f.now = at
	f.pending = slices.DeleteFunc(f.pending, func(t fakeTimer) bool {
		if t.at.After(at) {
			return false
		}
		t.c <- t.at
		return true
	})
}

// fireNext waits until waiting timers are pending (every job that is not in a sweep waits on
// one), then moves the time to the earliest and fires it; or until ctx ends (a job ended the
// test), and then does nothing.
func (f *fakeTimers) fireNext(t *testing.T, ctx context.Context, waiting int) {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for ctx.Err() == nil {
		f.mu.Lock()
		if len(f.pending) >= waiting {
			earliest := slices.MinFunc(f.pending, func(a, b fakeTimer) int { return a.at.Compare(b.at) })
			f.moveTo(earliest.at)
			f.mu.Unlock()
			return
		}
		f.mu.Unlock()
		select {
		case <-f.asked:
		case <-ctx.Done():
		case <-deadline:
			t.Fatalf("fewer than %d jobs wait on the clock after 30 s", waiting)
		}
	}
}

// waitChan is closed once wait returns.
func waitChan(wait func()) <-chan struct{} {
	c := make(chan struct{})
	go func() {
		wait()
		close(c)
	}()
	return c
}

// waitDone fails the test unless done is closed within 30 s.
func waitDone(t *testing.T, done <-chan struct{}) {
	t.Helper()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("the jobs did not stop within 30 s of their context's end")
	}
}
