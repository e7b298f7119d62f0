package application_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pixgate/pixgate/adapters/memory"
	"github.com/pixgate/pixgate/application"
	"github.com/pixgate/pixgate/domain"
	"github.com/pixgate/pixgate/ports"
	"github.com/pixgate/pixgate/ports/porttest"
)

// The webhook tests run on the package's fakes (fakes_test.go): the outbox, the sender, the
// encoder, the clock and the accounts.

var whStart = time.Date(2026, 11, 22, 11, 19, 32, 0, time.UTC)

const (
	whSecret     = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	whNextSecret = "whsec_c2Vjb25kLXNlY3JldC1vZi10aGUtYWNjb3VudA=="
)

// whWorld is a dispatcher's surroundings: an outbox, one account, a clock and a sender.
type whWorld struct {
	outbox   *fakeOutbox
	accounts *porttest.Accounts
	encoder  *fakeEncoder
	sender   *fakeSender
	clock    *fakeClock
	events   int

	real      ports.WebhookSender // the real sender, for the integration tests
	realClock bool                // the integration tests' dispatcher runs on the wall clock
}

func newWhWorld(t testing.TB) *whWorld {
	t.Helper()
	w := &whWorld{outbox: newFakeOutbox(), accounts: newAccounts(), encoder: &fakeEncoder{},
		sender: &fakeSender{}, clock: newFakeClock(whStart)}
	whAddAccount(t, w.accounts, "acc-1", whSecret)
	whAddAccount(t, w.accounts, "acc-2", whSecret)
	return w
}

// event stores a pending event of acc-1's transaction tx-1 raised now.
func (w *whWorld) event(t testing.TB) domain.Event {
	t.Helper()
	return w.eventOf(t, "acc-1", domain.ResourceTransaction, "tx-1")
}

func (w *whWorld) eventOf(t testing.TB, account string, kind domain.ResourceKind, resource string) domain.Event {
	t.Helper()
	w.events++
	e := domain.Event{
		ID: fmt.Sprintf("00000000-0000-4000-8000-%012d", w.events), Type: domain.EventType(kind, "PAID"),
		AccountID: account, ResourceID: resource, Kind: kind,
		WebhookURL: "https://merchant.example/hooks", CreatedAt: w.clock.Now(),
	}
	w.outbox.add(e)
	return e
}

func (w *whWorld) dispatcher(t testing.TB, cfg application.DispatcherConfig) *application.Dispatcher {
	t.Helper()
	return w.dispatcherDrawing(t, cfg, fakeRandom(0.5)) // no jitter: the schedule's exact delays
}

func (w *whWorld) dispatcherDrawing(t testing.TB, cfg application.DispatcherConfig, random ports.Random) *application.Dispatcher {
	t.Helper()
	if cfg.Owner == "" {
		cfg.Owner = "instance-a"
	}
	d, err := application.NewDispatcher(w.outbox, w.accounts, w.encoder, w.sender, w.clock, random, cfg)
	if err != nil {
		t.Fatalf("NewDispatcher: %v", err)
	}
	return d
}

func whDeliverDue(t testing.TB, d *application.Dispatcher) int {
	t.Helper()
	n, err := d.DeliverDue(context.Background())
	if err != nil {
		t.Fatalf("DeliverDue: %v", err)
	}
	return n
}

func TestStandardScheduleIsTheStandardWebhooksOne(t *testing.T) {
	s := application.StandardSchedule()
	if s.Attempts() != 10 {
		t.Errorf("Attempts = %d, want 10", s.Attempts())
	}
	want := []time.Duration{5 * time.Second, 5 * time.Minute, 30 * time.Minute, 2 * time.Hour, 5 * time.Hour,
		10 * time.Hour, 14 * time.Hour, 20 * time.Hour, 24 * time.Hour}
	for i, w := range want {
		got, ok := s.Next(i+1, 0.5)
		if !ok || got != w {
			t.Errorf("Next(%d, 0.5) = %v, %v; want %v", i+1, got, ok, w)
		}
		low, _ := s.Next(i+1, 0)
		high, _ := s.Next(i+1, 0.999999)
		if low != w*9/10 || high < w*109/100 || high > w*11/10 {
			t.Errorf("jitter of delay %d spans %v to %v, want ±10%% of %v", i+1, low, high, w)
		}
	}
	for _, failed := range []int{0, 10, 11} {
		if d, ok := s.Next(failed, 0.5); ok {
			t.Errorf("Next(%d) = %v, want none", failed, d)
		}
	}
}

