package main

// The withdrawal tests through the API are in adapters/httpapi (withdrawal_test.go); these
// helpers stay for the tests here that use them (refund_http_test.go, statement_http_test.go,
// ledger_cmd_test.go and others).

import (
	"context"
	"net/http"
	"slices"
	"testing"
)

// The money of these tests: each paid transaction costs a fixed fee of 100 cents, each
// withdrawal 150, and the sandbox settles withdrawals as soon as its job runs.
var wdVars = map[string]string{
	"PIXGATE_FEE_FIXED_CENTS": "100", "PIXGATE_FEE_BASIS_POINTS": "0",
	"PIXGATE_WITHDRAWAL_FEE_CENTS": "150", "PIXGATE_SANDBOX_SETTLE_SECONDS": "0",
}

func wdEnv(t *testing.T, extra map[string]string) *env {
	t.Helper()
	vars := map[string]string{}
	for k, v := range wdVars {
		vars[k] = v
	}
	for k, v := range extra {
		vars[k] = v
	}
	return newEnv(t, vars)
}

// settle runs the payout outbox, which completes the sandbox's withdrawals, as the server does
// in the background, and tells how many steps it took.
func (e *env) settle() int {
	e.t.Helper()
	for _, j := range e.app.jobs {
		if j.name == payoutJobName {
			n, err := j.run(context.Background())
			if err != nil {
				e.t.Fatalf("settling withdrawals: %v", err)
			}
			return n
		}
	}
	e.t.Fatalf("no job %q", payoutJobName)
	return 0
}

// wdBalance is GET /balance as [available, blocked, pending].
func (e *env) wdBalance(token string) [3]int64 {
	e.t.Helper()
	r := e.do("GET", "/balance", token, nil)
	if r.status != http.StatusOK {
		e.t.Fatalf("GET /balance: %d %s", r.status, r.body)
	}
	m := r.json(e.t)
	if len(m) != 3 {
		e.t.Fatalf("balance %v, want exactly available, blocked and pending", m)
	}
	return [3]int64{int64(m["available"].(float64)), int64(m["blocked"].(float64)), int64(m["pending"].(float64))}
}

func (e *env) wantBalance(step, token string, available, blocked, pending int64) {
	e.t.Helper()
	if got, want := e.wdBalance(token), [3]int64{available, blocked, pending}; got != want {
		e.t.Fatalf("%s: balance [available blocked pending] = %v, want %v", step, got, want)
	}
}

// charge creates a transaction of amount and returns its id.
func (e *env) charge(token string, amount int64) string {
	e.t.Helper()
	body := minimalTransaction()
	body["amount"] = amount
	r := e.do("POST", "/transaction", token, body)
	if r.status != http.StatusCreated {
		e.t.Fatalf("POST /transaction: %d %s", r.status, r.body)
	}
	return r.json(e.t)["id"].(string)
}

// sandbox sends POST /sandbox/transaction/{id}/<step> and wants 200.
func (e *env) sandbox(token, id, step string) {
	e.t.Helper()
	if r := e.do("POST", "/sandbox/transaction/"+id+"/"+step, token, nil); r.status != http.StatusOK {
		e.t.Fatalf("sandbox %s: %d %s", step, r.status, r.body)
	}
}

// withdraw sends POST /withdrawal of amount to an e-mail key.
func (e *env) withdraw(token string, amount int64, headers ...string) response {
	e.t.Helper()
	return e.do("POST", "/withdrawal", token, wdBody(amount), headers...)
}

func wdBody(amount int64) map[string]any {
	return map[string]any{"amount": amount, "pixKey": map[string]any{"key": "maria@example.com", "type": "EMAIL"}}
}

func (e *env) mustWithdraw(token string, amount int64) map[string]any {
	e.t.Helper()
	r := e.withdraw(token, amount)
	if r.status != http.StatusCreated {
		e.t.Fatalf("POST /withdrawal of %d: %d %s", amount, r.status, r.body)
	}
	return r.json(e.t)
}

func keysOf(m map[string]any) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
