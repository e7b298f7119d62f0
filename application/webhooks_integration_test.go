package application_test

// The dispatcher with the real webhook sender, against real HTTPS receivers on loopback: what a
// merchant's endpoint sees. The outbox is the lease-honouring fake of webhooks_test.go. A test
// file of the application may import an adapter (never the application itself); tests that also
// need a storage adapter belong under /test.

import (
	"context"
	"encoding/pem"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/pixgate/pixgate/adapters/system"
	"github.com/pixgate/pixgate/adapters/webhook"
	"github.com/pixgate/pixgate/application"
	"github.com/pixgate/pixgate/domain"
	"github.com/pixgate/pixgate/ports"
)

// whHit is one request a receiver got.
type whHit struct {
	id, timestamp string
	verified      bool // the signature is right
	fresh         bool // and the library's full check, timestamp tolerance included, passes
}

// whReceiver is an HTTPS endpoint on loopback that verifies each request with the official
// Standard Webhooks library and answers what answer says.
type whReceiver struct {
	srv    *httptest.Server
	caFile string
	answer func(n int, r *http.Request) int // n counts requests from 1

	mu       sync.Mutex
	hits     []whHit
	inFlight map[string]int
	overlap  atomic.Int64
}

func newWhReceiver(t testing.TB, secret string, answer func(n int, r *http.Request) int) *whReceiver {
	t.Helper()
	wh, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		t.Fatal(err)
	}
	rc := &whReceiver{answer: answer, inFlight: map[string]int{}}
	rc.srv = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		id := r.Header.Get("webhook-id")
		// Most tests move their clock by hours, so the signature and the timestamp's freshness
		// are told apart.
		hit := whHit{id: id, timestamp: r.Header.Get("webhook-timestamp"),
			verified: wh.VerifyIgnoringTimestamp(body, r.Header) == nil, fresh: wh.Verify(body, r.Header) == nil}
		rc.mu.Lock()
		rc.hits = append(rc.hits, hit)
		n := len(rc.hits)
		rc.inFlight[id]++
		if rc.inFlight[id] > 1 {
			rc.overlap.Add(1)
		}
		rc.mu.Unlock()
		defer func() {
			rc.mu.Lock()
			rc.inFlight[id]--
			rc.mu.Unlock()
		}()
		w.WriteHeader(rc.answer(n, r))
	}))
	t.Cleanup(rc.srv.Close)
	rc.caFile = filepath.Join(t.TempDir(), "ca.pem")
	pemBytes := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: rc.srv.Certificate().Raw})
	if err := os.WriteFile(rc.caFile, pemBytes, 0o600); err != nil {
		t.Fatal(err)
	}
	return rc
}

// url names the receiver as example.com, a name its certificate holds, resolved to loopback.
func (rc *whReceiver) url() string {
	_, port, _ := net.SplitHostPort(rc.srv.Listener.Addr().String())
	return "https://example.com:" + port + "/hooks"
}

func (rc *whReceiver) got() []whHit {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return slices.Clone(rc.hits)
}

// realSender is the production sender, allowed to reach loopback and trusting the receiver's CA.
func (w *whWorld) realSender(t testing.TB, rc *whReceiver) {
	t.Helper()
	s, err := webhook.NewSender(webhook.Options{AllowPrivate: true, CAFile: rc.caFile, Resolver: loopbackResolver{}})
	if err != nil {
		t.Fatal(err)
	}
	w.real = s
}

