package qr_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/pixgate/pixgate/adapters/qr"
	"github.com/pixgate/pixgate/ports"
)

// The drawing process of these tests is this test binary, started with a first argument that
// TestMain recognises before any test flag is read: "qr-worker" draws as pixgate qr-worker
// does; the others draw something the tests can read back (the process's priority, its
// environment) or draw only when told to (to fill the queue without timing).
func TestMain(m *testing.M) {
	if len(os.Args) > 2 && strings.HasPrefix(os.Args[1], "qr-worker") {
		os.Exit(testWorker(os.Args[1], os.Args[len(os.Args)-1]))
	}
	os.Exit(m.Run())
}

func testWorker(kind, inFlight string) int {
	n, err := strconv.Atoi(inFlight)
	if err != nil {
		fmt.Fprintln(os.Stderr, "in flight:", err)
		return 2
	}
	// The held process answers at the process's priority: its tests time its answers, which the
	// lowest priority would leave to the load of the machine.
	if kind != "qr-worker-held" {
		if err := qr.LowerProcessPriority(); err != nil {
			fmt.Fprintln(os.Stderr, "priority:", err)
			return 2
		}
	}
	opts := qr.WorkerOptions(n)
	var r *qr.Renderer
	switch kind {
	case "qr-worker":
		r = qr.New(opts)
	case "qr-worker-priority":
		// Draws on a new goroutine's thread whatever the process's priority is, as a drawing
		// thread would be.
		r = qr.NewRendererWithDraw(opts, func(string) ([]byte, error) {
			tid := syscall.Gettid()
			p, err := syscall.Getpriority(syscall.PRIO_PROCESS, tid)
			policy, _, e := syscall.RawSyscall(syscall.SYS_SCHED_GETSCHEDULER, uintptr(tid), 0, 0)
			if e != 0 {
				err = e
			}
			return []byte(fmt.Sprintf("priority %d policy %d", p, policy)), err
		})
	case "qr-worker-environ":
		r = qr.NewRendererWithDraw(opts, func(string) ([]byte, error) { return []byte(strings.Join(os.Environ(), "\n")), nil })
	case "qr-worker-held":
		// Draws only content "go"; anything else waits until the process is killed.
		r = qr.NewRendererWithDraw(opts, func(c string) ([]byte, error) {
			if c != "go" {
				select {}
			}
			return []byte("drawn"), nil
		})
	default:
		return 2
	}
	if err := qr.ServeWorker(os.Stdin, os.Stdout, r); err != nil {
		fmt.Fprintln(os.Stderr, "worker:", err)
		return 1
	}
	return 0
}

func newProcessRenderer(t *testing.T, kind string, workers, queue int) *qr.ProcessRenderer {
	t.Helper()
	r, err := qr.NewProcessRenderer(qr.ProcessOptions{Command: []string{os.Args[0], kind}, Workers: workers, Queue: queue, Stderr: os.Stderr})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = r.Close(ctx)
	})
	return r
}

func TestProcessRendererDrawsWhatTheRendererDraws(t *testing.T) {
	r := newProcessRenderer(t, "qr-worker", 2, 0)
	if err := r.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	in := qr.NewRenderer(1)
	var wg sync.WaitGroup
	for i, content := range []string{short, longest, short + "x", "A", strings.Repeat("9", 2000)} {
		wg.Go(func() {
			got, err := r.RenderPNG(context.Background(), content)
			if err != nil {
				t.Errorf("%d: %v", i, err)
				return
			}
			want, err := in.RenderPNG(context.Background(), content)
			if err != nil {
				t.Errorf("%d: in process: %v", i, err)
				return
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%d: the process drew %d bytes, the renderer %d, not the same", i, len(got), len(want))
			}
		})
	}
	wg.Wait()
}

func TestProcessRendererRefusesWhatTheRendererRefuses(t *testing.T) {
	r := newProcessRenderer(t, "qr-worker", 1, 0)
	for name, content := range map[string]string{
		"empty":                          "",
		"not ASCII (the parent sees it)": "São Paulo",
		"too long for a QR code (the process sees it)": strings.Repeat("x", 3000),
		"longer than any frame (the parent sees it)":   strings.Repeat("x", 5000),
	} {
		if _, err := r.RenderPNG(context.Background(), content); !errors.Is(err, qr.ErrContent) {
			t.Errorf("%s: %v, want ErrContent", name, err)
		}
	}
	// The process is still there for the next image.
	if _, err := r.RenderPNG(context.Background(), short); err != nil {
		t.Fatal(err)
	}
}

