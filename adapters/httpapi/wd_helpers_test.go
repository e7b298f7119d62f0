package httpapi_test

// Helpers of the operational, webhook, withdrawal and payment page tests (ops_test.go,
// webhook_test.go, withdrawal_test.go, payment_page_test.go); prefixed wd so that they stay
// apart from other files' helpers.

import (
	"encoding/json"
	"fmt"
	"testing"
)

// wdProblem checks that r is an RFC 9457 problem of status and code, and returns its field
// errors as "field code".
func wdProblem(t *testing.T, r response, status int, code string) []string {
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

// wdJSON is v marshalled.
func wdJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	must(t, err)
	return string(b)
}
