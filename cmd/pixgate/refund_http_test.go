package main

import (
	"bytes"
	"net/http"
)

// The HTTP behaviour of refunds is tested in adapters/httpapi (refund_http_test.go). What
// stays here are the "rf" helpers the ledger command's tests use on serve's wiring.

// rfPaid charges amount and pays it through the sandbox.
func (e *env) rfPaid(tok string, amount int64) string {
	e.t.Helper()
	id := e.charge(tok, amount)
	e.sandbox(tok, id, "pay")
	return id
}

// rfRefund posts a refund with body (nil: none) and headers.
func (e *env) rfRefund(tok, id string, body any, headers ...string) response {
	e.t.Helper()
	return e.do("POST", "/transaction/"+id+"/refund", tok, body, headers...)
}

// rfAccepted wants a 202 whose body is the transaction as its GET shows it right then.
func (e *env) rfAccepted(tok, id string, body any, headers ...string) map[string]any {
	e.t.Helper()
	r := e.rfRefund(tok, id, body, headers...)
	if r.status != http.StatusAccepted {
		e.t.Fatalf("refund: %d %s", r.status, r.body)
	}
	if g := e.lcGet(tok, id); !bytes.Equal(g.body, r.body) {
		e.t.Fatalf("the 202 answer differs from the GET after it:\n%s\n%s", r.body, g.body)
	}
	return r.json(e.t)
}
