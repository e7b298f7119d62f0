package httpapi_test

// Idempotent creation over HTTP: replays, the key in the body or the header, keys reused
// with another request, racing requests with one key; and the creation rate limit.

import (
	"bytes"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/pixgate/pixgate/ports"
)

func TestIdempotentCreation(t *testing.T) {
	t.Parallel()
	a := newAPI(t)
	accountID, tok := a.account()
	_, otherTok := a.account()
	withKey := func(key string) map[string]any {
		m := fullTransaction()
		m["idempotencyKey"] = key
		return m
	}

	t.Run("requests", func(t *testing.T) {
		t.Run("201 replaying the original body unchanged for the same key and request", func(t *testing.T) {
			t.Parallel()
			first := a.do("POST", "/transaction", tok, withKey("replay-0001"))
			second := a.do("POST", "/transaction", tok, withKey("replay-0001"))
			if first.status != 201 || second.status != 201 {
				t.Fatalf("statuses %d, %d", first.status, second.status)
			}
			if !bytes.Equal(first.body, second.body) {
				t.Fatalf("bodies differ:\n%s\n%s", first.body, second.body)
			}
			if second.header.Get("Idempotent-Replayed") != "true" || first.header.Get("Idempotent-Replayed") != "" {
				t.Fatalf("Idempotent-Replayed = %q then %q", first.header.Get("Idempotent-Replayed"), second.header.Get("Idempotent-Replayed"))
			}
			if first.header.Get("Location") != second.header.Get("Location") {
				t.Fatal("Location differs")
			}
		})
		t.Run("201 replayed when only key order and white space differ", func(t *testing.T) {
			t.Parallel()
			x := `{"idempotencyKey":"order-ws-01","amount":500,"paymentMethod":"PIX","pix":{},"metadata":{"a":1,"b":2}}`
			y := "{\n  \"metadata\": {\"b\": 2, \"a\": 1},\n  \"pix\": {},\n  \"paymentMethod\": \"PIX\",\n  \"amount\": 500,\n  \"idempotencyKey\": \"order-ws-01\"\n}"
			first, second := a.do("POST", "/transaction", tok, x), a.do("POST", "/transaction", tok, y)
			if first.status != 201 || second.status != 201 || !bytes.Equal(first.body, second.body) {
				t.Fatalf("%d %s\n%d %s", first.status, first.body, second.status, second.body)
			}
		})
		t.Run("201 replayed for the key in the Idempotency-Key header", func(t *testing.T) {
			t.Parallel()
			first := a.do("POST", "/transaction", tok, minimalTransaction(), "Idempotency-Key", "header-key-01")
			second := a.do("POST", "/transaction", tok, minimalTransaction(), "Idempotency-Key", "header-key-01")
			if !bytes.Equal(first.body, second.body) || second.header.Get("Idempotent-Replayed") != "true" {
				t.Fatalf("no replay:\n%s\n%s", first.body, second.body)
			}
		})
		t.Run("201 replayed for the same key in body and header, one key", func(t *testing.T) {
			t.Parallel()
			m := minimalTransaction()
			m["idempotencyKey"] = "both-places-1"
			first := a.do("POST", "/transaction", tok, m, "Idempotency-Key", "both-places-1")
			second := a.do("POST", "/transaction", tok, minimalTransaction(), "Idempotency-Key", "both-places-1")
			if first.status != 201 || !bytes.Equal(first.body, second.body) {
				t.Fatalf("%d %s\n%s", first.status, first.body, second.body)
			}
		})
		t.Run("422 for different keys in body and header", func(t *testing.T) {
			t.Parallel()
			m := minimalTransaction()
			m["idempotencyKey"] = "body-key-0001"
			fields := problem(t, a.do("POST", "/transaction", tok, m, "Idempotency-Key", "header-key-9"), 422, "validation_failed")
			if !slices.Equal(fields, []string{"idempotencyKey invalid_format"}) {
				t.Fatal(fields)
			}
		})
		t.Run("422 for a header key of 7 characters", func(t *testing.T) {
			t.Parallel()
			fields := problem(t, a.do("POST", "/transaction", tok, minimalTransaction(), "Idempotency-Key", "1234567"), 422, "validation_failed")
			if !slices.Equal(fields, []string{"Idempotency-Key too_short"}) {
				t.Fatal(fields)
			}
		})
		t.Run("422 idempotency_key_reused for the same key with another request", func(t *testing.T) {
			t.Parallel()
			a.do("POST", "/transaction", tok, withKey("reused-key-01"))
			other := withKey("reused-key-01")
			other["amount"] = 99
			problem(t, a.do("POST", "/transaction", tok, other), 422, "idempotency_key_reused")
		})
		t.Run("201 not replayed for another account's key: keys belong to one account", func(t *testing.T) {
			t.Parallel()
			mine := a.do("POST", "/transaction", tok, withKey("shared-key-01"))
			theirs := a.do("POST", "/transaction", otherTok, withKey("shared-key-01"))
			if mine.status != 201 || theirs.status != 201 || theirs.header.Get("Idempotent-Replayed") != "" {
				t.Fatalf("%d %d %q", mine.status, theirs.status, theirs.header.Get("Idempotent-Replayed"))
			}
			if mine.json(t)["id"] == theirs.json(t)["id"] {
				t.Fatal("two accounts share a transaction")
			}
		})
		t.Run("201 not replayed after a request that failed validation: it did not reserve its key", func(t *testing.T) {
			t.Parallel()
			bad := withKey("invalid-first-1")
			bad["amount"] = 0
			problem(t, a.do("POST", "/transaction", tok, bad), 422, "validation_failed")
			good := withKey("invalid-first-1")
			good["amount"] = 777
			r := a.do("POST", "/transaction", tok, good)
			if r.status != 201 || r.header.Get("Idempotent-Replayed") != "" {
				t.Fatalf("%d %s", r.status, r.body)
			}
		})
	})
	t.Run("a replay creates no second transaction", func(t *testing.T) {
		t.Parallel()
		page, err := a.store.Transactions().List(t.Context(), ports.TransactionFilter{AccountID: accountID, ExternalCode: "order-000123"}, ports.Page{Number: 1, Size: 100})
		if err != nil {
			t.Fatal(err)
		}
		keys := map[string]int{}
		for _, tx := range page.Items {
			keys[tx.Idempotency().Key]++
		}
		for k, n := range keys {
			if n > 1 {
				t.Fatalf("key %q has %d transactions", k, n)
			}
		}
	})
}

