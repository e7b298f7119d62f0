package application

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/pixgate/pixgate/domain"
	"github.com/pixgate/pixgate/ports"
)

// Schedule says when a failed webhook delivery is tried again.
type Schedule struct {
	// Delays[n-1] is the wait after the n-th failed attempt, so an event gets len(Delays)+1
	// attempts in all.
	Delays []time.Duration
	// Jitter spreads each delay at random by up to this fraction either way (0.1 is ±10%), so
	// that the events of one outage do not all come back at the same second.
	Jitter float64
}

// StandardSchedule is the Standard Webhooks schedule: 10 attempts, the first at once, then about
// 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 14 h, 20 h and 24 h after each failure, ±10%.
func StandardSchedule() Schedule {
	return Schedule{
		Delays: []time.Duration{
			5 * time.Second, 5 * time.Minute, 30 * time.Minute, 2 * time.Hour, 5 * time.Hour,
			10 * time.Hour, 14 * time.Hour, 20 * time.Hour, 24 * time.Hour,
		},
		Jitter: 0.1,
	}
}

// Attempts is how many attempts an event gets before it is marked failed.
func (s Schedule) Attempts() int { return len(s.Delays) + 1 }

// Next is the wait after failed attempts have failed, spread by r (a random number in [0, 1):
// 0.5 gives the exact delay); false when they used the schedule up.
func (s Schedule) Next(failed int, r float64) (time.Duration, bool) {
	if failed < 1 || failed > len(s.Delays) {
		return 0, false
	}
	d := float64(s.Delays[failed-1])
	return time.Duration(d * (1 + s.Jitter*(2*r-1))), true
}

// longest is the longest wait of the schedule: a receiver's Retry-After is honoured up to it, so
// that no receiver can park an event for a year.
func (s Schedule) longest() time.Duration {
	var m time.Duration
	for _, d := range s.Delays {
		m = max(m, d)
	}
	return m
}

func (s Schedule) validate() error {
	if s.Jitter < 0 || s.Jitter >= 1 {
		return fmt.Errorf("schedule jitter %v is not in [0, 1)", s.Jitter)
	}
	for i, d := range s.Delays {
		if d <= 0 {
			return fmt.Errorf("schedule delay %d is %v, not positive", i+1, d)
		}
	}
	return nil
}

// DispatcherConfig tunes a Dispatcher. Zero fields take the defaults named beside them.
type DispatcherConfig struct {
	// Owner names this process as the holder of the leases it takes; unique per process (a
	// fresh UUID at start does). Required.
	Owner string
	// Concurrency bounds the deliveries in flight at once. Default 8.
	Concurrency int
	// PerAccount bounds the deliveries of one account in flight at once, so that the workers
	// are shared: an account whose receiver hangs holds PerAccount of them at most, and the
	// others keep going. Default half of Concurrency (at least 1).
	PerAccount int
	// BreakerFailures is how many attempts in a row without an answer (a timeout, a refused
	// connection) open a receiver host's circuit: its deliveries are then held back, without
	// spending an attempt, until BreakerCooldown has passed and one probe gets an answer.
	// Default 3.
	BreakerFailures int
	// BreakerCooldown is how long an open circuit holds its host's deliveries back; it
	// doubles each time a probe fails, up to 16 times. Default 30 s.
	BreakerCooldown time.Duration
	// PollInterval is how often an idle dispatcher looks for due deliveries, and so the usual
	// delay between a status change and its notification. Default 1 s.
	PollInterval time.Duration
	// MaxPollInterval bounds the wait between two looks, however long a look takes on a slow
	// store (see Pace): a due delivery is claimed within it plus the look's own time. Default
	// 5 s, and never less than PollInterval.
	MaxPollInterval time.Duration
	// Lease is how long a claimed delivery stays this dispatcher's. It must outlast a whole
	// attempt (the sender's 10 s timeout, the account lookup and the record); a dispatcher that
	// dies leaves its deliveries to others once it runs out. Default 1 min.
	Lease time.Duration
	// Schedule of the retries. Default StandardSchedule (a schedule without delays is taken
	// for the default).
	Schedule Schedule
	// Logger receives what goes wrong in the background. Default: discarded.
	Logger *slog.Logger
	// OnAttempt, when set, is called after each recorded attempt (metrics); it must be quick
	// and safe for concurrent use.
	OnAttempt func(e domain.Event, a ports.Attempt, status ports.DeliveryStatus)
}

