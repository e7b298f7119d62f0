package e2e_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/testcontainers/testcontainers-go"
)

// TestKilledWhileCreatingKeepsEveryAcknowledgedTransactionOnce kills pixgate with SIGKILL
// while four clients create transactions with idempotency keys (issue 12). After a restart
// every transaction whose 201 a client saw is stored; retrying every request with its key,
// including those cut off by the kill (twice at once), answers 201 with one transaction per key
// (counted with the list filtered on externalCode), and the acknowledged ones with their
// original body and Idempotent-Replayed: true.
func TestKilledWhileCreatingKeepsEveryAcknowledgedTransactionOnce(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	p := s.startPixgate("pixgate", nil)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	type outcome struct {
		key  string
		body map[string]any
		r    reply
		err  error
	}
	var (
		mu       sync.Mutex
		outcomes []*outcome
		acked    atomic.Int64
		killed   = make(chan struct{})
		wg       sync.WaitGroup
	)
	for w := range 4 {
		wg.Go(func() {
			// Bounded: 60 creations a client at most.
			for i := range 60 {
				select {
				case <-killed:
					return
				default:
				}
				key := fmt.Sprintf("kill-%s-%d-%03d", runTag, w, i)
				o := &outcome{key: key, body: chargeBody(int64(500+i), key)}
				o.r, o.err = p.call(ctx, "POST", "/transaction", o.body, "Idempotency-Key", key)
				mu.Lock()
				outcomes = append(outcomes, o)
				mu.Unlock()
				if o.err != nil {
					return // pixgate is gone
				}
				if o.r.status == http.StatusCreated {
					acked.Add(1)
				}
			}
		})
	}
	eventually(t, time.Minute, "creations before the kill", func() (bool, string) {
		return acked.Load() >= 30, fmt.Sprint(acked.Load(), " acknowledged")
	})
	p.kill()
	close(killed)
	wg.Wait()

	cut := 0
	for _, o := range outcomes {
		switch {
		case o.err != nil:
			cut++
		case o.r.status != http.StatusCreated:
			t.Errorf("creation %s answered %s before the kill", o.key, o.r)
		}
	}
	t.Logf("%d creations sent: %d acknowledged, %d cut off by the kill", len(outcomes), acked.Load(), cut)

	p.start()

	t.Run("every acknowledged transaction is stored", func(t *testing.T) {
		p := p.on(t)
		for _, o := range outcomes {
			if o.err != nil || o.r.status != http.StatusCreated {
				continue
			}
			id := o.r.object(t)["id"].(string)
			if r := p.do("GET", "/transaction/"+id, nil); r.status != http.StatusOK {
				t.Errorf("transaction %s acknowledged before the kill: %s after the restart", id, r)
			}
		}
	})

	t.Run("retrying every request with its key never duplicates", func(t *testing.T) {
		p := p.on(t)
		var stored int
		for _, o := range outcomes {
			if o.err == nil {
				r := p.do("POST", "/transaction", o.body, "Idempotency-Key", o.key)
				if r.status != http.StatusCreated || !bytes.Equal(r.body, o.r.body) || r.header.Get("Idempotent-Replayed") != "true" {
					t.Errorf("retry of acknowledged %s: %s (Idempotent-Replayed %q)\nwant the original body\n%s",
						o.key, r, r.header.Get("Idempotent-Replayed"), o.r.body)
				}
				continue
			}
			// Cut off by the kill: stored or not, two retries at once make one transaction.
			var answers [2]reply
			var errs [2]error
			var both sync.WaitGroup
			for i := range answers {
				both.Go(func() { answers[i], errs[i] = p.call(ctx, "POST", "/transaction", o.body, "Idempotency-Key", o.key) })
			}
			both.Wait()
			for i := range answers {
				if errs[i] != nil || answers[i].status != http.StatusCreated {
					t.Fatalf("retry of %s cut off by the kill: %v %s", o.key, errs[i], answers[i])
				}
			}
			if !bytes.Equal(answers[0].body, answers[1].body) {
				t.Errorf("two retries of %s answered different bodies:\n%s\n%s", o.key, answers[0].body, answers[1].body)
			}
			if answers[0].header.Get("Idempotent-Replayed") == "true" && answers[1].header.Get("Idempotent-Replayed") == "true" {
				stored++ // the cut-off request had been stored before the kill
			}
		}
		t.Logf("%d of the %d requests cut off by the kill had been stored", stored, cut)

		for _, o := range outcomes {
			m := p.want(http.StatusOK, "GET", "/transaction?externalCode="+o.key, nil).object(t)
			if cents(m["total"]) != 1 {
				t.Errorf("externalCode %s: %v transactions, want exactly 1", o.key, m["total"])
			}
		}
		total := p.want(http.StatusOK, "GET", "/transaction?perPage=1", nil).object(t)["total"]
		if int(cents(total)) != len(outcomes) {
			t.Errorf("%v transactions stored, want %d: one per key", total, len(outcomes))
		}
	})
}

