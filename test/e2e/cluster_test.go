package e2e_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/testcontainers/testcontainers-go"
	tcexec "github.com/testcontainers/testcontainers-go/exec"
)

// cluster is three pixgate containers on one FerretDB container, and the client's ways of
// spreading requests across the instances still alive.
type cluster struct {
	t     *testing.T
	nodes []*pixgate
	next  atomic.Int64

	mu   sync.Mutex
	dead map[int]bool
}

// startCluster starts three instances on s with the extra settings and the options opts
// makes (once per container: a file's reader is read once).
func startCluster(t *testing.T, s *stack, extra map[string]string, opts func() []testcontainers.ContainerCustomizer) *cluster {
	c := &cluster{t: t, dead: map[int]bool{}}
	for i := range 3 {
		var o []testcontainers.ContainerCustomizer
		if opts != nil {
			o = opts()
		}
		c.nodes = append(c.nodes, s.startPixgate(fmt.Sprintf("pixgate-%d", i+1), extra, o...))
	}
	return c
}

// alive are the indexes of the instances not killed.
func (c *cluster) alive() []int {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []int
	for i := range c.nodes {
		if !c.dead[i] {
			out = append(out, i)
		}
	}
	return out
}

// roundRobin is the next live instance in turn; random is any live instance.
func (c *cluster) roundRobin() *pixgate {
	a := c.alive()
	return c.nodes[a[int(c.next.Add(1))%len(a)]]
}

func (c *cluster) random() *pixgate {
	a := c.alive()
	return c.nodes[a[rand.IntN(len(a))]]
}

// kill SIGKILLs instance i; the client stops sending it requests.
func (c *cluster) kill(i int) {
	c.mu.Lock()
	c.dead[i] = true
	c.mu.Unlock()
	c.nodes[i].kill()
}

// call sends a request to an instance pick chooses and, when the instance does not answer
// (killed) or answers 503, to another, a few times: what a client behind a balancer sees.
func (c *cluster) call(ctx context.Context, pick func() *pixgate, method, path string, body any, headers ...string) (reply, error) {
	var r reply
	var err error
	for attempt := 0; attempt < 8; attempt++ {
		r, err = pick().call(ctx, method, path, body, headers...)
		if err == nil && r.status != http.StatusServiceUnavailable {
			return r, nil
		}
		time.Sleep(time.Duration(attempt+1) * 200 * time.Millisecond)
	}
	return r, err
}