// Dispatcher delivers the outbox's webhook events: it claims due deliveries with a lease, signs
// and sends each to its resource's webhookUrl, and records the attempt with the outcome the
// sender's verdict gives: delivered; failed at once when the endpoint is gone; when the
// verdict is to retry, or there is no answer, tried again on the schedule
// (later still if the receiver's Retry-After asks for longer), and failed after the last
// attempt. Several dispatchers, in one process or many, may share one outbox: the leases keep
// each attempt to one of them.
//
// The workers are shared between accounts (DispatcherConfig.PerAccount) and a receiver host
// that keeps not answering is backed off (a circuit breaker per account and host), so that
// one account's dead receiver delays another account's delivery by one delivery slot at most.
type Dispatcher struct {
	outbox   ports.Outbox
	accounts ports.AccountRepository
	encoder  ports.EventEncoder
	sender   ports.WebhookSender
	clock    ports.Clock
	random   ports.Random
	cfg      DispatcherConfig
	log      *slog.Logger

	mu       sync.Mutex
	inFlight int            // deliveries being attempted
	byAcct   map[string]int // of which, per account
	circuits map[string]*circuit
}

// circuit is the breaker of one receiver host. A host without one is closed.
type circuit struct {
	failures  int       // attempts in a row without an answer
	opens     int       // times opened in a row, for the doubling cooldown
	openUntil time.Time // zero while closed
	probing   bool      // half open: one delivery is testing the host
}

// recordTimeout bounds the writes made after the caller's context ended: an attempt that was
// made is recorded even during a shutdown, and leases are given back.
const recordTimeout = 5 * time.Second