func TestNewDispatcherRefusesMissingPortsAndBadConfiguration(t *testing.T) {
	w := newWhWorld(t)
	t.Run("a nil port panics", func(t *testing.T) {
		defer func() {
			if recover() == nil {
				t.Error("NewDispatcher accepted a nil sender")
			}
		}()
		_, _ = application.NewDispatcher(w.outbox, w.accounts, w.encoder, nil, w.clock, fakeRandom(0.5), application.DispatcherConfig{Owner: "a"})
	})
	for name, cfg := range map[string]application.DispatcherConfig{
		"no owner":             {},
		"negative concurrency": {Owner: "a", Concurrency: -1},
		"negative lease":       {Owner: "a", Lease: -time.Second},
		"jitter of 100%":       {Owner: "a", Schedule: application.Schedule{Delays: []time.Duration{time.Second}, Jitter: 1}},
		"a zero delay":         {Owner: "a", Schedule: application.Schedule{Delays: []time.Duration{time.Second, 0}}},
	} {
		t.Run(name+" is refused", func(t *testing.T) {
			if _, err := application.NewDispatcher(w.outbox, w.accounts, w.encoder, w.sender, w.clock, fakeRandom(0.5), cfg); err == nil {
				t.Error("NewDispatcher accepted it")
			}
		})
	}
}

func TestDispatcherSendsADueEventAtOnceSignedWithTheAccountSecret(t *testing.T) {
	w := newWhWorld(t)
	e := w.event(t)
	var recorded []ports.DeliveryStatus
	d := w.dispatcher(t, application.DispatcherConfig{OnAttempt: func(_ domain.Event, _ ports.Attempt, s ports.DeliveryStatus) {
		recorded = append(recorded, s)
	}})

	if n := whDeliverDue(t, d); n != 1 {
		t.Fatalf("DeliverDue claimed %d, want 1", n)
	}
	sent := w.sender.sent()
	if len(sent) != 1 {
		t.Fatalf("sender got %d messages, want 1", len(sent))
	}
	m := sent[0]
	body, _ := w.encoder.EncodeEvent(e)
	if m.URL != e.WebhookURL || m.EventID != e.ID || !m.Timestamp.Equal(whStart) || string(m.Body) != string(body) {
		t.Errorf("message = %s %s %v %s; want the event's URL, id, now and encoded body", m.URL, m.EventID, m.Timestamp, m.Body)
	}
	if !slices.Equal(m.Secrets, []string{whSecret}) {
		t.Errorf("secrets = %q, want the account's", m.Secrets)
	}
	got := w.outbox.get(e.ID)
	if got.Status != ports.DeliveryDelivered || len(got.Attempts) != 1 || got.Attempts[0].StatusCode != 200 ||
		!got.Attempts[0].At.Equal(whStart) || !got.NextAttemptAt.IsZero() {
		t.Errorf("delivery = %+v, want delivered after one 200", got)
	}
	if !slices.Equal(recorded, []ports.DeliveryStatus{ports.DeliveryDelivered}) {
		t.Errorf("OnAttempt saw %v", recorded)
	}
	if n := whDeliverDue(t, d); n != 0 {
		t.Errorf("a delivered event was claimed again (%d)", n)
	}
}