func TestConcurrentRequestsWithOneKeyCreateOneTransaction(t *testing.T) {
	t.Parallel()
	a := newAPI(t)
	accountID, tok := a.account()
	body := fullTransaction()
	body["idempotencyKey"] = "race-key-0001"
	body["externalCode"] = "race-order-01"
	const n = 50
	bodies := make([][]byte, n)
	statuses := make([]int, n)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Go(func() {
			r := a.do("POST", "/transaction", tok, body)
			bodies[i], statuses[i] = r.body, r.status
		})
	}
	wg.Wait()
	for i := range n {
		if statuses[i] != http.StatusCreated || !bytes.Equal(bodies[i], bodies[0]) {
			t.Fatalf("answer %d: %d %s\nwant the same body as\n%s", i, statuses[i], bodies[i], bodies[0])
		}
	}
	page, err := a.store.Transactions().List(t.Context(), ports.TransactionFilter{AccountID: accountID, ExternalCode: "race-order-01"}, ports.Page{Number: 1, Size: 100})
	if err != nil {
		t.Fatal(err)
	}
	if page.Total != 1 {
		t.Fatalf("%d transactions stored, want exactly 1", page.Total)
	}
	// One transaction raised one event (PIX_QRCODE_GENERATED, it has a webhook URL).
	due, err := a.store.Outbox().Claim(t.Context(), "test", a.clock.Now().Add(1e9), 1e9, 1000, nil)
	if err != nil {
		t.Fatal(err)
	}
	count := 0
	for _, d := range due {
		if d.Event.ResourceID == page.Items[0].ID() {
			count++
			if !strings.HasSuffix(d.Event.Type, "pix_qrcode_generated") {
				t.Fatalf("event type %q", d.Event.Type)
			}
		}
	}
	if count != 1 {
		t.Fatalf("%d events for the transaction, want 1", count)
	}
}

func TestCreateTransaction429AfterTheBurst(t *testing.T) {
	t.Parallel()
	// A stopped clock: the bucket refills only when the test says.
	a := newAPI(t, apiSettings{RateRPS: 1, RateBurst: 3, Clock: stoppedClock()})
	_, tok := a.account()
	_, otherTok := a.account()
	for i := 0; i < 3; i++ {
		r := a.do("POST", "/transaction", tok, minimalTransaction())
		if r.status != 201 || r.header.Get("RateLimit-Limit") != "3" || r.header.Get("RateLimit-Remaining") == "" || r.header.Get("RateLimit-Reset") == "" {
			t.Fatalf("request %d: %d headers %v", i+1, r.status, r.header)
		}
	}
	r := a.do("POST", "/transaction", tok, minimalTransaction())
	problem(t, r, http.StatusTooManyRequests, "rate_limited")
	if r.header.Get("Retry-After") != "1" || r.header.Get("RateLimit-Remaining") != "0" {
		t.Fatalf("Retry-After %q, remaining %q", r.header.Get("Retry-After"), r.header.Get("RateLimit-Remaining"))
	}
	t.Run("422 with the headers too for an invalid request", func(t *testing.T) {
		t.Parallel()
		r := a.do("POST", "/transaction", otherTok, `{"amount": 0}`)
		if r.status != 422 || r.header.Get("RateLimit-Limit") != "3" {
			t.Fatalf("%d %v", r.status, r.header)
		}
	})
	t.Run("201 for another account, not limited by the flood", func(t *testing.T) {
		t.Parallel()
		if r := a.do("POST", "/transaction", otherTok, minimalTransaction()); r.status != 201 {
			t.Fatalf("%d %s", r.status, r.body)
		}
	})
}