// NewDispatcher builds a dispatcher; random draws the jitter of the retries. It panics on a
// nil port and answers an error for a bad configuration.
func NewDispatcher(outbox ports.Outbox, accounts ports.AccountRepository, encoder ports.EventEncoder,
	sender ports.WebhookSender, clock ports.Clock, random ports.Random, cfg DispatcherConfig) (*Dispatcher, error) {
	requirePorts("NewDispatcher", outbox, accounts, encoder, sender, clock, random)
	if cfg.Owner == "" {
		return nil, errors.New("webhook dispatcher: owner is required")
	}
	if cfg.Concurrency < 0 || cfg.PollInterval < 0 || cfg.MaxPollInterval < 0 || cfg.Lease < 0 {
		return nil, errors.New("webhook dispatcher: concurrency, poll intervals and lease must not be negative")
	}
	if cfg.PerAccount < 0 || cfg.BreakerFailures < 0 || cfg.BreakerCooldown < 0 {
		return nil, errors.New("webhook dispatcher: per-account share and breaker settings must not be negative")
	}
	if cfg.Concurrency == 0 {
		cfg.Concurrency = 8
	}
	if cfg.PerAccount == 0 {
		cfg.PerAccount = max(1, cfg.Concurrency/2)
	}
	cfg.PerAccount = min(cfg.PerAccount, cfg.Concurrency)
	if cfg.BreakerFailures == 0 {
		cfg.BreakerFailures = 3
	}
	if cfg.BreakerCooldown == 0 {
		cfg.BreakerCooldown = 30 * time.Second
	}
	if cfg.PollInterval == 0 {
		cfg.PollInterval = time.Second
	}
	if cfg.MaxPollInterval == 0 {
		cfg.MaxPollInterval = 5 * time.Second
	}
	cfg.MaxPollInterval = max(cfg.MaxPollInterval, cfg.PollInterval)
	if cfg.Lease == 0 {
		cfg.Lease = time.Minute
	}
	if len(cfg.Schedule.Delays) == 0 {
		cfg.Schedule = StandardSchedule()
	}
	if err := cfg.Schedule.validate(); err != nil {
		return nil, fmt.Errorf("webhook dispatcher: %w", err)
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Dispatcher{outbox: outbox, accounts: accounts, encoder: encoder, sender: sender,
		clock: clock, random: random, cfg: cfg, log: log, byAcct: map[string]int{}, circuits: map[string]*circuit{}}, nil
}

// Run delivers due events until ctx ends: it claims as many as it has free slots, sends them in
// parallel, and looks again when a slot frees, or on its Pace: after PollInterval, sooner
// after a look that found work on a fast store, later after one that found nothing on a slow
// store, but never after more than MaxPollInterval. When ctx ends it abandons the attempts in
// flight (nothing is recorded for them), waits for them, and gives its leases back so that
// another dispatcher takes over at once. It answers nil, or the error of that last release.
func (d *Dispatcher) Run(ctx context.Context) error {
	var wg sync.WaitGroup
	freed := make(chan struct{}, 1)
	pace := Pace{Interval: d.cfg.PollInterval, Bound: d.cfg.MaxPollInterval}
	poll := time.NewTimer(d.cfg.PollInterval)
	defer poll.Stop()
	for {
		start := d.clock.Now()
		started := d.fill(ctx, &wg, freed)
		poll.Reset(pace.Next(d.clock.Now().Sub(start), started > 0))
		select {
		case <-ctx.Done():
			wg.Wait()
			return d.release(ctx)
		case <-freed: // a slot is free: more may be waiting behind the ones just done
		case <-poll.C:
		}
	}
}

// fill claims due deliveries and starts them until the slots are taken or nothing more is
// due. Each claim skips the accounts that hold their share of the slots already and takes no
// more than any other account may still start, so no account ever holds more than PerAccount.
// A delivery to a host whose circuit is open is not started: its lease is left to run out,
// which puts it back without spending an attempt. It answers how many it started.
func (d *Dispatcher) fill(ctx context.Context, wg *sync.WaitGroup, freed chan<- struct{}) (started int) {
	for ctx.Err() == nil {
		limit, skip := d.share()
		if limit == 0 {
			return started
		}
		batch, err := d.outbox.Claim(ctx, d.cfg.Owner, d.clock.Now(), d.cfg.Lease, limit, skip)
		if err != nil {
			if ctx.Err() == nil {
				d.log.Error("claiming webhook deliveries", "err", err)
			}
			return started
		}
		held := 0
		for _, dl := range batch {
			host := receiverHost(dl.Event)
			if !d.admit(host, dl.Event.AccountID) {
				held++
				continue
			}
			started++
			wg.Go(func() {
				if err := d.deliver(ctx, dl, host); err != nil {
					d.log.Error("delivering webhook", "event", dl.Event.ID, "err", err)
				}
				d.done(dl.Event.AccountID)
				select {
				case freed <- struct{}{}:
				default:
				}
			})
		}
		if held > 0 {
			d.log.Debug("webhook deliveries held back: their receiver's circuit is open", "count", held)
		}
		if len(batch) < limit && held == 0 {
			return started // nothing more is due now
		}
		if len(batch) == 0 {
			return started
		}
	}
	return started
}

// share is how many deliveries the next claim may take, and the accounts it must skip.
func (d *Dispatcher) share() (int, []string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	limit := min(d.cfg.Concurrency-d.inFlight, d.cfg.PerAccount)
	var skip []string
	for account, n := range d.byAcct {
		if n >= d.cfg.PerAccount {
			skip = append(skip, account)
		} else {
			limit = min(limit, d.cfg.PerAccount-n)
		}
	}
	return max(limit, 0), skip
}

// admit takes a slot for a delivery of account to host, unless host's circuit holds it back.
func (d *Dispatcher) admit(host, account string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if c := d.circuits[host]; c != nil && !c.openUntil.IsZero() {
		if d.clock.Now().Before(c.openUntil) || c.probing {
			return false
		}
		c.probing = true // half open: this delivery is the probe
	}
	d.inFlight++
	d.byAcct[account]++
	return true
}

// done gives back the slot of a delivery of account.
func (d *Dispatcher) done(account string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.inFlight--
	if d.byAcct[account]--; d.byAcct[account] <= 0 {
		delete(d.byAcct, account)
	}
}

// observeHost feeds an attempt's outcome to its host's circuit: an answer, whatever its status,
// closes it; no answer counts towards opening it, and reopens it when it was the probe.
func (d *Dispatcher) observeHost(host string, answered bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	c := d.circuits[host]
	if answered {
		delete(d.circuits, host)
		return
	}
	if c == nil {
		c = &circuit{}
		d.circuits[host] = c
	}
	c.failures++
	c.probing = false
	if c.failures >= d.cfg.BreakerFailures {
		c.opens++
		c.openUntil = d.clock.Now().Add(d.cfg.BreakerCooldown << min(c.opens-1, 4))
		d.log.Warn("webhook receiver host does not answer: its deliveries are held back",
			"accountAndHost", host, "failures", c.failures, "until", c.openUntil)
	}
}

// abandonProbe lets another delivery probe host when this one was not sent after all.
func (d *Dispatcher) abandonProbe(host string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if c := d.circuits[host]; c != nil {
		c.probing = false
	}
}

// receiverHost is the circuit key of an event's receiver: its URL's host and port, in
// lowercase, as the account sees it. Each account has its own circuit for a host, so that
// one account pointing at a path that hangs on a host others use too (a webhook relay) backs
// off its own deliveries only.
func receiverHost(e domain.Event) string {
	host := ""
	if u, err := url.Parse(e.WebhookURL); err == nil {
		host = strings.ToLower(u.Host)
	}
	return e.AccountID + " " + host
}

// DeliverDue makes one pass: it claims up to Concurrency deliveries due now, sends them in
// parallel and records each attempt. It answers how many it claimed, and the errors that kept
// some from being attempted or recorded (those are tried again when their lease runs out). A
// lease lost to another dispatcher is not an error. Tests and tools drive it; Run is for serving.
func (d *Dispatcher) DeliverDue(ctx context.Context) (int, error) {
	batch, err := d.outbox.Claim(ctx, d.cfg.Owner, d.clock.Now(), d.cfg.Lease, d.cfg.Concurrency, nil)
	if err != nil {
		return 0, fmt.Errorf("claiming webhook deliveries: %w", err)
	}
	errs := make([]error, len(batch))
	var wg sync.WaitGroup
	for i, dl := range batch {
		host := receiverHost(dl.Event)
		if !d.admit(host, dl.Event.AccountID) {
			continue // its circuit is open: the lease runs out and puts it back
		}
		wg.Go(func() {
			defer d.done(dl.Event.AccountID)
			errs[i] = d.deliver(ctx, dl, host)
		})
	}
	wg.Wait()
	if ctx.Err() != nil {
		errs = append(errs, d.release(ctx))
	}
	return len(batch), errors.Join(errs...)
}

// deliver makes one attempt of a claimed delivery to host and records it.
func (d *Dispatcher) deliver(ctx context.Context, dl ports.Delivery, host string) error {
	ev := dl.Event
	at := d.clock.Now()
	msg, err := d.message(ctx, ev, at)
	if err != nil {
		d.abandonProbe(host)
		if ctx.Err() != nil {
			return nil // shutting down: the lease is given back, no attempt was made
		}
		// Our own failure, not the receiver's: no attempt is spent; the lease runs out and the
		// delivery is tried again then.
		return fmt.Errorf("preparing webhook event %s: %w", ev.ID, err)
	}
	resp, sendErr := d.sender.Send(ctx, msg)
	if sendErr != nil && ctx.Err() != nil {
		d.abandonProbe(host)
		return nil // abandoned by a shutdown: not the receiver's failure
	}
	d.observeHost(host, sendErr == nil)
	end := d.clock.Now()
	attempt := ports.Attempt{At: at, StatusCode: resp.StatusCode, Duration: end.Sub(at)}
	if sendErr != nil {
		attempt.StatusCode, attempt.Error = 0, sendErr.Error()
	}
	status, next := d.judge(len(dl.Attempts)+1, resp, sendErr, end)

	// A made attempt is recorded even when ctx ended meanwhile: the receiver may have it.
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), recordTimeout)
	defer cancel()
	err = d.outbox.RecordAttempt(rctx, ev.ID, d.cfg.Owner, attempt, status, next)
	if errors.Is(err, ports.ErrVersionConflict) {
		// The lease ran out during the attempt and another dispatcher took the delivery over;
		// it records its own attempt. Receivers deduplicate on webhook-id.
		d.log.Warn("webhook lease lost during the attempt", "event", ev.ID)
		return nil
	}
	if err != nil {
		return fmt.Errorf("recording webhook attempt of event %s: %w", ev.ID, err)
	}
	if d.cfg.OnAttempt != nil {
		d.cfg.OnAttempt(ev, attempt, status)
	}
	return nil
}