func TestDispatcherSignsWithBothSecretsWhileARotationLasts(t *testing.T) {
	w := newWhWorld(t)
	if err := w.accounts.UpdateAccount(context.Background(), "acc-1", func(a *domain.Account) error {
		a.RotateWebhookSecret(whNextSecret, whStart, 24*time.Hour)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	w.sender.script(whStatus(500))
	w.event(t)
	d := w.dispatcher(t, application.DispatcherConfig{Schedule: application.Schedule{Delays: []time.Duration{25 * time.Hour}}})

	whDeliverDue(t, d)
	w.clock.Advance(25 * time.Hour)
	whDeliverDue(t, d)
	sent := w.sender.sent()
	if len(sent) != 2 {
		t.Fatalf("sender got %d messages, want 2", len(sent))
	}
	if !slices.Equal(sent[0].Secrets, []string{whNextSecret, whSecret}) {
		t.Errorf("during the rotation secrets = %q, want the new and the old", sent[0].Secrets)
	}
	if !slices.Equal(sent[1].Secrets, []string{whNextSecret}) {
		t.Errorf("after the rotation secrets = %q, want the new one only", sent[1].Secrets)
	}
}

func TestDispatcherRetriesAFailingReceiverOnTheScheduleUntilItRecovers(t *testing.T) {
	w := newWhWorld(t)
	w.sender.script(whStatus(500), whFail("connection refused"), whStatus(503), whStatus(200))
	e := w.event(t)
	d := w.dispatcher(t, application.DispatcherConfig{})

	whDeliverDue(t, d)
	for _, wait := range []time.Duration{5 * time.Second, 5 * time.Minute, 30 * time.Minute} {
		w.clock.Advance(wait - time.Millisecond)
		if n := whDeliverDue(t, d); n != 0 {
			t.Fatalf("retried before %v had passed", wait)
		}
		w.clock.Advance(time.Millisecond)
		if n := whDeliverDue(t, d); n != 1 {
			t.Fatalf("not retried after %v", wait)
		}
	}

	got := w.outbox.get(e.ID)
	if got.Status != ports.DeliveryDelivered || len(got.Attempts) != 4 {
		t.Fatalf("delivery = %s after %d attempts, want delivered after 4", got.Status, len(got.Attempts))
	}
	wantAt := []time.Time{whStart, whStart.Add(5 * time.Second), whStart.Add(5*time.Second + 5*time.Minute),
		whStart.Add(5*time.Second + 35*time.Minute)}
	for i, a := range got.Attempts {
		if !a.At.Equal(wantAt[i]) {
			t.Errorf("attempt %d at %v, want %v", i+1, a.At, wantAt[i])
		}
	}
	if a := got.Attempts[1]; a.StatusCode != 0 || a.Error != "connection refused" {
		t.Errorf("a transport failure was recorded as %d %q", a.StatusCode, a.Error)
	}
	if a := got.Attempts[0]; a.StatusCode != 500 || a.Error != "" {
		t.Errorf("a 500 was recorded as %d %q", a.StatusCode, a.Error)
	}
	for i, m := range w.sender.sent() {
		if m.EventID != e.ID {
			t.Errorf("attempt %d carried webhook-id %s, want %s every time", i+1, m.EventID, e.ID)
		}
	}
}

func TestDispatcherMarksAnEventFailedAfterTheTenthAttemptAndKeepsIt(t *testing.T) {
	w := newWhWorld(t)
	w.sender.fallback = whStatus(500)
	e := w.event(t)
	d := w.dispatcher(t, application.DispatcherConfig{})
	schedule := application.StandardSchedule()

	for attempt := 1; attempt <= 10; attempt++ {
		if n := whDeliverDue(t, d); n != 1 {
			t.Fatalf("attempt %d: claimed %d", attempt, n)
		}
		if wait, ok := schedule.Next(attempt, 0.5); ok {
			w.clock.Advance(wait)
		}
	}
	w.clock.Advance(1000 * time.Hour)
	if n := whDeliverDue(t, d); n != 0 {
		t.Errorf("an 11th attempt was made")
	}
	got := w.outbox.get(e.ID)
	if got.Status != ports.DeliveryFailed || len(got.Attempts) != 10 || !got.NextAttemptAt.IsZero() {
		t.Fatalf("delivery = %s, %d attempts, next %v; want failed after 10, none next", got.Status, len(got.Attempts), got.NextAttemptAt)
	}
	for i := 1; i < len(got.Attempts); i++ {
		want, _ := schedule.Next(i, 0.5)
		if gap := got.Attempts[i].At.Sub(got.Attempts[i-1].At); gap != want {
			t.Errorf("gap before attempt %d = %v, want %v", i+1, gap, want)
		}
	}
	if ds, _ := w.outbox.Deliveries(context.Background(), "acc-1", domain.ResourceTransaction, "tx-1"); len(ds) != 1 {
		t.Errorf("the failed event is not kept")
	}
}

func TestDispatcherSpreadsRetriesWithJitter(t *testing.T) {
	for _, tc := range []struct {
		name string
		r    float64
		want time.Duration
	}{
		{"the lowest draw retries 10% early", 0, 4500 * time.Millisecond},
		{"the middle draw retries on time", 0.5, 5 * time.Second},
		{"the highest draw retries up to 10% late", 0.9999, 5499900 * time.Microsecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWhWorld(t)
			w.sender.script(whStatus(500))
			e := w.event(t)
			d := w.dispatcherDrawing(t, application.DispatcherConfig{}, fakeRandom(tc.r))
			whDeliverDue(t, d)
			if got := w.outbox.get(e.ID).NextAttemptAt.Sub(whStart); got != tc.want {
				t.Errorf("next attempt after %v, want %v", got, tc.want)
			}
		})
	}
}

func TestDispatcherHonoursRetryAfterOnlyWhenItAsksForLonger(t *testing.T) {
	for _, tc := range []struct {
		name       string
		retryAfter time.Duration
		want       time.Duration
	}{
		{"a longer Retry-After postpones the retry", time.Hour, time.Hour},
		{"a shorter Retry-After leaves the schedule", time.Second, 5 * time.Second},
		{"a year-long Retry-After is capped at the longest delay", 365 * 24 * time.Hour, 24 * time.Hour},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWhWorld(t)
			w.sender.script(func(ports.WebhookMessage) (ports.WebhookResponse, error) {
				return ports.WebhookResponse{StatusCode: 429, RetryAfter: tc.retryAfter}, nil
			})
			e := w.event(t)
			whDeliverDue(t, w.dispatcher(t, application.DispatcherConfig{}))
			if got := w.outbox.get(e.ID).NextAttemptAt.Sub(whStart); got != tc.want {
				t.Errorf("next attempt after %v, want %v", got, tc.want)
			}
		})
	}
}