func (w *whWorld) realDispatcher(t testing.TB, cfg application.DispatcherConfig) *application.Dispatcher {
	t.Helper()
	if cfg.Owner == "" {
		cfg.Owner = "instance-a"
	}
	var clock ports.Clock = w.clock
	if w.realClock {
		clock = system.Clock{} // the wall clock, against real receivers
	}
	d, err := application.NewDispatcher(w.outbox, w.accounts, w.encoder, w.real, clock, fakeRandom(0.5), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// eventTo stores a pending event for the receiver.
func (w *whWorld) eventTo(t testing.TB, rc *whReceiver) domain.Event {
	t.Helper()
	w.events++
	now := w.clock.Now()
	if w.realClock {
		now = time.Now()
	}
	e := domain.Event{ID: "e" + strconv.Itoa(w.events) + "-" + strconv.FormatInt(now.UnixNano(), 36),
		Type: "transaction.paid", AccountID: "acc-1", ResourceID: "tx-1", Kind: domain.ResourceTransaction,
		WebhookURL: rc.url(), CreatedAt: now}
	w.outbox.add(e)
	return e
}

func TestWebhookReceiverThatFailsThenRecoversGetsTheSameSignedEventOnSchedule(t *testing.T) {
	t.Parallel()
	rc := newWhReceiver(t, whSecret, func(n int, _ *http.Request) int {
		if n < 3 {
			return http.StatusInternalServerError
		}
		return http.StatusOK
	})
	w := newWhWorld(t)
	w.clock.now = time.Now().UTC().Truncate(time.Second)
	start := w.clock.Now()
	w.realSender(t, rc)
	e := w.eventTo(t, rc)
	d := w.realDispatcher(t, application.DispatcherConfig{})

	whDeliverDue(t, d)
	w.clock.Advance(5 * time.Second)
	whDeliverDue(t, d)
	w.clock.Advance(5*time.Minute - time.Second)
	if n := whDeliverDue(t, d); n != 0 {
		t.Fatal("the third attempt came before its 5 minutes")
	}
	w.clock.Advance(time.Second)
	whDeliverDue(t, d)

	hits := rc.got()
	if len(hits) != 3 {
		t.Fatalf("receiver got %d requests, want 3", len(hits))
	}
	wantTS := []time.Time{start, start.Add(5 * time.Second), start.Add(5*time.Second + 5*time.Minute)}
	for i, h := range hits {
		if h.id != e.ID || !h.verified {
			t.Errorf("request %d: webhook-id %s (want %s), signature verified %v", i+1, h.id, e.ID, h.verified)
		}
		if h.timestamp != strconv.FormatInt(wantTS[i].Unix(), 10) {
			t.Errorf("request %d: webhook-timestamp %s, want %d", i+1, h.timestamp, wantTS[i].Unix())
		}
	}
	got := w.outbox.get(e.ID)
	if got.Status != ports.DeliveryDelivered || len(got.Attempts) != 3 ||
		got.Attempts[0].StatusCode != 500 || got.Attempts[2].StatusCode != 200 {
		t.Errorf("delivery = %+v, want delivered on the third attempt", got)
	}
}

func TestWebhookReceiverThatNeverRecoversGetsTenAttemptsThenTheEventFails(t *testing.T) {
	t.Parallel()
	rc := newWhReceiver(t, whSecret, func(int, *http.Request) int { return http.StatusServiceUnavailable })
	w := newWhWorld(t)
	w.realSender(t, rc)
	e := w.eventTo(t, rc)
	d := w.realDispatcher(t, application.DispatcherConfig{})

	for range 30 { // far more passes than attempts; the clock runs 30 days
		whDeliverDue(t, d)
		w.clock.Advance(24 * time.Hour)
	}
	if n := len(rc.got()); n != 10 {
		t.Errorf("receiver got %d requests, want 10", n)
	}
	if got := w.outbox.get(e.ID); got.Status != ports.DeliveryFailed || len(got.Attempts) != 10 {
		t.Errorf("delivery = %s after %d attempts, want failed after 10", got.Status, len(got.Attempts))
	}
}

func TestWebhookTimestampIsTheAttemptTime(t *testing.T) {
	t.Parallel()
	rc := newWhReceiver(t, whSecret, func(int, *http.Request) int { return http.StatusNoContent })
	w := newWhWorld(t)
	w.realClock = true
	w.realSender(t, rc)
	w.eventTo(t, rc)
	whDeliverDue(t, w.realDispatcher(t, application.DispatcherConfig{}))
	hits := rc.got()
	if len(hits) != 1 || !hits[0].fresh {
		t.Fatalf("receiver got %+v, want one request passing the library's full check", hits)
	}
	ts, _ := strconv.ParseInt(hits[0].timestamp, 10, 64)
	if d := time.Since(time.Unix(ts, 0)); d < -time.Second || d > 5*time.Second {
		t.Errorf("webhook-timestamp is %v away from now", d)
	}
}

func TestWebhookDispatcherRestartedMidDeliveryLeavesTheEventToAnotherOnceTheLeaseEnds(t *testing.T) {
	t.Parallel()
	hang := make(chan struct{})
	entered := make(chan struct{}, 1)
	rc := newWhReceiver(t, whSecret, func(n int, _ *http.Request) int {
		if n == 1 {
			entered <- struct{}{}
			<-hang // the first attempt hangs while its dispatcher "dies"
		}
		return http.StatusOK
	})
	w := newWhWorld(t)
	w.realSender(t, rc)
	e := w.eventTo(t, rc)
	dying := w.realDispatcher(t, application.DispatcherConfig{Owner: "instance-a", Lease: 30 * time.Second})
	heir := w.realDispatcher(t, application.DispatcherConfig{Owner: "instance-b", Lease: 30 * time.Second})

	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = dying.DeliverDue(context.Background())
	}()
	<-entered
	if n := whDeliverDue(t, heir); n != 0 {
		t.Fatal("the heir took a delivery still under lease")
	}
	w.clock.Advance(31 * time.Second)
	if n := whDeliverDue(t, heir); n != 1 {
		t.Fatal("the heir did not take the expired lease over")
	}
	close(hang)
	<-done

	hits := rc.got()
	if len(hits) != 2 || hits[0].id != e.ID || hits[1].id != e.ID {
		t.Fatalf("receiver got %+v, want the same event twice (at least once, deduplicated on webhook-id)", hits)
	}
	if got := w.outbox.get(e.ID); got.Status != ports.DeliveryDelivered || len(got.Attempts) != 1 {
		t.Errorf("delivery = %s with %d attempts, want delivered with the heir's one attempt", got.Status, len(got.Attempts))
	}
}

func TestWebhookTwoDispatchersDeliverEveryEventAndNeverTheSameAtOnce(t *testing.T) {
	t.Parallel()
	rc := newWhReceiver(t, whSecret, func(int, *http.Request) int {
		time.Sleep(time.Millisecond)
		return http.StatusNoContent
	})
	w := newWhWorld(t)
	w.realSender(t, rc)
	const n = 120
	for range n {
		w.eventTo(t, rc)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for _, owner := range []string{"instance-a", "instance-b"} {
		d := w.realDispatcher(t, application.DispatcherConfig{Owner: owner, Concurrency: 6, PollInterval: time.Millisecond})
		wg.Go(func() {
			if err := d.Run(ctx); err != nil {
				t.Errorf("Run: %v", err)
			}
		})
	}
	deadline := time.Now().Add(30 * time.Second)
	for w.outbox.count(ports.DeliveryDelivered) < n && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	wg.Wait()

	if got := w.outbox.count(ports.DeliveryDelivered); got != n {
		t.Fatalf("%d of %d delivered", got, n)
	}
	seen := map[string]int{}
	for _, h := range rc.got() {
		seen[h.id]++
		if !h.verified {
			t.Errorf("event %s arrived with a signature the library refuses", h.id)
		}
	}
	if len(seen) != n {
		t.Errorf("receiver saw %d distinct events, want %d", len(seen), n)
	}
	if rc.overlap.Load() != 0 {
		t.Error("one event was being received twice at the same time")
	}
}

// BenchmarkWebhookDelivery delivers b.N events to a local HTTPS receiver through the real sender
// and a dispatcher (16 in flight, 10 ms poll), with a producer that keeps at most 64 events
// waiting, as a steady stream of status changes would. It reports events per second and the
// delay from the status change (the event's creation) to its arrival at the receiver.
func BenchmarkWebhookDelivery(b *testing.B) {
	var received atomic.Int64
	var mu sync.Mutex
	arrivals := map[string]time.Time{}
	rc := newWhReceiver(b, whSecret, func(_ int, r *http.Request) int {
		mu.Lock()
		arrivals[r.Header.Get("webhook-id")] = time.Now()
		mu.Unlock()
		received.Add(1)
		return http.StatusNoContent
	})
	w := newWhWorld(b)
	w.realClock = true
	w.realSender(b, rc)
	d := w.realDispatcher(b, application.DispatcherConfig{Concurrency: 16, PollInterval: 10 * time.Millisecond})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()

	const window = 64
	created := make(map[string]time.Time, b.N)
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		for int64(i)-received.Load() >= window {
			time.Sleep(50 * time.Microsecond)
		}
		e := w.eventTo(b, rc)
		created[e.ID] = e.CreatedAt
	}
	for received.Load() < int64(b.N) {
		time.Sleep(100 * time.Microsecond)
	}
	elapsed := time.Since(start)
	b.StopTimer()
	cancel()
	if err := <-done; err != nil {
		b.Fatal(err)
	}

	delays := make([]time.Duration, 0, b.N)
	mu.Lock()
	for id, at := range created {
		delays = append(delays, arrivals[id].Sub(at))
	}
	mu.Unlock()
	slices.Sort(delays)
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "events/s")
	b.ReportMetric(float64(delays[len(delays)/2].Microseconds())/1000, "median-delay-ms")
	b.ReportMetric(float64(delays[(len(delays)*99)/100].Microseconds())/1000, "p99-delay-ms")
}