// message builds the signed request of an event at time at.
func (d *Dispatcher) message(ctx context.Context, ev domain.Event, at time.Time) (ports.WebhookMessage, error) {
	account, err := d.accounts.GetAccount(ctx, ev.AccountID)
	if err != nil {
		return ports.WebhookMessage{}, fmt.Errorf("reading the signing secrets of account %s: %w", ev.AccountID, err)
	}
	body, err := d.encoder.EncodeEvent(ev)
	if err != nil {
		return ports.WebhookMessage{}, fmt.Errorf("encoding: %w", err)
	}
	return ports.WebhookMessage{URL: ev.WebhookURL, EventID: ev.ID, Timestamp: at, Body: body,
		Secrets: account.Webhook().Signing(at)}, nil
}

// judge turns the outcome of attempt number n, ended at end, into the delivery's status and
// next attempt time (zero when there is none).
func (d *Dispatcher) judge(n int, resp ports.WebhookResponse, sendErr error, end time.Time) (ports.DeliveryStatus, time.Time) {
	if sendErr == nil && resp.Verdict == ports.WebhookDelivered {
		return ports.DeliveryDelivered, time.Time{}
	}
	if sendErr == nil && resp.Verdict == ports.WebhookGone {
		return ports.DeliveryFailed, time.Time{}
	}
	wait, ok := d.cfg.Schedule.Next(n, d.random.Float64())
	if !ok {
		return ports.DeliveryFailed, time.Time{}
	}
	if asked := min(resp.RetryAfter, d.cfg.Schedule.longest()); asked > wait {
		wait = asked
	}
	return ports.DeliveryPending, end.Add(wait)
}