func TestDispatcherStopsAtOnceOn410Gone(t *testing.T) {
	w := newWhWorld(t)
	w.sender.script(whStatus(410))
	e := w.event(t)
	whDeliverDue(t, w.dispatcher(t, application.DispatcherConfig{}))
	if got := w.outbox.get(e.ID); got.Status != ports.DeliveryFailed || len(got.Attempts) != 1 {
		t.Errorf("delivery = %s after %d attempts, want failed after 1", got.Status, len(got.Attempts))
	}
}

func TestDispatcherTreatsEveryAnswerButA2xxAsAFailure(t *testing.T) {
	for _, code := range []int{199, 204, 299, 301, 302, 400, 404, 500} {
		t.Run(fmt.Sprint(code), func(t *testing.T) {
			w := newWhWorld(t)
			w.sender.script(whStatus(code))
			e := w.event(t)
			whDeliverDue(t, w.dispatcher(t, application.DispatcherConfig{}))
			want := ports.DeliveryPending
			if code >= 200 && code <= 299 {
				want = ports.DeliveryDelivered
			}
			if got := w.outbox.get(e.ID).Status; got != want {
				t.Errorf("status after %d = %s, want %s", code, got, want)
			}
		})
	}
}

func TestDispatcherSpendsNoAttemptOnItsOwnFailures(t *testing.T) {
	w := newWhWorld(t)
	e := w.event(t)
	w.accounts.FailAll(ports.ErrUnavailable)
	d := w.dispatcher(t, application.DispatcherConfig{Lease: time.Minute})

	n, err := d.DeliverDue(context.Background())
	if n != 1 || !errors.Is(err, ports.ErrUnavailable) {
		t.Fatalf("DeliverDue = %d, %v; want 1 and the store's error", n, err)
	}
	if got := w.outbox.get(e.ID); len(got.Attempts) != 0 || len(w.sender.sent()) != 0 {
		t.Fatalf("an attempt was spent: %+v", got)
	}
	w.accounts.Clear()
	if n := whDeliverDue(t, d); n != 0 {
		t.Errorf("claimed again before the lease ran out")
	}
	w.clock.Advance(time.Minute)
	whDeliverDue(t, d)
	if got := w.outbox.get(e.ID); got.Status != ports.DeliveryDelivered || len(got.Attempts) != 1 {
		t.Errorf("delivery = %s after %d attempts, want delivered after 1", got.Status, len(got.Attempts))
	}
}

