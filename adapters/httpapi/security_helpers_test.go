package httpapi_test

// Helpers of the security and OAuth behaviour tests (security_http_test.go,
// security_flows_http_test.go, oauth_http_test.go, auth_cache_http_test.go): they start with
// "sec".

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/pixgate/pixgate/application"
	"github.com/pixgate/pixgate/domain"
)

// secProblem checks that r is a problem+json answer with status and code, and returns its
// field errors as "field code" strings.
func secProblem(t *testing.T, r response, status int, code string) []string {
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

// secJSON is v marshalled.
func secJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	must(t, err)
	return string(b)
}

// secStrip is a problem body without what differs between any two answers (requestId, and
// instance, the path asked for), as canonical JSON.
func secStrip(t *testing.T, r response) string {
	t.Helper()
	m := r.json(t)
	delete(m, "requestId")
	delete(m, "instance")
	return secJSON(t, m)
}

// secSplit decodes a compact JWS into its header and claims (numbers kept exact).
func secSplit(t *testing.T, token string) (header, claims map[string]any) {
	t.Helper()
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		t.Fatalf("token %q is not a compact JWS", token)
	}
	decode := func(s string) map[string]any {
		raw, err := base64.RawURLEncoding.DecodeString(s)
		must(t, err)
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		var m map[string]any
		must(t, dec.Decode(&m))
		return m
	}
	return decode(parts[0]), decode(parts[1])
}

// secToken issues a token of the account's first credential carrying exactly scopes.
func (a *api) secToken(c application.CreatedAccount, scopes ...domain.Scope) string {
	a.t.Helper()
	tok, err := a.issuer.Issue(context.Background(), domain.Principal{AccountID: c.Account.ID(),
		ClientID: c.Credential.ClientID, Scopes: scopes}, time.Hour)
	must(a.t, err)
	return tok.Token
}

// secTokenFromEndpoint obtains a token from POST /auth/token with a form body.
func (a *api) secTokenFromEndpoint(clientID, secret string) response {
	a.t.Helper()
	form := url.Values{"grant_type": {"client_credentials"}, "client_id": {clientID}, "client_secret": {secret}}
	return a.do("POST", "/auth/token", "", form.Encode(), "Content-Type", "application/x-www-form-urlencoded")
}

// secWant sends a request and wants status.
func (a *api) secWant(t *testing.T, status int, method, path, tok string, body any) response {
	t.Helper()
	r := a.do(method, path, tok, body)
	if r.status != status {
		t.Fatalf("%s %s: %d, want %d\n%s", method, path, r.status, status, r.body)
	}
	return r
}

// secCreate creates a transaction of amount (cents) and returns its id.
func (a *api) secCreate(t *testing.T, tok string, amount int64) string {
	t.Helper()
	body := minimalTransaction()
	body["amount"] = amount
	return a.secWant(t, http.StatusCreated, "POST", "/transaction", tok, body).json(t)["id"].(string)
}

// secPaid creates a transaction of amount and pays it through the sandbox.
func (a *api) secPaid(t *testing.T, tok string, amount int64) string {
	t.Helper()
	id := a.secCreate(t, tok, amount)
	a.secWant(t, http.StatusOK, "POST", "/sandbox/transaction/"+id+"/pay", tok, nil)
	return id
}

// secWithdraw creates a withdrawal of amount to an e-mail key and returns its id.
func (a *api) secWithdraw(t *testing.T, tok string, amount int64) string {
	t.Helper()
	r := a.secWant(t, http.StatusCreated, "POST", "/withdrawal", tok, map[string]any{
		"amount": amount, "pixKey": map[string]any{"key": "maria@example.com", "type": "EMAIL"}})
	return r.json(t)["id"].(string)
}

// secBalance is the body of GET /balance.
func (a *api) secBalance(t *testing.T, tok string) string {
	t.Helper()
	return string(a.secWant(t, http.StatusOK, "GET", "/balance", tok, nil).body)
}

// secUnknownID is an id no object has.
const secUnknownID = "4f1c2d3e-5a6b-4c7d-8e9f-0a1b2c3d4e5f"