func TestProcessRendererRunsAtTheLowestPriorityWithNothingOfTheParentsEnvironment(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("priorities are lowered on Linux only")
	}
	t.Setenv("PIXGATE_CREDENTIAL_KEY", "a secret that must stay in the parent")
	prio := newProcessRenderer(t, "qr-worker-priority", 2, 0)
	for range 4 {
		got, err := prio.RenderPNG(context.Background(), "x")
		if err != nil {
			t.Fatal(err)
		}
		// getpriority answers 20 - nice; SCHED_IDLE is policy 5.
		if string(got) != "priority 1 policy 5" {
			t.Fatalf("drawn at %s, want priority 1 (nice 19) policy 5 (SCHED_IDLE)", got)
		}
	}
	env := newProcessRenderer(t, "qr-worker-environ", 3, 0)
	got, err := env.RenderPNG(context.Background(), "x")
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != "GOMAXPROCS=3" {
		t.Fatalf("the process's environment is %q, want GOMAXPROCS=3 alone", got)
	}
}

func TestProcessRendererRefusesBeyondItsQueueAndFailsItsCallsWhenTheProcessEnds(t *testing.T) {
	r := newProcessRenderer(t, "qr-worker-held", 1, 2)
	if got := r.InFlight(); got != 3 {
		t.Fatalf("in flight %d, want 3", got)
	}
	// Three calls take the three places (one drawing for ever, two queued), the fourth is
	// refused at once.
	held := make(chan error, 3)
	for range 3 {
		go func() {
			_, err := r.RenderPNG(context.Background(), "wait")
			held <- err
		}()
	}
	for deadline := time.Now().Add(10 * time.Second); r.Busy() < 3; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d calls in flight, want 3", r.Busy())
		}
	}
	if _, err := r.RenderPNG(context.Background(), "go"); !errors.Is(err, ports.ErrOverloaded) {
		t.Fatalf("a fourth call answered %v, want ErrOverloaded", err)
	}
	// The process ends: the calls in flight answer ErrOverloaded, so that their creations are
	// refused with nothing stored.
	if err := syscall.Kill(qr.ProcessPID(r), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		select {
		case err := <-held:
			if !errors.Is(err, ports.ErrOverloaded) {
				t.Fatalf("a call in flight when the process ended answered %v, want ErrOverloaded", err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("a call in flight never answered after the process ended")
		}
	}
	// A new process is started, at most once a second; its places are all free again.
	deadline := time.Now().Add(10 * time.Second)
	for {
		got, err := r.RenderPNG(context.Background(), "go")
		if err == nil {
			if string(got) != "drawn" {
				t.Fatalf("drew %q", got)
			}
			break
		}
		if !errors.Is(err, ports.ErrOverloaded) || time.Now().After(deadline) {
			t.Fatalf("after the process ended: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestProcessRendererGivesBackTheCallsPlaceWhenItsAnswerComesAfterTheCallerLeft(t *testing.T) {
	r := newProcessRenderer(t, "qr-worker", 1, 1)
	for range 20 {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, _ = r.RenderPNG(ctx, longest) // refused before it is sent
		ctx, cancel = context.WithTimeout(context.Background(), time.Microsecond)
		_, err := r.RenderPNG(ctx, longest)
		cancel()
		// A place still held by an earlier call whose caller left refuses this one.
		if err != nil && !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, ports.ErrOverloaded) {
			t.Fatal(err)
		}
	}
	// Every answer comes in the end and frees its place: two calls at once fit again.
	deadline := time.Now().Add(10 * time.Second)
	for {
		var wg sync.WaitGroup
		errs := make([]error, 2)
		for i := range 2 {
			wg.Go(func() { _, errs[i] = r.RenderPNG(context.Background(), short) })
		}
		wg.Wait()
		if errors.Join(errs...) == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("places never freed: %v", errors.Join(errs...))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestProcessRendererCloseEndsTheProcess(t *testing.T) {
	r := newProcessRenderer(t, "qr-worker", 1, 0)
	if _, err := r.RenderPNG(context.Background(), short); err != nil {
		t.Fatal(err)
	}
	pid := qr.ProcessPID(r)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := r.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Fatalf("process %d still there after Close: %v", pid, err)
	}
	if _, err := r.RenderPNG(context.Background(), short); err == nil {
		t.Fatal("drew after Close")
	}
}

func TestProcessRendererNeedsACommandThatRuns(t *testing.T) {
	if _, err := qr.NewProcessRenderer(qr.ProcessOptions{}); err == nil {
		t.Fatal("no command accepted")
	}
	r, err := qr.NewProcessRenderer(qr.ProcessOptions{Command: []string{"/nonexistent/pixgate", "qr-worker"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Start(context.Background()); err == nil || !strings.Contains(err.Error(), "/nonexistent/pixgate") {
		t.Fatalf("start: %v, want an error naming the command", err)
	}
}

// newTimedProcessRenderer is newProcessRenderer with a deadline per drawing.
func newTimedProcessRenderer(t *testing.T, kind string, workers, queue int, timeout time.Duration) *qr.ProcessRenderer {
	t.Helper()
	r, err := qr.NewProcessRenderer(qr.ProcessOptions{Command: []string{os.Args[0], kind}, Workers: workers, Queue: queue,
		Stderr: os.Stderr, Timeout: timeout})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = r.Close(ctx)
	})
	return r
}

// gone waits until process pid no longer exists (the renderer reaps what it kills).
func gone(t *testing.T, pid int) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); syscall.Kill(pid, 0) == nil; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("process %d still there", pid)
		}
	}
}

func TestProcessRendererReplacesAProcessThatStopsAnswering(t *testing.T) {
	// The watchdog's margin: a deadline of 1 s answers within a few seconds even on a busy
	// machine, and never near the minute the request used to wait.
	const timeout, margin = time.Second, 5 * time.Second
	cases := []struct {
		name    string
		calls   int
		content string
	}{
		{"one drawing of a stopped process answers ErrTimedOut", 1, short},
		{"every call queued behind a stopped process answers", 6, short},
		// 40 calls of 4000 bytes overflow the pipe's 64 KiB: the writes themselves block
		// until the watchdog kills the process.
		{"calls whose writes block on a stopped process's full pipe answer", 40, strings.Repeat("9", 4000)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := newTimedProcessRenderer(t, "qr-worker", 1, tc.calls, timeout)
			if err := r.Start(context.Background()); err != nil {
				t.Fatal(err)
			}
			stopped := qr.ProcessPID(r)
			if err := syscall.Kill(stopped, syscall.SIGSTOP); err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			errs := make(chan error, tc.calls)
			for range tc.calls {
				go func() {
					_, err := r.RenderPNG(context.Background(), tc.content)
					errs <- err
				}()
			}
			timedOut := 0
			for range tc.calls {
				select {
				case err := <-errs:
					switch {
					case errors.Is(err, ports.ErrTimedOut):
						timedOut++
					case errors.Is(err, ports.ErrOverloaded): // in flight when the process was killed
					case err == nil: // sent late, on a loaded machine, to the process that replaced it
					default:
						t.Fatalf("a call to a stopped process answered %v, want ErrTimedOut or ErrOverloaded", err)
					}
				case <-time.After(timeout + margin):
					t.Fatalf("a call to a stopped process still waits after %v", time.Since(start))
				}
			}
			if elapsed := time.Since(start); elapsed < timeout {
				t.Fatalf("the calls answered after %v, before their deadline of %v", elapsed, timeout)
			}
			if timedOut == 0 {
				t.Fatal("no call answered ErrTimedOut")
			}
			gone(t, stopped)
			// The watchdog starts another process by itself, and it draws.
			for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
				if pid := qr.ProcessPID(r); pid != 0 && pid != stopped {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("no new drawing process 10 s after the watchdog killed %d", stopped)
				}
			}
			// Start draws without a deadline: on a loaded machine the lowest priority may take
			// longer than this test's short one to draw, which is not what is tested here.
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			if err := r.Start(ctx); err != nil {
				t.Fatalf("the new process does not draw: %v", err)
			}
			if r.Busy() != 0 {
				t.Fatalf("%d places still taken once every call answered", r.Busy())
			}
		})
	}
}

