package e2e_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestDatabaseOutageAnswers503AndLosesNoAcknowledgedWrite stops the database container under
// a bounded load of creations, lookups, lists and balances through pixgate: while it is down
// every answer is 200/201 or a 503 `unavailable` problem (never a 500, never a dropped
// connection), /readyz answers 503 and /healthz 200; once it is started again the same
// process (not restarted) serves again by itself, every creation acknowledged with 201 before,
// during or after the outage is readable, and retrying the creations that answered an error
// with their idempotency keys leaves exactly one transaction per key.
func TestDatabaseOutageAnswers503AndLosesNoAcknowledgedWrite(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	// Calls give up on the database after 2 s instead of 5, so the outage answers quickly; a
	// pool of 2 connections for 6 clients keeps requests queued for a connection, as a busy
	// instance's are, when the database goes away.
	p := s.startPixgate("pixgate", map[string]string{"PIXGATE_MONGODB_TIMEOUT": "2s", "PIXGATE_MONGODB_MAX_POOL": "2"})
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	startedAt := containerStartedAt(t, p)

	type attempt struct {
		key  string
		body map[string]any
	}
	var (
		mu           sync.Mutex
		acknowledged = map[string]string{} // key -> id of every 201
		failed       []attempt             // creations that answered an error (503)
		answers      = map[string]int{}    // "route status" -> count
		bad          []string
		// 500s that FerretDB's shutdown causes (see ferretShutdownError)
		ferretShutdown []string
		succeeded      atomic.Int64
		unavailable    atomic.Int64
		seq            atomic.Int64
		stop           = make(chan struct{})
		wg             sync.WaitGroup
	)
	// check records an answer; true when it is a success.
	check := func(route string, r reply, err error, want int) bool {
		var logged []string
		if err == nil && r.status == http.StatusInternalServerError {
			// The log line with the same request id says what went wrong.
			logged = p.logLines(jsonField(r, "requestId"))
		}
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			bad = append(bad, fmt.Sprintf("%s: %v", route, err))
			return false
		}
		answers[fmt.Sprintf("%s %d", route, r.status)]++
		switch {
		case r.status == want:
			succeeded.Add(1)
			return true
		case r.status == http.StatusServiceUnavailable && r.problem() == "unavailable" && r.header.Get("Retry-After") != "":
			unavailable.Add(1)
		case s.db.FerretDB() && r.status == http.StatusInternalServerError && ferretShutdownError(logged):
			ferretShutdown = append(ferretShutdown, fmt.Sprintf("%s: %s", route, strings.Join(logged, " ")))
		default:
			bad = append(bad, fmt.Sprintf("%s: %s %s", route, r, strings.Join(logged, " ")))
		}
		return false
	}
	for w := range 6 {
		wg.Go(func() {
			lastID := ""
			// Bounded: at most 200 rounds each, and the test's context.
			for round := 0; round < 200 && ctx.Err() == nil; round++ {
				select {
				case <-stop:
					return
				default:
				}
				key := fmt.Sprintf("outage-%s-%d-%04d", runTag, w, seq.Add(1))
				body := chargeBody(int64(100+round), key)
				r, err := p.call(ctx, "POST", "/transaction", body, "Idempotency-Key", key)
				if check("POST /transaction", r, err, http.StatusCreated) {
					m, err := r.decode()
					id, _ := m["id"].(string)
					mu.Lock()
					if err != nil || id == "" {
						bad = append(bad, fmt.Sprintf("POST /transaction: 201 without an id: %s", r))
					} else {
						acknowledged[key] = id
						lastID = id
					}
					mu.Unlock()
				} else if err == nil {
					mu.Lock()
					failed = append(failed, attempt{key: key, body: body})
					mu.Unlock()
				}
				if lastID != "" {
					r, err = p.call(ctx, "GET", "/transaction/"+lastID, nil)
					check("GET /transaction/{id}", r, err, http.StatusOK)
				}
				r, err = p.call(ctx, "GET", "/transaction?perPage=5&status=PIX_QRCODE_GENERATED", nil)
				check("GET /transaction", r, err, http.StatusOK)
				r, err = p.call(ctx, "GET", "/balance", nil)
				check("GET /balance", r, err, http.StatusOK)
				if unavailable.Load() > 0 {
					time.Sleep(50 * time.Millisecond) // do not spin on a database that is down
				}
			}
		})
	}
	defer func() {
		select {
		case <-stop:
		default:
			close(stop)
		}
		wg.Wait()
	}()

	eventually(t, time.Minute, "requests to succeed before the outage", func() (bool, string) {
		return succeeded.Load() >= 20, fmt.Sprint(succeeded.Load(), " succeeded")
	})
	t0 := time.Now()
	if err := s.db.Stop(ctx); err != nil {
		t.Fatalf("stop the database: %v", err)
	}
	t1 := time.Now()
	eventually(t, time.Minute, "requests to answer 503 during the outage", func() (bool, string) {
		return unavailable.Load() >= 10, fmt.Sprint(unavailable.Load(), " answered 503")
	})
	t.Run("during the outage", func(t *testing.T) {
		p := p.on(t)
		if r := p.do("GET", "/readyz", nil, "Authorization", ""); r.status != http.StatusServiceUnavailable {
			t.Errorf("/readyz: %s, want 503", r)
		}
		if r := p.do("GET", "/healthz", nil, "Authorization", ""); r.status != http.StatusOK {
			t.Errorf("/healthz: %s, want 200: the process still serves", r)
		}
		// The token endpoint answers in OAuth's terms.
		form := url.Values{"grant_type": {"client_credentials"}, "client_id": {clientID}, "client_secret": {clientSecret}}
		r := p.do("POST", "/auth/token", form.Encode(), "Content-Type", "application/x-www-form-urlencoded", "Authorization", "")
		if r.status != http.StatusServiceUnavailable || jsonField(r, "error") != "temporarily_unavailable" {
			t.Errorf("POST /auth/token: %s, want 503 temporarily_unavailable", r)
		}
	})

	t2 := time.Now()
	if err := s.db.Start(ctx); err != nil {
		t.Fatalf("start the database again: %v", err)
	}
	t3 := time.Now()
	eventually(t, time.Minute, "/readyz to answer 200 again", func() (bool, string) {
		r, err := p.call(ctx, "GET", "/readyz", nil)
		return err == nil && r.status == http.StatusOK, fmt.Sprint(r, err)
	})
	t4 := time.Now()
	after := succeeded.Load()
	eventually(t, time.Minute, "requests to succeed again", func() (bool, string) {
		return succeeded.Load() >= after+20, fmt.Sprint(succeeded.Load()-after, " succeeded since")
	})
	close(stop)
	wg.Wait()
	t.Logf("database stop %v, outage observed %v, start %v, ready again %v after the start",
		t1.Sub(t0).Round(time.Millisecond), t2.Sub(t1).Round(time.Millisecond), t3.Sub(t2).Round(time.Millisecond), t4.Sub(t3).Round(time.Millisecond))
	t.Logf("answers: %v", answers)

	if len(bad) > 0 {
		t.Errorf("%d answers were neither a success nor a 503 unavailable problem, e.g. %v", len(bad), bad[:min(len(bad), 5)])
	}
	if got := containerStartedAt(t, p); got != startedAt {
		t.Errorf("pixgate was restarted during the outage (started %s, then %s)", startedAt, got)
	}
	if len(ferretShutdown) > 0 {
		t.Logf("%d answers were 500 because FerretDB answered InternalError to requests it canceled while shutting down "+
			"(MongoDB answers ShutdownInProgress or InterruptedAtShutdown, which pixgate maps to 503): %v", len(ferretShutdown), ferretShutdown)
	}
	if unavailable.Load() == 0 {
		t.Fatal("no request saw the outage")
	}

	t.Run("every acknowledged creation is readable", func(t *testing.T) {
		p := p.on(t)
		for key, id := range acknowledged {
			if r := p.do("GET", "/transaction/"+id, nil); r.status != http.StatusOK {
				t.Errorf("transaction %s (key %s), acknowledged with 201: %s", id, key, r)
			}
		}
		t.Logf("%d creations acknowledged, all readable", len(acknowledged))
	})
	t.Run("retrying the failed creations with their keys leaves one transaction each", func(t *testing.T) {
		p := p.on(t)
		replayed := 0
		for _, a := range failed {
			r := p.do("POST", "/transaction", a.body, "Idempotency-Key", a.key)
			if r.status != http.StatusCreated {
				t.Errorf("retry of %s: %s, want 201", a.key, r)
				continue
			}
			if r.header.Get("Idempotent-Replayed") == "true" {
				replayed++ // stored although the first answer was an error: the retry finds it
			}
		}
		for _, a := range failed {
			if m := p.want(http.StatusOK, "GET", "/transaction?externalCode="+a.key, nil).object(t); cents(m["total"]) != 1 {
				t.Errorf("key %s: %v transactions, want 1", a.key, m["total"])
			}
		}
		total := p.want(http.StatusOK, "GET", "/transaction?perPage=1", nil).object(t)["total"]
		if want := len(acknowledged) + len(failed); int(cents(total)) != want {
			t.Errorf("%v transactions stored, want %d (acknowledged plus retried)", total, want)
		}
		t.Logf("%d creations answered an error and were retried; %d of them had been stored already", len(failed), replayed)
	})
}

// containerStartedAt is when the container's process last started.
func containerStartedAt(t *testing.T, p *pixgate) string {
	t.Helper()
	state, err := p.ctr.State(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !state.Running {
		t.Fatalf("pixgate is not running (%s, exit code %d)", state.Status, state.ExitCode)
	}
	return state.StartedAt
}

// ferretShutdownError tells whether the log lines of a 500 show FerretDB's answer to a
// request it canceled while shutting down: an InternalError (code 1) "context canceled",
// where MongoDB answers ShutdownInProgress (91) or InterruptedAtShutdown (11600), codes the
// adapter maps to ports.ErrUnavailable. Only that is tolerated, and only on FerretDB.
func ferretShutdownError(lines []string) bool {
	for _, l := range lines {
		if strings.Contains(l, "(InternalError)") && strings.Contains(l, "context canceled") {
			return true
		}
	}
	return false
}

// jsonField is a string field of an object answer, or "".
func jsonField(r reply, name string) string {
	m, err := r.decode()
	if err != nil {
		return ""
	}
	v, _ := m[name].(string)
	return v
}