// TestThreeInstancesOnOneFerretDB runs three pixgate instances on one FerretDB, whose
// conditional updates are not atomic between clients, while the client spreads its requests
// across them (round-robin and at random), and SIGKILLs one of them in the middle:
//
//   - concurrent creations with shared idempotency keys make one transaction per key, the
//     requests cut off by the kill retried on another instance included;
//   - charges expiring while three sweepers run fail once each, with one FAILED entry in
//     their history and one transaction.failed event, delivered;
//   - withdrawals and refunds racing on one account never overdraw it, and `pixgate ledger
//     verify` finds every entry consistent;
//   - a webhook receiver that fails the first attempt of every event, then recovers, gets
//     every event (those the killed instance held once their lease ended), and never two
//     attempts of one event at once.
func TestThreeInstancesOnOneFerretDB(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	rc := newReceiver(t)
	// The first attempt of every event fails; the retry, five seconds later, succeeds.
	rc.failFirstAttempts(300 * time.Millisecond)
	const caFile = "/tmp/hooks-ca.pem"
	gateway := s.gateway()
	c := startCluster(t, s, map[string]string{
		"PIXGATE_WEBHOOK_ALLOW_PRIVATE": "true",
		"PIXGATE_WEBHOOK_CA_FILE":       caFile,
		"PIXGATE_WEBHOOK_LEASE":         webhookLease.String(),
	}, func() []testcontainers.ContainerCustomizer {
		return []testcontainers.ContainerCustomizer{
			testcontainers.WithFiles(testcontainers.ContainerFile{Reader: bytes.NewReader(rc.caPEM), ContainerFilePath: caFile, FileMode: 0o644}),
			testcontainers.WithHostConfigModifier(func(hc *container.HostConfig) {
				hc.ExtraHosts = append(hc.ExtraHosts, hooksHost+":"+gateway)
			}),
		}
	})
	first := c.nodes[0]
	rc.useSecret(jsonField(first.want(http.StatusOK, "GET", "/webhook/secret", nil), "secret"))
	hook := rc.url("/hooks/" + runTag)
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	created := func(r reply, err error, what string) string {
		t.Helper()
		if err != nil || r.status != http.StatusCreated {
			t.Fatalf("%s: %v %s", what, err, r)
		}
		return r.object(t)["id"].(string)
	}

	// Charges that expire a minute from now (the shortest expiry), one per instance in turn,
	// their webhooks going to a receiver that fails for now.
	var expiring []string
	for i := range 6 {
		body := chargeBody(int64(2_000+i), fmt.Sprintf("expire-%s-%d", runTag, i))
		body["pix"] = map[string]any{"expirationSeconds": 60}
		body["webhookUrl"] = hook
		r, err := c.call(ctx, c.roundRobin, "POST", "/transaction", body)
		expiring = append(expiring, created(r, err, "POST /transaction (expiring)"))
	}
	expiresBy := time.Now().Add(60 * time.Second)

	// Creations with shared keys: eight keys, five requests each at once, each to an
	// instance picked at random; the second instance is killed once a third are answered.
	const keys, perKey = 8, 5
	var answered atomic.Int64
	killed := make(chan struct{})
	go func() {
		defer close(killed)
		for answered.Load() < keys*perKey/3 && ctx.Err() == nil {
			time.Sleep(20 * time.Millisecond)
		}
		c.kill(1)
	}()
	type outcome struct {
		key string
		ids []string
	}
	outcomes := make([]outcome, keys)
	var wg sync.WaitGroup
	var mu sync.Mutex
	for k := range keys {
		key := fmt.Sprintf("idem-%s-%d", runTag, k)
		outcomes[k].key = key
		body := chargeBody(int64(3_000+k), key)
		body["webhookUrl"] = hook
		for range perKey {
			wg.Go(func() {
				r, err := c.call(ctx, c.random, "POST", "/transaction", body, "Idempotency-Key", key)
				answered.Add(1)
				if err != nil || r.status != http.StatusCreated {
					t.Errorf("POST /transaction with key %s: %v %s", key, err, r)
					return
				}
				m, err := r.decode()
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				outcomes[k].ids = append(outcomes[k].ids, m["id"].(string))
				mu.Unlock()
			})
		}
	}
	wg.Wait()
	<-killed
	var webhooked []string // the transactions whose events go to the receiver
	webhooked = append(webhooked, expiring...)
	for _, o := range outcomes {
		slices.Sort(o.ids)
		if ids := slices.Compact(o.ids); len(ids) != 1 {
			t.Errorf("key %s: %d answers naming transactions %v, want one transaction", o.key, len(o.ids), ids)
		} else {
			webhooked = append(webhooked, ids[0])
		}
		r, err := c.call(ctx, c.roundRobin, "GET", "/transaction?externalCode="+o.key, nil)
		if err != nil || r.status != http.StatusOK || cents(r.object(t)["total"]) != 1 {
			t.Errorf("externalCode %s: %v %s, want exactly one transaction", o.key, err, r)
		}
	}
	t.Logf("%d idempotent creations over %d keys answered; pixgate-2 killed after %d", keys*perKey, keys, keys*perKey/3)

	events := func(id string) []map[string]any {
		r, err := c.call(ctx, c.roundRobin, "GET", "/transaction/"+id+"/events", nil)
		if err != nil || r.status != http.StatusOK {
			t.Fatalf("GET /transaction/%s/events: %v %s", id, err, r)
		}
		var out []map[string]any
		for _, e := range r.object(t)["data"].([]any) {
			out = append(out, e.(map[string]any))
		}
		return out
	}

	// Money racing on one account, through the two instances left.
	moneyRace(t, ctx, c)

	// The charges expire: each fails once, whichever instance's sweeper gets there.
	eventually(t, time.Until(expiresBy)+60*time.Second, "the charges to expire", func() (bool, string) {
		var waiting []string
		for _, id := range expiring {
			r, err := c.call(ctx, c.random, "GET", "/transaction/"+id, nil)
			if err != nil || r.status != http.StatusOK {
				t.Fatalf("GET /transaction/%s: %v %s", id, err, r)
			}
			if st := r.object(t)["status"]; st != "FAILED" {
				waiting = append(waiting, fmt.Sprint(st))
			}
		}
		return len(waiting) == 0, fmt.Sprint(waiting)
	})
	failedEvents := map[string]bool{}
	for _, id := range expiring {
		r, _ := c.call(ctx, c.random, "GET", "/transaction/"+id, nil)
		failedEntries := 0
		for _, h := range r.object(t)["statusHistory"].([]any) {
			if h.(map[string]any)["status"] == "FAILED" {
				failedEntries++
			}
		}
		n := 0
		for _, e := range events(id) {
			if e["type"] == "transaction.failed" {
				n++
				failedEvents[e["id"].(string)] = true
			}
		}
		if failedEntries != 1 || n != 1 {
			t.Errorf("expired charge %s: %d FAILED history entries and %d transaction.failed events, want 1 and 1", id, failedEntries, n)
		}
	}

	// Every event delivered (the ones the killed instance held once its lease ended), and
	// never two attempts of one event at once.
	eventually(t, webhookLease+45*time.Second, "every event delivered", func() (bool, string) {
		_, _, delivered, _ := rc.snapshot()
		var missing []string
		for _, id := range webhooked {
			for _, e := range events(id) {
				if len(delivered[e["id"].(string)]) == 0 || e["status"] != "delivered" {
					missing = append(missing, fmt.Sprintf("%s %s", e["type"], e["status"]))
				}
			}
		}
		return len(missing) == 0, fmt.Sprintf("%d not delivered: %v", len(missing), missing)
	})
	attempts, overlaps := rc.load()
	_, _, delivered, badSigs := rc.snapshot()
	if len(overlaps) > 0 {
		t.Errorf("events with two attempts in flight at once: %v", overlaps)
	}
	if len(badSigs) > 0 {
		t.Errorf("deliveries with a bad signature: %v", badSigs)
	}
	total, duplicates := 0, 0
	for id, n := range attempts {
		total += n
		duplicates += max(0, len(delivered[id])-1)
	}
	for id := range failedEvents {
		if len(delivered[id]) == 0 {
			t.Errorf("transaction.failed event %s never delivered", id)
		}
	}
	t.Logf("%d events, %d attempts received, %d delivered twice (sent again after the kill)", len(attempts), total, duplicates)

	verifyLedger(t, c.nodes[0])
}

