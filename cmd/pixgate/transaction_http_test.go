package main

import (
	"fmt"
	"testing"
)

// The HTTP behaviour of the transaction routes is tested in adapters/httpapi
// (transactions_http_test.go); problemOf stays for the tests here that still need serve's wiring.

// problemOf checks that r is a problem+json answer with status and code, and returns its
// field errors as "field code" strings.
func problemOf(t *testing.T, r response, status int, code string) []string {
	t.Helper()
	if r.status != status {
		t.Fatalf("status = %d, want %d\n%s", r.status, status, r.body)
	}
	if ct := r.header.Get("Content-Type"); ct != "application/problem+json" {
		t.Fatalf("Content-Type = %q, want application/problem+json", ct)
	}
	p := r.json(t)
	if p["code"] != code || p["status"] != float64(status) || p["type"] != "about:blank" || p["requestId"] == "" {
		t.Fatalf("problem = %v, want code %q status %d", p, code, status)
	}
	var out []string
	errs, _ := p["errors"].([]any)
	for _, e := range errs {
		m := e.(map[string]any)
		out = append(out, fmt.Sprint(m["field"], " ", m["code"]))
	}
	return out
}
