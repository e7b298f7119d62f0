package main

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"image/png"
	"net/http"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// serve draws QR images in a child process (PIXGATE_QR_PROCESS, docs/OPERATIONS.md "Container image"): this
// test binary, started as "qr-worker" (TestMain). These tests run serve as the program runs it
// and look at that process from outside: it exists while serve runs, at the lowest priority,
// creations draw through it, a crash of it costs the creations in flight a 503 and nothing
// more, and it ends with serve.

// qrWorkers lists the pids of this process's children started as qr-worker.
func qrWorkers(t *testing.T) []int {
	t.Helper()
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		t.Skipf("no /proc here: %v", err)
	}
	var pids []int
	for _, task := range tasks {
		b, _ := os.ReadFile("/proc/self/task/" + task.Name() + "/children")
		for _, f := range strings.Fields(string(b)) {
			pid, _ := strconv.Atoi(f)
			cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
			if args := strings.Split(string(cmdline), "\x00"); len(args) > 1 && args[1] == "qr-worker" {
				pids = append(pids, pid)
			}
		}
	}
	return pids
}

// oneQRWorker waits until exactly one qr-worker child runs and returns it.
func oneQRWorker(t *testing.T) int {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		pids := qrWorkers(t)
		if len(pids) == 1 {
			return pids[0]
		}
		if time.Now().After(deadline) {
			t.Fatalf("qr-worker processes: %v, want one", pids)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestServeDrawsInAChildProcessThatSurvivesItsCrashesAndEndsWithServe(t *testing.T) {
	s := lgServe(t, map[string]string{"PIXGATE_SEED_CLIENTS": "QR Merchant:qr-merchant:" + lgSeedSecret, "PIXGATE_QR_CONCURRENCY": "2"})
	tok := s.token("qr-merchant", lgSeedSecret)
	pid := oneQRWorker(t)
	if prio, err := syscall.Getpriority(syscall.PRIO_PROCESS, pid); err != nil || prio != 1 {
		t.Fatalf("qr-worker %d runs at priority %d (%v), want 1 (nice 19)", pid, prio, err)
	}
	if policy, _, e := syscall.RawSyscall(syscall.SYS_SCHED_GETSCHEDULER, uintptr(pid), 0, 0); e != 0 || policy != 5 {
		t.Fatalf("qr-worker %d runs under scheduling policy %d (%v), want 5 (SCHED_IDLE)", pid, policy, e)
	}
	environ, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimRight(string(environ), "\x00"); got != "GOMAXPROCS=2" {
		t.Fatalf("qr-worker's environment is %q, want GOMAXPROCS=2 alone (no secret of serve's)", got)
	}

	create := func() response {
		return s.call("transaction.create", "POST", "/transaction", tok, minimalTransaction())
	}
	tx := s.want("create", create(), http.StatusCreated)
	pix, _ := tx["pixResponse"].(map[string]any)
	uri, _ := pix["qrCodeBase64"].(string)
	img, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(uri, "data:image/png;base64,"))
	if err != nil {
		t.Fatalf("pixResponse.qrCodeBase64 %.40q: %v", uri, err)
	}
	if _, err := png.Decode(bytes.NewReader(img)); err != nil {
		t.Fatalf("pixResponse.qrCodeBase64 is not a PNG: %v", err)
	}

	// The drawing process dies: creations answer 503 unavailable (nothing stored) until a new
	// one runs, at most a second or so later, and then succeed again.
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		r := create()
		if r.status == http.StatusCreated {
			break
		}
		if r.status != http.StatusServiceUnavailable || r.header.Get("Retry-After") == "" || time.Now().After(deadline) {
			t.Fatalf("a creation after the drawing process died: %d %s", r.status, r.body)
		}
		if code := fmt.Sprint(r.json(t)["code"]); code != "unavailable" {
			t.Fatalf("503 with code %q, want unavailable", code)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if again := oneQRWorker(t); again == pid {
		t.Fatalf("the drawing process %d still runs after SIGKILL", pid)
	}

	if err := s.stop(); err != nil {
		t.Fatal(err)
	}
	if pids := qrWorkers(t); len(pids) != 0 {
		t.Fatalf("qr-worker processes %v outlive serve", pids)
	}
}

func TestServeAnswers503AndReplacesADrawingProcessThatStopsAnswering(t *testing.T) {
	// The deadline of the drawings (PIXGATE_QR_TIMEOUT), and the margin the answer may take
	// beyond it on a busy machine: far from the minute a creation used to wait.
	const timeout, margin = time.Second, 6 * time.Second
	s := lgServe(t, map[string]string{"PIXGATE_SEED_CLIENTS": "QR Merchant:qr-merchant:" + lgSeedSecret,
		"PIXGATE_QR_CONCURRENCY": "1", "PIXGATE_QR_TIMEOUT": timeout.String()})
	tok := s.token("qr-merchant", lgSeedSecret)
	pid := oneQRWorker(t)
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGCONT) }) // should the watchdog fail
	body := minimalTransaction()
	body["idempotencyKey"] = "stopped-drawing-0001"

	start := time.Now()
	r := s.call("transaction.create", "POST", "/transaction", tok, body)
	elapsed := time.Since(start)
	if r.status != http.StatusServiceUnavailable || r.header.Get("Retry-After") == "" {
		t.Fatalf("a creation while the drawing process is stopped: %d (Retry-After %q) %s", r.status, r.header.Get("Retry-After"), r.body)
	}
	if code := fmt.Sprint(r.json(t)["code"]); code != "unavailable" {
		t.Fatalf("503 with code %q, want unavailable", code)
	}
	if elapsed < timeout || elapsed > timeout+margin {
		t.Fatalf("the 503 came after %v, want the deadline of %v and at most %v more", elapsed, timeout, margin)
	}

	t.Run("nothing was stored", func(t *testing.T) {
		list := s.want("list", s.call("transaction.list", "GET", "/transaction", tok, nil), http.StatusOK)
		if list["total"] != float64(0) {
			t.Fatalf("the list after a creation that got no QR code: %v", list)
		}
	})
	t.Run("the stopped process is killed and replaced", func(t *testing.T) {
		for deadline := time.Now().Add(10 * time.Second); syscall.Kill(pid, 0) == nil; time.Sleep(20 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("the stopped drawing process %d is still there", pid)
			}
		}
		if again := oneQRWorker(t); again == pid {
			t.Fatalf("the drawing process %d was not replaced", pid)
		}
		// The log reaches stderr in batches.
		for deadline := time.Now().Add(10 * time.Second); !strings.Contains(s.stderr.String(), "answered nothing within a drawing's deadline"); time.Sleep(20 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("the log says nothing of the kill:\n%s", s.stderr)
			}
		}
	})
	t.Run("the retry with the same key creates the charge", func(t *testing.T) {
		// The new process runs at the lowest priority: on a machine whose other work leaves
		// it no CPU for a whole deadline, a retry answers 503 again, as it should.
		for deadline := time.Now().Add(time.Minute); ; {
			r := s.call("transaction.create", "POST", "/transaction", tok, body)
			if r.status == http.StatusCreated {
				if r.header.Get("Idempotent-Replayed") != "" || r.json(t)["status"] != "PIX_QRCODE_GENERATED" {
					t.Fatalf("the retry: %s (replayed %q)", r.body, r.header.Get("Idempotent-Replayed"))
				}
				break
			}
			if r.status != http.StatusServiceUnavailable || time.Now().After(deadline) {
				t.Fatalf("the retry: %d %s", r.status, r.body)
			}
			time.Sleep(200 * time.Millisecond)
		}
	})
}

func TestQRWorkerRefusesACommandLineServeWouldNotWrite(t *testing.T) {
	for _, args := range [][]string{nil, {"0"}, {"many"}, {"1", "2"}} {
		if err := qrWorker(args); err == nil || !strings.Contains(err.Error(), "qr-worker") {
			t.Errorf("qr-worker %q: %v, want a usage error", args, err)
		}
	}
}