func TestADispatcherThatDiesMidDeliveryLeavesItToAnotherOnceTheLeaseEnds(t *testing.T) {
	w := newWhWorld(t)
	e := w.event(t)
	entered, unblock := make(chan struct{}), make(chan struct{})
	w.sender.script(func(ports.WebhookMessage) (ports.WebhookResponse, error) {
		close(entered)
		<-unblock // the process hangs here: it neither finishes nor gives its lease back
		return senderAnswer(200), nil
	})
	dead := w.dispatcher(t, application.DispatcherConfig{Owner: "instance-a", Lease: 30 * time.Second})
	other := w.dispatcher(t, application.DispatcherConfig{Owner: "instance-b", Lease: 30 * time.Second})

	done := make(chan error, 1)
	go func() { _, err := dead.DeliverDue(context.Background()); done <- err }()
	<-entered
	if n := whDeliverDue(t, other); n != 0 {
		t.Fatal("another dispatcher claimed a delivery under lease")
	}
	w.clock.Advance(30 * time.Second)
	if n := whDeliverDue(t, other); n != 1 {
		t.Fatal("another dispatcher did not take the expired lease over")
	}
	close(unblock)
	if err := <-done; err != nil {
		t.Errorf("the late dispatcher's DeliverDue: %v", err)
	}

	got := w.outbox.get(e.ID)
	if got.Status != ports.DeliveryDelivered || len(got.Attempts) != 1 || !got.Attempts[0].At.Equal(whStart.Add(30*time.Second)) {
		t.Errorf("delivery = %+v, want one attempt, the other dispatcher's", got)
	}
	for _, m := range w.sender.sent() {
		if m.EventID != e.ID {
			t.Errorf("webhook-id %s, want %s on both", m.EventID, e.ID)
		}
	}
}

func TestARunningDispatcherGivesItsLeasesBackWhenStopped(t *testing.T) {
	w := newWhWorld(t)
	e := w.event(t)
	entered := make(chan struct{})
	w.sender.script(func(m sentMessage) (ports.WebhookResponse, error) {
		close(entered)
		<-m.Ctx.Done() // the receiver is slow; the process shuts down meanwhile
		return ports.WebhookResponse{}, m.Ctx.Err()
	})
	first := w.dispatcher(t, application.DispatcherConfig{Owner: "instance-a", PollInterval: time.Millisecond})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- first.Run(ctx) }()
	<-entered
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
	if got := w.outbox.get(e.ID); len(got.Attempts) != 0 || w.outbox.owner(e.ID) != "" {
		t.Fatalf("after shutdown: %d attempts, lease held by %q; want none and none", len(got.Attempts), w.outbox.owner(e.ID))
	}

	// A restarted (or another) dispatcher delivers it at once, without waiting for a lease.
	whDeliverDue(t, w.dispatcher(t, application.DispatcherConfig{Owner: "instance-b"}))
	if got := w.outbox.get(e.ID); got.Status != ports.DeliveryDelivered || len(got.Attempts) != 1 {
		t.Errorf("delivery = %s after %d attempts, want delivered after 1", got.Status, len(got.Attempts))
	}
}

func TestTwoDispatchersOnOneOutboxDeliverEveryEventOnceAndNeverTogether(t *testing.T) {
	w := newWhWorld(t)
	const n = 300
	for range n {
		w.event(t)
	}
	w.sender.delay = time.Millisecond
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for _, owner := range []string{"instance-a", "instance-b"} {
		d := w.dispatcher(t, application.DispatcherConfig{Owner: owner, Concurrency: 8, PollInterval: time.Millisecond})
		wg.Go(func() {
			if err := d.Run(ctx); err != nil {
				t.Errorf("Run %s: %v", owner, err)
			}
		})
	}
	deadline := time.Now().Add(20 * time.Second)
	for w.outbox.count(ports.DeliveryDelivered) < n && time.Now().Before(deadline) {
		time.Sleep(2 * time.Millisecond)
	}
	cancel()
	wg.Wait()

	if got := w.outbox.count(ports.DeliveryDelivered); got != n {
		t.Fatalf("%d of %d events delivered", got, n)
	}
	perEvent := map[string]int{}
	for _, m := range w.sender.sent() {
		perEvent[m.EventID]++
	}
	for id, c := range perEvent {
		if c != 1 {
			t.Errorf("event %s sent %d times", id, c)
		}
	}
	if w.sender.overlap.Load() != 0 {
		t.Errorf("an event was being sent twice at the same time")
	}
	for _, owner := range []string{"instance-a", "instance-b"} {
		if w.outbox.claims(owner) == 0 {
			t.Errorf("%s delivered nothing: the test did not make the dispatchers compete", owner)
		}
	}
	if w.sender.maxInFlight.Load() > 16 {
		t.Errorf("%d sends in flight, beyond the two dispatchers' 8 each", w.sender.maxInFlight.Load())
	}
}