// eventOfTo stores a pending event of account's transaction for the receiver, now.
func (w *whWorld) eventOfTo(t testing.TB, rc *whReceiver, account string) domain.Event {
	t.Helper()
	e := w.eventTo(t, rc)
	w.outbox.mu.Lock()
	defer w.outbox.mu.Unlock()
	it := w.outbox.items[e.ID]
	it.d.Event.AccountID = account
	return it.d.Event
}

// The scenario of a merchant whose receiver never answers: forty of account A's events wait
// for it, then account B's healthy receiver gets one. Without sharing, eight workers spend
// five delivery timeouts on A before B's turn; with it, A holds its share of the workers (and
// its host's circuit opens after the first timeouts) while B is delivered at once.
func TestWebhookOneAccountsDeadReceiverDelaysAnotherAccountByOneDeliverySlotAtMost(t *testing.T) {
	t.Parallel()
	// The sender's timeout is long beside what a delivery to a live receiver takes, even on a
	// loaded machine, and the test judges by what happened first, never by how long it took:
	// B's events must be delivered while A's attempts are still hanging, before any of them
	// has timed out (so B never waited for a slot that A's dead receiver held).
	const timeout = 5 * time.Second
	stop := make(chan struct{})
	var timedOut atomic.Int64 // attempts of A that the sender gave up
	dead := newWhReceiver(t, whSecret, func(_ int, r *http.Request) int {
		select { // never answers: the sender gives up first
		case <-r.Context().Done():
			timedOut.Add(1)
		case <-stop:
		}
		return http.StatusOK
	})
	t.Cleanup(func() { close(stop) }) // runs before the receiver closes
	healthy := newWhReceiver(t, whSecret, func(int, *http.Request) int { return http.StatusNoContent })

	w := newWhWorld(t)
	w.realClock = true
	s, err := webhook.NewSender(webhook.Options{AllowPrivate: true, CAFile: dead.caFile, Resolver: loopbackResolver{}, Timeout: timeout})
	if err != nil {
		t.Fatal(err)
	}
	w.real = s
	for range 40 {
		w.eventOfTo(t, dead, "acc-1")
	}
	first := w.eventOfTo(t, healthy, "acc-2")

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	d := w.realDispatcher(t, application.DispatcherConfig{Concurrency: 8, PollInterval: 10 * time.Millisecond})
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()

	// waitFor polls cond until it holds; the deadline is only there to end a broken run.
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(20 * timeout)
		for !cond() {
			if time.Now().After(deadline) {
				t.Fatalf("%s: not within %v (receiver A got %d requests, %d timed out)", what, 20*timeout, len(dead.got()), timedOut.Load())
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	delivered := func(e domain.Event) func() bool {
		return func() bool { return w.outbox.get(e.ID).Status == ports.DeliveryDelivered }
	}
	// A's share of the workers leaves B a free one at once: B's event is delivered while A's
	// first attempts still hang (the circuit breaker alone would only get B through after them).
	waitFor("account B's first event delivered", delivered(first))
	if n := timedOut.Load(); n > 0 {
		t.Errorf("account B's first event was delivered only after %d of A's attempts timed out: it waited for a slot A held", n)
	}

	// Once A's first attempts have timed out, A's host is backed off: the rest of its events
	// are held back rather than each spending a worker for a whole timeout (the count below),
	// and B's next event is delivered.
	waitFor("three of A's attempts timed out", func() bool { return timedOut.Load() >= 3 })
	second := w.eventOfTo(t, healthy, "acc-2")
	waitFor("account B's second event delivered", delivered(second))
	// Its share (4), and those started as the first timeouts were being counted, before the
	// third opened the circuit (2 more at most).
	if n := len(dead.got()); n > 4+2 {
		t.Errorf("the dead receiver got %d requests, want its share (4) and 2 more at most", n)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run: %v", err)
	}
	pending := 0
	w.outbox.mu.Lock()
	for _, it := range w.outbox.items {
		if it.d.Event.AccountID == "acc-1" && len(it.d.Attempts) == 0 {
			pending++
		}
	}
	w.outbox.mu.Unlock()
	if pending < 30 {
		t.Errorf("%d of A's events are untried, want the held-back ones (at least 30) to keep their attempts", pending)
	}
}
