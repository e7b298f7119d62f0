package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestSoakMixedLoadLevelsOff drives a mixed load (create, get, list, pay through the sandbox,
// withdraw, balance, token requests) against pixgate over real HTTP on loopback for
// PIXGATE_SOAK_DURATION, with the background
// jobs running as `serve` runs them, and checks that the live heap (HeapInuse after a GC) and
// the goroutine count level off: the last third of the run may not grow past the middle third
// by more than a tolerance.
//
// The memory store keeps everything, so the data must stop growing for the heap to level
// off: the first third (the warm-up) creates fresh transactions and withdrawals; from then on
// the same requests reuse the warm-up's idempotency keys (replays that walk the whole request
// path: token, decoding, validation, fingerprint, store look-up, answer) and steps the
// resources already made refuse (409, 422), which store nothing. What the soak can still see
// grow is then what should not: per-request leftovers, goroutines, connections, caches.
//
// It runs only where PIXGATE_SOAK_DURATION is set: a plain `go test` stays quick, `make test`
// (its test-unit step) sets 10s and `make soak` minutes.
func TestSoakMixedLoadLevelsOff(t *testing.T) {
	if testing.Short() {
		t.Skip("soak: skipped in -short")
	}
	v := os.Getenv("PIXGATE_SOAK_DURATION")
	if v == "" {
		t.Skip("soak: runs where PIXGATE_SOAK_DURATION is set (make test sets 10s, make soak SOAK=2m)")
	}
	duration, err := time.ParseDuration(v)
	if err != nil || duration < 3*time.Second {
		t.Fatalf("PIXGATE_SOAK_DURATION=%q: want a duration of at least 3s", v)
	}
	e := soakEnv(t, map[string]string{
		"PIXGATE_SANDBOX": "true", "PIXGATE_SANDBOX_SETTLE_SECONDS": "0", "PIXGATE_FEE_BASIS_POINTS": "0",
		// The limiter runs (its buckets are part of what must not grow) but never refuses.
		"PIXGATE_RATE_LIMIT_RPS": "1000000", "PIXGATE_RATE_LIMIT_BURST": "1000000",
		"PIXGATE_TOKEN_RATE_LIMIT_RPS": "1000000", "PIXGATE_TOKEN_RATE_LIMIT_BURST": "1000000",
	})

	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	waitBackground := e.app.startBackground(ctx, slog.New(slog.DiscardHandler))

	workers := min(max(runtime.GOMAXPROCS(0), 4), 16)
	transport := &http.Transport{MaxIdleConns: 2 * workers, MaxIdleConnsPerHost: 2 * workers, IdleConnTimeout: time.Minute}
	defer transport.CloseIdleConnections()
	client := &http.Client{Transport: transport, Timeout: 30 * time.Second}

	start := time.Now()
	warmupEnd := start.Add(duration / 3)
	end := start.Add(duration)

	type sample struct {
		at         time.Duration
		heap       uint64
		goroutines int
	}
	var samples []sample
	var sampling sync.WaitGroup
	sampling.Go(func() {
		every := max(duration/40, 100*time.Millisecond)
		tick := time.NewTicker(every)
		defer tick.Stop()
		for now := range tick.C {
			if now.After(end) {
				return
			}
			runtime.GC()
			var m runtime.MemStats
			runtime.ReadMemStats(&m)
			samples = append(samples, sample{at: now.Sub(start), heap: m.HeapInuse, goroutines: runtime.NumGoroutine()})
		}
	})

	var requests, unexpected atomic.Int64
	var firstErr sync.Once
	var failure string
	fail := func(format string, args ...any) {
		unexpected.Add(1)
		firstErr.Do(func() { failure = fmt.Sprintf(format, args...) })
	}
	call := func(method, path, token string, body any, want int, headers ...string) []byte {
		var rd io.Reader
		if body != nil {
			raw, _ := json.Marshal(body)
			rd = bytes.NewReader(raw)
		}
		req, _ := http.NewRequest(method, e.srv.URL+path, rd)
		if body != nil {
			req.Header.Set("Content-Type", "application/json")
		}
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		for i := 0; i+1 < len(headers); i += 2 {
			req.Header.Set(headers[i], headers[i+1])
		}
		requests.Add(1)
		res, err := client.Do(req)
		if err != nil {
			fail("%s %s: %v", method, path, err)
			return nil
		}
		defer res.Body.Close()
		raw, _ := io.ReadAll(res.Body)
		if res.StatusCode != want {
			fail("%s %s: %d, want %d: %.300s", method, path, res.StatusCode, want, raw)
		}
		return raw
	}
	idOf := func(raw []byte) string {
		var v struct{ ID string }
		_ = json.Unmarshal(raw, &v)
		return v.ID
	}

	var load sync.WaitGroup
	for w := range workers {
		c := e.secAccount()
		tok := e.secToken(c, c.Account.Scopes()...)
		load.Go(func() {
			// The warm-up's keys and ids, replayed afterwards.
			const maxFresh = 500
			var txKeys, wdKeys, txIDs, wdIDs []string
			var amounts []int
			for n := 0; time.Now().Before(end); n++ {
				fresh := len(txKeys) == 0 || time.Now().Before(warmupEnd) && len(txKeys) < maxFresh
				body := minimalTransaction()
				amount := 1_000 + n%7
				var txKey, txID string
				if fresh {
					txKey = fmt.Sprintf("soak-%d-tx-%d", w, n)
				} else {
					i := n % len(txKeys)
					// The replayed request is the warm-up's: the same key and the same values.
					txKey, txID, amount = txKeys[i], txIDs[i], amounts[i]
				}
				body["amount"] = amount
				created := idOf(call("POST", "/transaction", tok, body, http.StatusCreated, "Idempotency-Key", txKey))
				if fresh {
					txID = created
				} else if created != txID {
					fail("a replay answered %q, want %q", created, txID)
				}
				if txID == "" {
					continue
				}
				call("GET", "/transaction/"+txID, tok, nil, http.StatusOK)
				call("GET", "/transaction?perPage=10&status=PAID&status=PIX_QRCODE_GENERATED&minAmount=1000", tok, nil, http.StatusOK)
				payStatus := http.StatusOK
				if !fresh {
					payStatus = http.StatusConflict // paid in the warm-up
				}
				call("POST", "/sandbox/transaction/"+txID+"/pay", tok, nil, payStatus)

				wdBody := map[string]any{"amount": 100, "pixKey": map[string]any{"key": "maria@example.com", "type": "EMAIL"}}
				var wdKey, wdID string
				if fresh {
					wdKey = fmt.Sprintf("soak-%d-wd-%d", w, n)
				} else {
					i := n % len(wdKeys)
					wdKey, wdID = wdKeys[i], wdIDs[i]
				}
				got := idOf(call("POST", "/withdrawal", tok, wdBody, http.StatusCreated, "Idempotency-Key", wdKey))
				if fresh {
					wdID = got
					txKeys, txIDs, amounts = append(txKeys, txKey), append(txIDs, txID), append(amounts, amount)
					wdKeys, wdIDs = append(wdKeys, wdKey), append(wdIDs, wdID)
				}
				call("GET", "/withdrawal/"+wdID, tok, nil, http.StatusOK)
				call("GET", "/balance", tok, nil, http.StatusOK)
				// Refused requests store nothing: more than the balance, and a broken body.
				call("POST", "/withdrawal", tok, map[string]any{"amount": 10_000_000,
					"pixKey": map[string]any{"key": "maria@example.com", "type": "EMAIL"}}, http.StatusUnprocessableEntity)
				call("POST", "/transaction", tok, map[string]any{"amount": 0, "paymentMethod": "PIX"}, http.StatusUnprocessableEntity)
				if n%10 == 0 {
					form := url.Values{"grant_type": {"client_credentials"}, "client_id": {c.Credential.ClientID},
						"client_secret": {c.Credential.Secret}}
					req, _ := http.NewRequest("POST", e.srv.URL+"/auth/token", strings.NewReader(form.Encode()))
					req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
					requests.Add(1)
					if res, err := client.Do(req); err != nil {
						fail("token: %v", err)
					} else {
						_, _ = io.Copy(io.Discard, res.Body)
						res.Body.Close()
						if res.StatusCode != http.StatusOK {
							fail("token: %d", res.StatusCode)
						}
					}
				}
			}
		})
	}
	load.Wait()
	sampling.Wait()
	stop()
	waitBackground()

	if n := unexpected.Load(); n > 0 {
		t.Fatalf("%d of %d requests answered unexpectedly; the first: %s", n, requests.Load(), failure)
	}
	var middle, last []sample
	for _, s := range samples {
		switch {
		case s.at >= duration/3 && s.at < 2*duration/3:
			middle = append(middle, s)
		case s.at >= 2*duration/3:
			last = append(last, s)
		}
	}
	if len(middle) < 3 || len(last) < 3 {
		t.Fatalf("too few samples: %d in the middle third, %d in the last", len(middle), len(last))
	}
	meanHeap := func(ss []sample) float64 {
		var sum float64
		for _, s := range ss {
			sum += float64(s.heap)
		}
		return sum / float64(len(ss))
	}
	maxGoroutines := func(ss []sample) int {
		m := 0
		for _, s := range ss {
			m = max(m, s.goroutines)
		}
		return m
	}
	mh, lh := meanHeap(middle), meanHeap(last)
	mg, lg := maxGoroutines(middle), maxGoroutines(last)
	t.Logf("%d workers, %d requests in %v (%.0f/s); heap in use: middle third %.1f MiB, last third %.1f MiB; goroutines: %d, %d",
		workers, requests.Load(), duration, float64(requests.Load())/duration.Seconds(), mh/(1<<20), lh/(1<<20), mg, lg)
	// Tolerances: GC timing and the allocator's spans move HeapInuse by a few MiB; connections
	// and the background jobs move the goroutine count by a few.
	if limit := mh*1.25 + 4<<20; lh > limit {
		t.Errorf("the heap keeps growing: %.1f MiB in the last third against %.1f MiB in the middle", lh/(1<<20), mh/(1<<20))
	}
	if limit := mg + mg/10 + 10; lg > limit {
		t.Errorf("goroutines keep growing: %d in the last third against %d in the middle", lg, mg)
	}
}

// soakEnv is newEnv with its log written away rather than kept: the harness keeps every line
// in memory for tests to read, which over a soak is itself a heap that only grows.
func soakEnv(t *testing.T, vars map[string]string) *env {
	t.Helper()
	cfg, err := loadConfig(func(k string) string { return vars[k] })
	if err != nil {
		t.Fatalf("config: %v", err)
	}
	a, err := newApp(context.Background(), cfg, slog.New(slog.NewJSONHandler(io.Discard, nil)))
	if err != nil {
		t.Fatalf("building the app: %v", err)
	}
	srv := httptest.NewServer(a.server.Handler())
	t.Cleanup(srv.Close)
	return &env{t: t, app: a, srv: srv, log: &syncBuffer{}}
}