// webhookLease is how long a dispatcher holds the deliveries it claimed
// (PIXGATE_WEBHOOK_LEASE, at its minimum here): a crashed instance's deliveries wait this long.
const webhookLease = 15 * time.Second

// TestKilledWhileDeliveringWebhooksDeliversEveryEventAfterTheLease kills pixgate with SIGKILL
// while three webhook deliveries are in flight (the receiver holds them) and more wait in the
// outbox, then starts it again: the waiting events and those raised after the restart are
// delivered at once, the ones in flight at the kill once their lease has expired, and every event is delivered at least once (counted by
// webhook-id, duplicates allowed), signed with the account's secret, and shown delivered by
// GET /transaction/{id}/events.
//
// The receiver being down for hours of simulated time is covered with an injected clock by
// application/webhooks_test.go (TestDispatcherRetriesAFailingReceiverOnTheScheduleUntilItRecovers,
// TestDispatcherMarksAnEventFailedAfterTheTenthAttemptAndKeepsIt,
// TestADispatcherThatDiesMidDeliveryLeavesItToAnotherOnceTheLeaseEnds).
func TestKilledWhileDeliveringWebhooksDeliversEveryEventAfterTheLease(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	rc := newReceiver(t)
	const caFile = "/tmp/hooks-ca.pem"
	gateway := s.gateway()
	p := s.startPixgate("pixgate", map[string]string{
		"PIXGATE_WEBHOOK_ALLOW_PRIVATE": "true", // the receiver is on a private address
		"PIXGATE_WEBHOOK_CA_FILE":       caFile,
		"PIXGATE_WEBHOOK_WORKERS":       "6", // one account gets at most half: three in flight
		"PIXGATE_WEBHOOK_LEASE":         webhookLease.String(),
	},
		testcontainers.WithFiles(testcontainers.ContainerFile{Reader: bytes.NewReader(rc.caPEM), ContainerFilePath: caFile, FileMode: 0o644}),
		testcontainers.WithHostConfigModifier(func(hc *container.HostConfig) {
			hc.ExtraHosts = append(hc.ExtraHosts, hooksHost+":"+gateway)
		}),
	)
	rc.useSecret(jsonField(p.want(http.StatusOK, "GET", "/webhook/secret", nil), "secret"))
	hook := rc.url("/hooks/" + runTag)
	create := func(i int) string {
		body := chargeBody(int64(1_000+i), fmt.Sprintf("hooks-%s-%02d", runTag, i))
		body["webhookUrl"] = hook
		return p.want(http.StatusCreated, "POST", "/transaction", body).object(t)["id"].(string)
	}

	// The path works: the first transaction's event arrives.
	ids := []string{create(0)}
	eventually(t, 30*time.Second, fmt.Sprintf("the first event at %s (%s is the network's gateway)", hook, gateway), func() (bool, string) {
		_, _, delivered, _ := rc.snapshot()
		return len(delivered) == 1, string(p.do("GET", "/transaction/"+ids[0]+"/events", nil).body)
	})

	// Three deliveries in flight, held by the receiver; the others wait in the outbox.
	rc.hold()
	for i := 1; i < 10; i++ {
		ids = append(ids, create(i))
	}
	eventually(t, 30*time.Second, "three deliveries held in flight", func() (bool, string) {
		_, inFlight, _, _ := rc.snapshot()
		return inFlight >= 3, fmt.Sprint(inFlight, " in flight")
	})
	p.kill()
	killedAt := time.Now()
	heldBefore, _, deliveredBefore, _ := rc.snapshot()
	rc.unhold()
	restartedAt := time.Now()
	p.start()

	// Events raised after the restart.
	for _, id := range ids[:3] {
		p.sandbox("transaction", id, "pay")
	}
	expected := map[string]string{} // event id -> transaction id
	for _, id := range ids {
		for _, ev := range p.want(http.StatusOK, "GET", "/transaction/"+id+"/events", nil).object(t)["data"].([]any) {
			expected[ev.(map[string]any)["id"].(string)] = id
		}
	}
	if len(expected) != len(ids)+3 {
		t.Fatalf("%d events for %d transactions of which 3 paid, want %d", len(expected), len(ids), len(ids)+3)
	}
	var firstHeld time.Time
	for _, at := range heldBefore {
		if firstHeld.IsZero() || at.Before(firstHeld) {
			firstHeld = at
		}
	}
	t.Logf("killed %v after the first held delivery arrived; %d events, %d held in flight at the kill",
		killedAt.Sub(firstHeld).Round(time.Millisecond), len(expected), len(heldBefore))

	// Bounded by the lease, counted from the claim (before the first held request arrived),
	// and a margin for the dispatcher's poll and a slow database.
	deadline := firstHeld.Add(webhookLease + 20*time.Second)
	missing := func() []string {
		_, _, delivered, _ := rc.snapshot()
		var out []string
		for id := range expected {
			if len(delivered[id]) == 0 {
				out = append(out, id)
			}
		}
		sort.Strings(out)
		return out
	}
	eventually(t, time.Until(deadline), "every event to be delivered", func() (bool, string) {
		m := missing()
		return len(m) == 0, fmt.Sprintf("%d not delivered: %v", len(m), m)
	})

	_, _, delivered, badSigs := rc.snapshot()
	if len(badSigs) > 0 {
		t.Errorf("deliveries with a bad signature: %v", badSigs)
	}
	duplicates := 0
	var heldWait, othersWait time.Duration
	for id := range expected {
		times := delivered[id]
		duplicates += len(times) - 1
		first := times[0]
		if _, wasHeld := heldBefore[id]; wasHeld {
			heldWait = max(heldWait, first.Sub(killedAt))
			if first.Before(firstHeld.Add(webhookLease - 5*time.Second)) {
				t.Errorf("event %s, in flight at the kill, delivered %v after it: before its lease could expire", id, first.Sub(killedAt))
			}
		} else if _, before := deliveredBefore[id]; !before {
			othersWait = max(othersWait, first.Sub(restartedAt))
		}
	}
	t.Logf("waiting and new events delivered within %v of the restart; events in flight at the kill delivered %v after it (lease %v); %d duplicate deliveries",
		othersWait.Round(time.Millisecond), heldWait.Round(time.Millisecond), webhookLease, duplicates)
	if othersWait > 20*time.Second {
		t.Errorf("events not leased at the kill took %v after the restart, want them at once", othersWait)
	}

	// The outbox agrees: every event delivered.
	eventually(t, 15*time.Second, "GET /transaction/{id}/events to show every event delivered", func() (bool, string) {
		var pending []string
		for _, id := range ids {
			for _, ev := range p.want(http.StatusOK, "GET", "/transaction/"+id+"/events", nil).object(t)["data"].([]any) {
				e := ev.(map[string]any)
				if e["status"] != "delivered" {
					pending = append(pending, fmt.Sprintf("%s %s", e["id"], e["status"]))
				}
			}
		}
		slices.Sort(pending)
		return len(pending) == 0, fmt.Sprint(pending)
	})
}