// release gives back every lease this dispatcher holds, after ctx ended.
func (d *Dispatcher) release(ctx context.Context) error {
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), recordTimeout)
	defer cancel()
	if err := d.outbox.Release(rctx, d.cfg.Owner); err != nil {
		return fmt.Errorf("releasing webhook leases of %s: %w", d.cfg.Owner, err)
	}
	return nil
}

// ListEvents lists the webhook deliveries of one of the caller's transactions or withdrawals,
// oldest event first, each with its attempts (GET /transaction/{id}/events and
// GET /withdrawal/{id}/events). Another account's resource is domain.ErrNotFound, like a
// missing one; a resource without events has an empty list.
type ListEvents struct {
	transactions ports.TransactionRepository
	withdrawals  ports.WithdrawalRepository
	outbox       ports.Outbox
}

// NewListEvents builds the use case; it panics on a nil port.
func NewListEvents(transactions ports.TransactionRepository, withdrawals ports.WithdrawalRepository, outbox ports.Outbox) *ListEvents {
	requirePorts("NewListEvents", transactions, withdrawals, outbox)
	return &ListEvents{transactions: transactions, withdrawals: withdrawals, outbox: outbox}
}

// Execute lists the deliveries of the caller's resource id of kind (a transaction or a
// withdrawal), after making sure the resource is the caller's.
func (uc *ListEvents) Execute(ctx context.Context, p domain.Principal, kind domain.ResourceKind, id string) ([]ports.Delivery, error) {
	var err error
	switch kind {
	case domain.ResourceTransaction:
		_, err = uc.transactions.Get(ctx, p.AccountID, id)
	case domain.ResourceWithdrawal:
		_, err = uc.withdrawals.Get(ctx, p.AccountID, id)
	default:
		return nil, fmt.Errorf("events of an unknown resource kind %q", kind)
	}
	if err != nil {
		return nil, err
	}
	ds, err := uc.outbox.Deliveries(ctx, p.AccountID, kind, id)
	if err != nil {
		return nil, fmt.Errorf("events of %s %s: %w", kind, id, err)
	}
	if ds == nil {
		ds = []ports.Delivery{}
	}
	return ds, nil
}