// moneyRace funds the account with three paid charges, then races withdrawals and refunds
// on it across the live instances, at random, while GET /balance is watched: available never
// goes below zero, and what was accepted adds up to the final balance.
func moneyRace(t *testing.T, ctx context.Context, c *cluster) {
	const charge = 30_000
	var paid []string
	for i := range 3 {
		body := chargeBody(charge+txFee, fmt.Sprintf("fund-%s-%d", runTag, i))
		r, err := c.call(ctx, c.roundRobin, "POST", "/transaction", body)
		if err != nil || r.status != http.StatusCreated {
			t.Fatalf("POST /transaction: %v %s", err, r)
		}
		id := r.object(t)["id"].(string)
		if r, err := c.call(ctx, c.roundRobin, "POST", "/sandbox/transaction/"+id+"/pay", nil); err != nil || r.status != http.StatusOK {
			t.Fatalf("pay %s: %v %s", id, err, r)
		}
		paid = append(paid, id)
	}
	balance := func() [3]int64 {
		r, err := c.call(ctx, c.random, "GET", "/balance", nil)
		if err != nil || r.status != http.StatusOK {
			t.Fatalf("GET /balance: %v %s", err, r)
		}
		m := r.object(t)
		return [3]int64{cents(m["available"]), cents(m["blocked"]), cents(m["pending"])}
	}
	start := balance()[0]
	if start < 3*charge {
		t.Fatalf("available %d after funding, want at least %d", start, 3*charge)
	}

	stop := make(chan struct{})
	var lowest atomic.Int64
	lowest.Store(start)
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		for i := 0; i < 2_000; i++ {
			select {
			case <-stop:
				return
			default:
			}
			r, err := c.call(ctx, c.random, "GET", "/balance", nil)
			if err != nil || r.status != http.StatusOK {
				continue
			}
			if m, err := r.decode(); err == nil && cents(m["available"]) < lowest.Load() {
				lowest.Store(cents(m["available"]))
			}
		}
	}()

	// Five withdrawals of 20000 and nine refunds of 10000 (three per charge) at once: the
	// balance covers fewer than the five withdrawals alone, so some request is always refused.
	const wdAmount, refundAmount = 20_000, 10_000
	var wdOK, refundOK, refused, busyRefund atomic.Int64
	var wg sync.WaitGroup
	for i := range 5 {
		wg.Go(func() {
			key := fmt.Sprintf("wd-%s-%d", runTag, i)
			r, err := c.call(ctx, c.random, "POST", "/withdrawal", withdrawalBody(wdAmount), "Idempotency-Key", key)
			switch {
			case err != nil:
				t.Errorf("POST /withdrawal: %v", err)
			case r.status == http.StatusCreated:
				wdOK.Add(1)
			case r.status == http.StatusUnprocessableEntity && r.problem() == "insufficient_balance":
				refused.Add(1)
			default:
				t.Errorf("POST /withdrawal: %s", r)
			}
		})
	}
	for i := range 9 {
		wg.Go(func() {
			id := paid[i%3]
			r, err := c.call(ctx, c.random, "POST", "/transaction/"+id+"/refund", map[string]any{"amount": refundAmount},
				"Idempotency-Key", fmt.Sprintf("rf-%s-%d", runTag, i))
			switch {
			case err != nil:
				t.Errorf("POST refund: %v", err)
			case r.status == http.StatusAccepted:
				refundOK.Add(1)
			case r.status == http.StatusUnprocessableEntity && r.problem() == "insufficient_balance":
				refused.Add(1)
			case r.status == http.StatusConflict && r.problem() == "invalid_transition":
				busyRefund.Add(1) // another refund of the charge is in progress: one at a time
			default:
				t.Errorf("POST /transaction/%s/refund: %s", id, r)
			}
		})
	}
	wg.Wait()
	close(stop)
	<-watched
	t.Logf("money race: %d withdrawals and %d refunds accepted, %d refused for the balance, %d refunds refused while another was in progress; lowest available seen %d",
		wdOK.Load(), refundOK.Load(), refused.Load(), busyRefund.Load(), lowest.Load())
	if lowest.Load() < 0 {
		t.Errorf("available went down to %d during the race: overdrawn", lowest.Load())
	}
	spent := wdOK.Load()*(wdAmount+wdFee) + refundOK.Load()*refundAmount
	if spent > start {
		t.Fatalf("%d accepted on an available balance of %d: overdrawn", spent, start)
	}
	if wdOK.Load()+refundOK.Load() == 0 || refused.Load() == 0 {
		t.Errorf("the race accepted %d withdrawals and %d refunds and refused %d requests: it raced nothing",
			wdOK.Load(), refundOK.Load(), refused.Load())
	}
	// Once the sandbox settled them, the balance is what was accepted left it.
	eventually(t, time.Minute, "the balance once withdrawals and refunds settle", func() (bool, string) {
		b := balance()
		return b[0] == start-spent && b[1] == 0, fmt.Sprintf("balance %v, want available %d, nothing blocked", b, start-spent)
	})
}