func TestProcessRendererStartWaitsForTheFirstImageAsLongAsItsContextAllows(t *testing.T) {
	// The first image pays for the process's start, which a loaded machine can stretch past a
	// drawing's deadline: Start has no deadline but its context's.
	r := newTimedProcessRenderer(t, "qr-worker-held", 1, 0, 50*time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if err := r.Start(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Start with a drawing that never ends: %v, want the context's DeadlineExceeded", err)
	}
}

func TestProcessRendererKeepsAProcessThatAnswersSlowly(t *testing.T) {
	// One call held for ever, one answered: the held one's deadline passes, but the process
	// answered meanwhile, so it is slow rather than stuck and keeps running.
	r := newTimedProcessRenderer(t, "qr-worker-held", 2, 0, 2*time.Second)
	if _, err := r.RenderPNG(context.Background(), "go"); err != nil {
		t.Fatal(err)
	}
	pid := qr.ProcessPID(r)
	held := make(chan error, 1)
	go func() {
		_, err := r.RenderPNG(context.Background(), "wait")
		held <- err
	}()
	for deadline := time.Now().Add(10 * time.Second); r.Busy() < 1; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the held call never went out")
		}
	}
	if _, err := r.RenderPNG(context.Background(), "go"); err != nil {
		t.Fatalf("a call beside the held one: %v", err)
	}
	select {
	case err := <-held:
		if !errors.Is(err, ports.ErrTimedOut) {
			t.Fatalf("the held call answered %v, want ErrTimedOut", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("the held call never answered")
	}
	if got := qr.ProcessPID(r); got != pid {
		t.Fatalf("the process %d that answered was replaced by %d", pid, got)
	}
	if _, err := r.RenderPNG(context.Background(), "go"); err != nil {
		t.Fatalf("after the held call gave up: %v", err)
	}
}