func TestRunKeepsToItsConcurrency(t *testing.T) {
	w := newWhWorld(t)
	const n = 60
	for range n {
		w.event(t)
	}
	w.sender.delay = 2 * time.Millisecond
	ctx, cancel := context.WithCancel(context.Background())
	d := w.dispatcher(t, application.DispatcherConfig{Concurrency: 3, PollInterval: time.Hour})
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	deadline := time.Now().Add(20 * time.Second)
	for w.outbox.count(ports.DeliveryDelivered) < n && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	// The poll interval is an hour: every delivery after the first three was claimed because a
	// slot came free, not because of the timer.
	if got := w.outbox.count(ports.DeliveryDelivered); got != n {
		t.Fatalf("%d of %d delivered", got, n)
	}
	if m := w.sender.maxInFlight.Load(); m > 3 {
		t.Errorf("%d sends in flight, want at most 3", m)
	}
}

// An idle dispatcher stretches its polls on a slow store (a hundred times what a look took),
// but never beyond MaxPollInterval (or the look's own time, when longer): here each look takes
// 200 ms of the clock, which would stretch the next to 20 s; an event stored after the first
// look is still delivered within 200 ms (and a busy machine's delays).
func TestAnIdleDispatcherOnASlowStoreLooksAgainWithinMaxPollInterval(t *testing.T) {
	w := newWhWorld(t)
	slow := &slowOutbox{fakeOutbox: w.outbox, clock: w.clock, took: 200 * time.Millisecond}
	d, err := application.NewDispatcher(slow, w.accounts, w.encoder, w.sender, w.clock, fakeRandom(0.5),
		application.DispatcherConfig{Owner: "instance-a", PollInterval: 5 * time.Millisecond, MaxPollInterval: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()
	waitFor(t, 10*time.Second, "the first look", func() bool { return slow.claims.Load() > 0 })
	looked := slow.claims.Load()
	w.event(t)
	waitFor(t, 10*time.Second, "the event's delivery", func() bool { return w.outbox.count(ports.DeliveryDelivered) == 1 })
	if n := slow.claims.Load() - looked; n < 1 {
		t.Fatalf("delivered without another look")
	}
}

// slowOutbox is the fake outbox on a slow store: every claim takes took of the clock.
type slowOutbox struct {
	*fakeOutbox
	clock  *fakeClock
	took   time.Duration
	claims atomic.Int64
}

func (o *slowOutbox) Claim(ctx context.Context, owner string, now time.Time, lease time.Duration, limit int, skipAccounts []string) ([]ports.Delivery, error) {
	o.claims.Add(1)
	o.clock.Advance(o.took)
	return o.fakeOutbox.Claim(ctx, owner, now, lease, limit, skipAccounts)
}

// waitFor polls cond every millisecond until it holds, and fails the test after within.
func waitFor(t *testing.T, within time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("still waiting for %s after %s", what, within)
		}
		time.Sleep(time.Millisecond)
	}
}