// verifyLedger runs `pixgate ledger verify` in p's container, on the shared database.
func verifyLedger(t *testing.T, p *pixgate) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	exit, out, err := p.ctr.Exec(ctx, []string{"/pixgate", "ledger", "verify"}, tcexec.Multiplexed())
	if err != nil {
		t.Fatalf("exec pixgate ledger verify: %v", err)
	}
	raw, _ := io.ReadAll(out)
	if exit != 0 || !strings.Contains(string(raw), "resources checked: OK") {
		t.Fatalf("ledger verify exited %d:\n%s", exit, raw)
	}
	t.Log(strings.TrimSpace(string(raw)))
}

// TestThreeInstancesShareTheRateLimits floods POST /transaction and the token endpoint
// through three instances on one FerretDB, spreading the requests round-robin and at random:
// together they allow the configured rate (within 20%), not three times it. Then one
// instance is killed: once its heartbeat has lapsed, the two others allow the whole rate.
func TestThreeInstancesShareTheRateLimits(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	const rps, tokenRPS = 5, 5
	c := startCluster(t, s, map[string]string{
		"PIXGATE_RATE_LIMIT_RPS":         fmt.Sprint(rps),
		"PIXGATE_RATE_LIMIT_BURST":       fmt.Sprint(rps),
		"PIXGATE_TOKEN_RATE_LIMIT_RPS":   fmt.Sprint(tokenRPS),
		"PIXGATE_TOKEN_RATE_LIMIT_BURST": fmt.Sprint(tokenRPS),
	}, nil)
	// Every instance has seen the three heartbeats (one interval, 2 s, and a margin).
	time.Sleep(5 * time.Second)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	// flood sends offered requests a second (open loop: each in its own goroutine, at most 64
	// in flight), each to an instance pick chooses, for warmup and then window, and answers
	// how many the limit let through during the window, a second: those answered ok, and
	// those answered 503 (the limit let them through and the database, busy with the other
	// suites, was slow). Four times the limit: every instance is offered more than its share
	// however the requests fall, while the database stays far from saturated.
	flood := func(what string, pick func() *pixgate, send func(*pixgate) (reply, error), ok int) float64 {
		const warmup, window, offered = 3 * time.Second, 15 * time.Second, 20
		start := time.Now()
		var counted, busy atomic.Int64
		var wg sync.WaitGroup
		var mu sync.Mutex
		shares := map[string]int{} // RateLimit-Limit (an instance's share of the burst) -> answers
		inFlight := make(chan struct{}, 64)
		tick := time.NewTicker(time.Second / offered)
		defer tick.Stop()
		for n := 0; n < int((warmup+window).Seconds())*offered; n++ {
			<-tick.C
			inFlight <- struct{}{}
			wg.Go(func() {
				defer func() { <-inFlight }()
				sent := time.Since(start)
				r, err := send(pick())
				if err == nil && r.header.Get("RateLimit-Limit") != "" {
					mu.Lock()
					shares[r.header.Get("RateLimit-Limit")]++
					mu.Unlock()
				}
				switch {
				case err != nil:
					t.Errorf("%s: %v", what, err)
				case r.status == ok || r.status == http.StatusServiceUnavailable:
					if r.status != ok {
						busy.Add(1)
					}
					if sent >= warmup {
						counted.Add(1)
					}
				case r.status != http.StatusTooManyRequests:
					t.Errorf("%s: %s", what, r)
				}
			})
		}
		wg.Wait()
		got := float64(counted.Load()) / window.Seconds()
		t.Logf("%s: %.1f let through a second (%d of them answered 503); answers by RateLimit-Limit: %v", what, got, busy.Load(), shares)
		return got
	}
	within := func(what string, got, want float64) {
		if got < want*0.8 || got > want*1.2 {
			t.Errorf("%s: %.1f accepted a second, want %v within 20%%", what, got, want)
		}
	}
	create := func(p *pixgate) (reply, error) {
		return p.call(ctx, "POST", "/transaction", chargeBody(1_000, "rate-"+runTag))
	}
	token := func(p *pixgate) (reply, error) {
		form := url.Values{"grant_type": {"client_credentials"}, "client_id": {clientID}, "client_secret": {clientSecret}}
		req, err := http.NewRequestWithContext(ctx, "POST", p.url("/auth/token"), strings.NewReader(form.Encode()))
		if err != nil {
			return reply{}, err
		}
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		res, err := p.hc.Do(req)
		if err != nil {
			return reply{}, err
		}
		defer res.Body.Close()
		raw, _ := io.ReadAll(res.Body)
		return reply{status: res.StatusCode, header: res.Header, body: raw}, nil
	}
	within("POST /transaction, round-robin", flood("POST /transaction, round-robin", c.roundRobin, create, http.StatusCreated), rps)
	within("POST /transaction, random", flood("POST /transaction, random", c.random, create, http.StatusCreated), rps)
	within("POST /auth/token, round-robin", flood("POST /auth/token, round-robin", c.roundRobin, token, http.StatusOK), tokenRPS)

	// A killed instance counts until its heartbeat lapses (10 s), and the others learn it at
	// their next heartbeat (2 s).
	c.kill(2)
	time.Sleep(14 * time.Second)
	within("POST /transaction, two instances left", flood("POST /transaction, two instances left", c.random, create, http.StatusCreated), rps)
}
