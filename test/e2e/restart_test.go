package e2e_test

import (
	"bytes"
	"fmt"
	"net/http"
	"slices"
	"testing"
	"time"
)

// TestRestartKeepsEveryTransactionAndReplaysIdempotentCreations stops pixgate (SIGTERM) and
// starts it again on the same database: every transaction and withdrawal is still there,
// unchanged and not duplicated, the balance is the same, and an idempotent POST /transaction
// replayed after the restart with its key answers the original body with
// Idempotent-Replayed: true, creating nothing (issue 8).
func TestRestartKeepsEveryTransactionAndReplaysIdempotentCreations(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	p := s.startPixgate("pixgate", nil)

	const n = 8
	type created struct {
		key  string
		body map[string]any
		raw  []byte // the 201 body
		id   string
	}
	var all []created
	for i := range n {
		key := fmt.Sprintf("restart-%s-%02d", runTag, i)
		body := chargeBody(int64(1_000*(i+1)), key)
		r := p.want(http.StatusCreated, "POST", "/transaction", body, "Idempotency-Key", key)
		all = append(all, created{key: key, body: body, raw: r.body, id: r.object(t)["id"].(string)})
	}
	for _, c := range all[:3] {
		p.sandbox("transaction", c.id, "pay")
	}
	w := p.want(http.StatusCreated, "POST", "/withdrawal", withdrawalBody(1_000)).object(t)
	p.waitStatus("/withdrawal/"+w["id"].(string), "PROCESSED", 30*time.Second)

	// What the API shows before the restart.
	before := map[string][]byte{}
	for _, c := range all {
		before[c.id] = p.want(http.StatusOK, "GET", "/transaction/"+c.id, nil).body
	}
	listBefore := p.want(http.StatusOK, "GET", "/transaction?perPage=100", nil).body
	withdrawalBefore := p.want(http.StatusOK, "GET", "/withdrawal/"+w["id"].(string), nil).body
	balanceBefore := p.balance()

	p.stop()
	p.start()

	t.Run("every transaction is still there, unchanged", func(t *testing.T) {
		p := p.on(t)
		for _, c := range all {
			if got := p.want(http.StatusOK, "GET", "/transaction/"+c.id, nil).body; !bytes.Equal(got, before[c.id]) {
				t.Errorf("transaction %s after the restart:\n%s\nbefore:\n%s", c.id, got, before[c.id])
			}
		}
		if got := p.want(http.StatusOK, "GET", "/withdrawal/"+w["id"].(string), nil).body; !bytes.Equal(got, withdrawalBefore) {
			t.Errorf("withdrawal after the restart:\n%s\nbefore:\n%s", got, withdrawalBefore)
		}
		if got := p.want(http.StatusOK, "GET", "/transaction?perPage=100", nil).body; !bytes.Equal(got, listBefore) {
			t.Errorf("list after the restart:\n%s\nbefore:\n%s", got, listBefore)
		}
		if got := p.balance(); got != balanceBefore {
			t.Errorf("balance after the restart %v, before %v", got, balanceBefore)
		}
	})

	t.Run("a replayed creation answers the original body and creates nothing", func(t *testing.T) {
		p := p.on(t)
		for _, c := range all {
			r := p.do("POST", "/transaction", c.body, "Idempotency-Key", c.key)
			if r.status != http.StatusCreated || !bytes.Equal(r.body, c.raw) {
				t.Errorf("replay of %s: %s\nwant 201 with the original body\n%s", c.key, r, c.raw)
			}
			if got := r.header.Get("Idempotent-Replayed"); got != "true" {
				t.Errorf("replay of %s: Idempotent-Replayed %q, want true", c.key, got)
			}
			if got := r.header.Get("Location"); got != "/transaction/"+c.id {
				t.Errorf("replay of %s: Location %q", c.key, got)
			}
		}
		// The same key with another request is still refused after the restart.
		other := chargeBody(999, all[0].key)
		if r := p.do("POST", "/transaction", other, "Idempotency-Key", all[0].key); r.status != http.StatusUnprocessableEntity || r.problem() != "idempotency_key_reused" {
			t.Errorf("another request with a used key: %s, want 422 idempotency_key_reused", r)
		}
		m := p.want(http.StatusOK, "GET", "/transaction?perPage=100", nil).object(t)
		var ids []string
		for _, item := range m["data"].([]any) {
			ids = append(ids, item.(map[string]any)["id"].(string))
		}
		slices.Sort(ids)
		if len(ids) != n || len(slices.Compact(ids)) != n {
			t.Errorf("%d transactions listed (%d distinct), want %d", len(ids), len(slices.Compact(ids)), n)
		}
		for _, c := range all {
			if r := p.want(http.StatusOK, "GET", "/transaction?externalCode="+c.key, nil).object(t); cents(r["total"]) != 1 {
				t.Errorf("externalCode %s: %v transactions, want 1", c.key, r["total"])
			}
		}
	})
}