func TestListEvents(t *testing.T) {
	w := newWhWorld(t)
	store := memory.NewStore()
	txs := newTxStore(store)
	for id, account := range map[string]string{"tx-1": "acc-1", "tx-quiet": "acc-1", "tx-2": "acc-2"} {
		tx, err := domain.NewTransaction(id, "payment-token-of-the-"+id, account, "SANDBOX", domain.Order{Amount: 1000,
			PaymentMethod: domain.PaymentPIX, ExpirationSeconds: 3600, IsInfoProduct: true}, domain.Idempotency{}, whStart)
		if err != nil {
			t.Fatal(err)
		}
		txs.put(tx)
	}
	wds := store.Withdrawals()
	wd, err := domain.NewWithdrawal("wd-1", "acc-1", "SANDBOX", domain.Payout{Amount: 3000,
		PixKey: domain.PixKey{Type: domain.PixKeyEmail, Key: "loja@example.com"}}, domain.Idempotency{}, whStart)
	if err != nil {
		t.Fatal(err)
	}
	// The withdrawal's debit is checked against the balance: an opening balance covers it.
	if _, err := store.Ledger().Post(context.Background(), domain.OpeningBalancePostings("acc-1", domain.LedgerBalance{}, domain.LedgerBalance{Available: 3000})...); err != nil {
		t.Fatal(err)
	}
	if err := wds.Create(context.Background(), wd); err != nil {
		t.Fatal(err)
	}
	first := w.event(t)
	w.clock.Advance(time.Second)
	second := w.event(t)
	w.eventOf(t, "acc-2", domain.ResourceTransaction, "tx-2")
	wdEvent := w.eventOf(t, "acc-1", domain.ResourceWithdrawal, "wd-1")
	uc := application.NewListEvents(txs, wds, w.outbox)
	me := domain.Principal{AccountID: "acc-1"}
	ctx := context.Background()

	t.Run("a transaction's events come oldest first", func(t *testing.T) {
		ds, err := uc.Execute(ctx, me, domain.ResourceTransaction, "tx-1")
		if err != nil {
			t.Fatal(err)
		}
		if len(ds) != 2 || ds[0].Event.ID != first.ID || ds[1].Event.ID != second.ID {
			t.Errorf("got %v, want the two events of tx-1 in order", whIDs(ds))
		}
	})
	t.Run("a withdrawal's events are its own", func(t *testing.T) {
		ds, err := uc.Execute(ctx, me, domain.ResourceWithdrawal, "wd-1")
		if err != nil || len(ds) != 1 || ds[0].Event.ID != wdEvent.ID {
			t.Errorf("got %v, %v; want the withdrawal's event", whIDs(ds), err)
		}
	})
	t.Run("a transaction without events has an empty list", func(t *testing.T) {
		ds, err := uc.Execute(ctx, me, domain.ResourceTransaction, "tx-quiet")
		if err != nil || ds == nil || len(ds) != 0 {
			t.Errorf("got %#v, %v; want an empty list", ds, err)
		}
	})
	t.Run("another account's transaction is not found", func(t *testing.T) {
		if _, err := uc.Execute(ctx, me, domain.ResourceTransaction, "tx-2"); !errors.Is(err, domain.ErrNotFound) {
			t.Errorf("err = %v, want ErrNotFound", err)
		}
	})
	t.Run("a missing withdrawal is not found", func(t *testing.T) {
		if _, err := uc.Execute(ctx, me, domain.ResourceWithdrawal, "wd-404"); !errors.Is(err, domain.ErrNotFound) {
			t.Errorf("err = %v, want ErrNotFound", err)
		}
	})
	t.Run("a transaction id is not looked up as a withdrawal", func(t *testing.T) {
		if _, err := uc.Execute(ctx, me, domain.ResourceWithdrawal, "tx-1"); !errors.Is(err, domain.ErrNotFound) {
			t.Errorf("err = %v, want ErrNotFound", err)
		}
	})
	t.Run("an unknown kind of resource is an error", func(t *testing.T) {
		if _, err := uc.Execute(ctx, me, domain.ResourceKind("refund"), "tx-1"); err == nil {
			t.Error("no error")
		}
	})
	t.Run("a nil port panics", func(t *testing.T) {
		defer func() {
			if recover() == nil {
				t.Error("NewListEvents accepted a nil outbox")
			}
		}()
		application.NewListEvents(txs, wds, nil)
	})
}

func whIDs(ds []ports.Delivery) []string {
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = d.Event.ID
	}
	return out
}

