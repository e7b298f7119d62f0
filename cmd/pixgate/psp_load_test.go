package main

import (
	"fmt"
	"math"
	"net/http"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pixgate/pixgate/adapters/psp/psptest"
)

// TestPSPCreationThroughput compares POST /transaction with charges made at the fake PSP (API
// Pix over mutual TLS on loopback) with the sandbox's, in one run: rounds of each mode in turn,
// the same concurrency, every request over HTTP to a server of its own. The PSP mode must keep
// at least 0.8 of the sandbox's creations a second, and ask the PSP's token endpoint once per
// token, never per request. The fake PSP runs in the same process and takes its share of the
// CPU, as a PSP's latency would take wall time. It is a load run, not a unit test: it runs only
// with PIXGATE_PSP_LOAD=1 (make load-psp), and docs/PERFORMANCE.md, "Charges made at a PSP"
// records its figures.
//
// PIXGATE_PSP_LOAD_SECONDS (default 4) is each round's length, PIXGATE_PSP_LOAD_WORKERS
// (default 16) the requests in flight: enough that the QR drawings, not the PSP's round trip,
// bound both modes.
func TestPSPCreationThroughput(t *testing.T) {
	if os.Getenv("PIXGATE_PSP_LOAD") != "1" {
		t.Skip("a load run: PIXGATE_PSP_LOAD=1 (make load-psp)")
	}
	round := time.Duration(envInt("PIXGATE_PSP_LOAD_SECONDS", 4)) * time.Second
	workers := envInt("PIXGATE_PSP_LOAD_WORKERS", 16)
	const lifetime = time.Minute // far more than a run: every token fetch beyond the first is a fault

	p := psptest.New(t, psptest.Config{TokenLifetime: lifetime})
	sandbox := newEnv(t, map[string]string{"PIXGATE_LOG_LEVEL": "warn"})
	atPSP := pspEnv(t, p, map[string]string{"PIXGATE_LOG_LEVEL": "warn"})
	_, sandboxTok := sandbox.account()
	_, pspTok := atPSP.account()

	// Each round counts the creations answered 201 in its time; any other answer fails the run.
	run := func(e *env, tok string) float64 {
		var done atomic.Int64
		var failed atomic.Value
		stop := time.Now().Add(round)
		var wg sync.WaitGroup
		for range workers {
			wg.Go(func() {
				for time.Now().Before(stop) {
					if r := e.do("POST", "/transaction", tok, minimalTransaction()); r.status != http.StatusCreated {
						failed.Store(fmt.Sprintf("%d %s", r.status, r.body))
						return
					}
					done.Add(1)
				}
			})
		}
		wg.Wait()
		if f := failed.Load(); f != nil {
			t.Fatalf("a creation failed: %v", f)
		}
		return float64(done.Load()) / round.Seconds()
	}
	run(sandbox, sandboxTok) // warm both: connections, the first token, the renderer
	run(atPSP, pspTok)
	var sandboxRates, pspRates []float64
	for range 3 {
		sandboxRates = append(sandboxRates, run(sandbox, sandboxTok))
		pspRates = append(pspRates, run(atPSP, pspTok))
	}
	s, q := median(sandboxRates), median(pspRates)
	tokens := p.Requests(psptest.OpToken)
	t.Logf("POST /transaction, %d in flight, rounds of %s: sandbox %.0f/s %v, PSP %.0f/s %v: ratio %.2f; %d cobs, %d token requests (tokens live %s)",
		workers, round, s, rounded(sandboxRates), q, rounded(pspRates), q/s, p.Cobs(), tokens, lifetime)
	if q < 0.8*s {
		t.Errorf("the PSP mode made %.0f charges a second, less than 0.8 of the sandbox's %.0f", q, s)
	}
	if tokens != 1 {
		t.Errorf("%d token requests for %d charges in less than a token's lifetime, want 1", tokens, p.Cobs())
	}
}

func envInt(name string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil && n > 0 {
		return n
	}
	return def
}

func median(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	for i := range s {
		for j := i + 1; j < len(s); j++ {
			if s[j] < s[i] {
				s[i], s[j] = s[j], s[i]
			}
		}
	}
	return s[len(s)/2]
}

func rounded(xs []float64) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = math.Round(x)
	}
	return out
}
