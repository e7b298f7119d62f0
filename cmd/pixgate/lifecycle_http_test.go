package main

import (
	"context"
	"net/http"
	"regexp"
	"testing"
	"time"

	"github.com/pixgate/pixgate/adapters/httpapi/apitest"
	"github.com/pixgate/pixgate/application"
	"github.com/pixgate/pixgate/domain"
)

// The lifecycle over HTTP (the sandbox's walk through the state table, docs/API.md, States and
// transitions) is tested in adapters/httpapi (lifecycle_http_test.go). What stays here: the "lc"
// helpers the other tests of serve's wiring use, and the one check of the wiring itself.

var lcRefundE2E = regexp.MustCompile(`^D99999999\d{12}[A-Za-z0-9]{11}$`)

// lcSettle runs the sandbox's settle job once, as `serve` runs it every 500 ms.
func (e *env) lcSettle() int {
	e.t.Helper()
	for _, j := range e.app.jobs {
		if j.name == sandboxRefundSettleJob {
			n, err := j.run(context.Background())
			if err != nil {
				e.t.Fatalf("settle job: %v", err)
			}
			return n
		}
	}
	e.t.Fatal("the sandbox settle job is not wired")
	return 0
}

// lcExpire runs the expiry sweeper as if it were at.
func (e *env) lcExpire(at time.Time) int {
	e.t.Helper()
	n, err := application.NewExpireTransactions(e.app.stores.transactions, &fakeClock{at: at}).RunOnce(context.Background())
	if err != nil {
		e.t.Fatalf("expiry sweeper: %v", err)
	}
	return n
}

// lcCreate creates a charge of 10.00 with a webhook and returns its id.
func (e *env) lcCreate(tok string) string {
	e.t.Helper()
	body := minimalTransaction()
	body["webhookUrl"] = "https://merchant.example.com/hooks"
	r := e.do("POST", "/transaction", tok, body)
	if r.status != http.StatusCreated {
		e.t.Fatalf("creating: %d %s", r.status, r.body)
	}
	return r.json(e.t)["id"].(string)
}

// lcFund pays a charge of 1000.00 for the account, so that refunds find an available balance
// to hold (a refund of a charge's whole amount needs more than the charge left after its fee).
func (e *env) lcFund(tok string) {
	e.t.Helper()
	body := minimalTransaction()
	body["amount"] = 100_000
	r := e.do("POST", "/transaction", tok, body)
	if r.status != http.StatusCreated {
		e.t.Fatalf("creating: %d %s", r.status, r.body)
	}
	e.lcStep(tok, r.json(e.t)["id"].(string), "pay", http.StatusOK)
}

// lcStep posts a sandbox (or refund) route of a transaction and wants status.
func (e *env) lcStep(tok, id, route string, want int) response {
	e.t.Helper()
	path := "/sandbox/transaction/" + id + "/" + route
	if route == "refund" {
		path = "/transaction/" + id + "/refund"
	}
	r := e.do("POST", path, tok, nil)
	if r.status != want {
		e.t.Fatalf("POST %s: %d, want %d\n%s", path, r.status, want, r.body)
	}
	return r
}

func (e *env) lcGet(tok, id string) response {
	e.t.Helper()
	r := e.do("GET", "/transaction/"+id, tok, nil)
	if r.status != http.StatusOK {
		e.t.Fatalf("GET: %d %s", r.status, r.body)
	}
	return r
}

// lcHistory checks the statusHistory of a transaction body, as apitest.StatusHistory, and
// returns the durations in milliseconds.
func lcHistory(t *testing.T, got map[string]any, want ...string) []int64 {
	t.Helper()
	return apitest.StatusHistory(t, got, want...)
}

// lcDeliveries lists the stored events of a transaction, of type typ ("" for all).
func (e *env) lcDeliveries(id, typ string) []string {
	e.t.Helper()
	tx, err := e.app.stores.transactions.Find(context.Background(), id)
	if err != nil {
		e.t.Fatal(err)
	}
	ds, err := e.app.stores.outbox.Deliveries(context.Background(), tx.AccountID(), domain.ResourceTransaction, id)
	if err != nil {
		e.t.Fatal(err)
	}
	var out []string
	for _, d := range ds {
		if typ == "" || d.Event.Type == typ {
			out = append(out, d.Event.Type)
		}
	}
	return out
}

// The sandbox routes' 404 outside the sandbox is tested in adapters/httpapi
// (lifecycle_http_test.go); which jobs serve starts is its wiring's.
func TestTheSandboxSettleJobIsNotWiredOutsideTheSandbox(t *testing.T) {
	e := newEnv(t, map[string]string{"PIXGATE_SANDBOX": "false"})
	for _, j := range e.app.jobs {
		if j.name == sandboxRefundSettleJob {
			t.Fatal("the settle job runs outside the sandbox")
		}
	}
}