// whAddAccount stores an account whose webhooks are signed with secret.
func whAddAccount(t testing.TB, repo *porttest.Accounts, id, secret string) {
	t.Helper()
	a, err := domain.NewAccount(id, "Loja "+id, domain.AllScopes(), secret, whStart.Add(-time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if err := repo.CreateAccount(context.Background(), a); err != nil {
		t.Fatal(err)
	}
}

// whStatus answers code with the verdict a sender gives it.
func whStatus(code int) func(ports.WebhookMessage) (ports.WebhookResponse, error) {
	return func(ports.WebhookMessage) (ports.WebhookResponse, error) {
		return senderAnswer(code), nil
	}
}

func whFail(text string) func(ports.WebhookMessage) (ports.WebhookResponse, error) {
	return func(ports.WebhookMessage) (ports.WebhookResponse, error) {
		return ports.WebhookResponse{}, errors.New(text)
	}
}

func TestAHostThatKeepsNotAnsweringIsHeldBackWithoutSpendingAttemptsThenProbedOnce(t *testing.T) {
	w := newWhWorld(t)
	answer := false
	w.sender.fallback = func(ports.WebhookMessage) (ports.WebhookResponse, error) {
		if answer {
			return senderAnswer(204), nil
		}
		return ports.WebhookResponse{}, errors.New("no answer within 10s")
	}
	d := w.dispatcher(t, application.DispatcherConfig{Concurrency: 3, Lease: time.Minute})
	for range 3 {
		w.event(t)
	}
	whDeliverDue(t, d) // three attempts without an answer: the host's circuit opens for 30 s
	if n := len(w.sender.sent()); n != 3 {
		t.Fatalf("%d sent, want 3", n)
	}

	held := w.event(t)
	if n := whDeliverDue(t, d); n != 1 || len(w.sender.sent()) != 3 {
		t.Fatalf("claimed %d, sent %d in all; want the new event claimed and held back", n, len(w.sender.sent()))
	}
	if got := w.outbox.get(held.ID); len(got.Attempts) != 0 || got.Status != ports.DeliveryPending {
		t.Fatalf("the held-back event = %+v, want pending with no attempt spent", got)
	}

	// Past the cooldown and the held lease: one probe goes, the others wait for it.
	w.clock.Advance(time.Minute + time.Second)
	whDeliverDue(t, d)
	if n := len(w.sender.sent()); n != 4 {
		t.Fatalf("%d sent in all, want one probe more (4)", n)
	}
	// The probe failed: the circuit reopens, for twice as long (60 s): 45 s later, nothing goes.
	w.clock.Advance(45 * time.Second)
	whDeliverDue(t, d)
	if n := len(w.sender.sent()); n != 4 {
		t.Fatalf("%d sent in all during the doubled cooldown, want still 4", n)
	}
	// The host answers again: the next probe closes the circuit and the rest go.
	answer = true
	w.clock.Advance(time.Minute + time.Second)
	whDeliverDue(t, d)
	w.clock.Advance(time.Minute + time.Second)
	whDeliverDue(t, d)
	if got := w.outbox.count(ports.DeliveryDelivered); got != 4 {
		t.Fatalf("%d delivered once the host answered, want all 4 (sent %d)", got, len(w.sender.sent()))
	}
}

func TestOneAccountHoldsAtMostItsShareOfTheWorkers(t *testing.T) {
	w := newWhWorld(t)
	w.sender.delay = 50 * time.Millisecond
	w.sender.fallback = whStatus(204)
	for range 12 {
		w.eventOf(t, "acc-1", domain.ResourceTransaction, "tx-1")
	}
	other := w.eventOf(t, "acc-2", domain.ResourceTransaction, "tx-2")
	d := w.dispatcher(t, application.DispatcherConfig{Concurrency: 4, PollInterval: 5 * time.Millisecond})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	deadline := time.Now().Add(5 * time.Second)
	for w.outbox.count(ports.DeliveryDelivered) < 13 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got := w.outbox.count(ports.DeliveryDelivered); got != 13 {
		t.Fatalf("%d delivered, want 13", got)
	}
	if m := w.sender.maxInFlight.Load(); m > 3 {
		t.Errorf("%d deliveries in flight at once, want acc-1's share (2) and acc-2's one at most", m)
	}
	// acc-2's event went in the first round, beside acc-1's share, not after acc-1's twelve.
	sent := w.sender.sent()
	for i, m := range sent {
		if m.EventID == other.ID && i > 2 {
			t.Errorf("acc-2's event went %d-th, behind acc-1's", i+1)
		}
	}
}

func TestAnOpenCircuitHoldsBackOnlyItsOwnAccountsDeliveriesToTheHost(t *testing.T) {
	w := newWhWorld(t)
	w.sender.fallback = func(m ports.WebhookMessage) (ports.WebhookResponse, error) {
		return ports.WebhookResponse{}, errors.New("no answer within 10s")
	}
	d := w.dispatcher(t, application.DispatcherConfig{Concurrency: 3})
	for range 3 {
		w.eventOf(t, "acc-1", domain.ResourceTransaction, "tx-1")
	}
	whDeliverDue(t, d) // acc-1's circuit for merchant.example opens
	w.eventOf(t, "acc-1", domain.ResourceTransaction, "tx-1")
	other := w.eventOf(t, "acc-2", domain.ResourceTransaction, "tx-2") // the same host
	whDeliverDue(t, d)
	if got := w.outbox.get(other.ID); len(got.Attempts) != 1 {
		t.Fatalf("acc-2's event to the same host made %d attempts, want 1: acc-1's circuit is acc-1's", len(got.Attempts))
	}
	if n := len(w.sender.sent()); n != 4 {
		t.Fatalf("%d sent in all, want acc-1's three and acc-2's one", n)
	}
}
