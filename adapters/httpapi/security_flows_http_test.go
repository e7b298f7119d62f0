package httpapi_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/pixgate/pixgate/adapters/webhook"
	"github.com/pixgate/pixgate/domain"
)

// The OWASP API Security Top 10 (2023), items 5 to 10, and webhook forgery and replay, at the
// HTTP boundary (items 1 to 4 are in security_http_test.go, where secAPI is). Helpers start
// with "sec".

// ---------------------------------------------------------------------------------------------
// API5:2023 Broken Function Level Authorization

// secScopedRoutes is every route that needs a bearer token, with the scope it needs ("" for
// any valid token of the account).
var secScopedRoutes = []struct {
	method, template string
	scope            domain.Scope
}{
	{"POST", "/transaction", domain.ScopeTransactionWrite},
	{"GET", "/transaction", domain.ScopeTransactionRead},
	{"GET", "/transaction/{id}", domain.ScopeTransactionRead},
	{"POST", "/transaction/{id}/refund", domain.ScopeTransactionWrite},
	{"GET", "/transaction/{id}/events", domain.ScopeTransactionRead},
	{"POST", "/withdrawal", domain.ScopeWithdrawalWrite},
	{"GET", "/withdrawal/{id}", domain.ScopeWithdrawalRead},
	{"POST", "/withdrawal/{id}/cancel", domain.ScopeWithdrawalWrite},
	{"GET", "/withdrawal/{id}/events", domain.ScopeWithdrawalRead},
	{"GET", "/balance", domain.ScopeBalanceRead},
	{"GET", "/balance/entries", domain.ScopeBalanceRead},
	{"POST", "/sandbox/transaction/{id}/pay", domain.ScopeTransactionWrite},
	{"POST", "/sandbox/transaction/{id}/med/open", domain.ScopeTransactionWrite},
	{"POST", "/sandbox/transaction/{id}/med/accept", domain.ScopeTransactionWrite},
	{"POST", "/sandbox/transaction/{id}/med/reject", domain.ScopeTransactionWrite},
	{"POST", "/sandbox/transaction/{id}/refund/fail", domain.ScopeTransactionWrite},
	{"POST", "/sandbox/withdrawal/{id}/fail", domain.ScopeWithdrawalWrite},
	{"POST", "/sandbox/withdrawal/{id}/reject", domain.ScopeWithdrawalWrite},
	{"POST", "/sandbox/withdrawal/{id}/refund", domain.ScopeWithdrawalWrite},
	{"POST", "/auth/credentials", domain.ScopeAccountAdmin},
	{"GET", "/auth/credentials", domain.ScopeAccountAdmin},
	{"DELETE", "/auth/credentials/{clientId}", domain.ScopeAccountAdmin},
	{"GET", "/webhook/secret", domain.ScopeAccountAdmin},
	{"POST", "/webhook/secret/rotate", domain.ScopeAccountAdmin},
}

// secPublicRoutes need no token: the token endpoints and their metadata, the acquirer's (its own
// shared secret), the operational routes and the payment page's.
var secPublicRoutes = []string{
	"POST /auth/token", "GET /auth/token", "POST /oauth/token", "GET /.well-known/oauth-authorization-server",
	"POST /acquirer/pix", "GET /.well-known/jwks.json",
	"GET /healthz", "GET /readyz", "GET /metrics", "GET /openapi.json",
	// The hosted payment page: its address is the capability.
	"GET /pay/{token}", "GET /pay/{token}/status", "GET /pay/{token}/events",
}

func TestOWASPAPI5EveryRouteDemandsItsScope(t *testing.T) {
	t.Parallel()
	a := secAPI(t, apiSettings{AcquirerSecret: acquirerSecret})
	acc := a.newAccount()

	t.Run("every route of the router is in the scope table or public", func(t *testing.T) {
		t.Parallel()
		for _, r := range a.secRoutes() {
			known := slices.Contains(secPublicRoutes, r)
			for _, s := range secScopedRoutes {
				known = known || s.method+" "+s.template == r
			}
			if !known {
				t.Errorf("route %s is neither in the scope table nor public", r)
			}
		}
	})
	for _, rt := range secScopedRoutes {
		path := strings.NewReplacer("{id}", unknownID, "{clientId}", unknownID).Replace(rt.template)
		t.Run(rt.method+" "+rt.template, func(t *testing.T) {
			t.Parallel()
			r := a.do(rt.method, path, "", nil)
			problem(t, r, http.StatusUnauthorized, "unauthorized")
			if r.header.Get("WWW-Authenticate") != "Bearer" {
				t.Errorf("WWW-Authenticate = %q", r.header.Get("WWW-Authenticate"))
			}
			if rt.scope == "" {
				r := a.do(rt.method, path, a.tokenWithScopes(acc), nil)
				if r.status == http.StatusUnauthorized || r.status == http.StatusForbidden {
					t.Fatalf("a token without scopes: %d %s", r.status, r.body)
				}
				return
			}
			var others []domain.Scope
			for _, s := range domain.AllScopes() {
				if s != rt.scope {
					others = append(others, s)
				}
			}
			r = a.do(rt.method, path, a.tokenWithScopes(acc, others...), nil)
			problem(t, r, http.StatusForbidden, "insufficient_scope")
			if !strings.Contains(r.header.Get("WWW-Authenticate"), `error="insufficient_scope"`) {
				t.Errorf("WWW-Authenticate = %q", r.header.Get("WWW-Authenticate"))
			}
			if r := a.do(rt.method, path, a.tokenWithScopes(acc, rt.scope), nil); r.status == http.StatusUnauthorized || r.status == http.StatusForbidden {
				t.Fatalf("with exactly %s: %d %s", rt.scope, r.status, r.body)
			}
		})
	}
	t.Run("a token never carries more than its account holds", func(t *testing.T) {
		t.Parallel()
		created := a.newAccount(domain.ScopeTransactionRead)
		// A token claiming every scope (as a compromised issuer or an old token might).
		tok := a.tokenWithScopes(created, domain.AllScopes()...)
		problem(t, a.do("POST", "/transaction", tok, minimalTransaction()), http.StatusForbidden, "insufficient_scope")
		granted := a.clientCredentials(created.Credential.ClientID, created.Credential.Secret).json(t)
		if granted["scope"] != "transaction:read" {
			t.Fatalf("the token endpoint granted %v", granted["scope"])
		}
	})
}

func TestOWASPAPI5SandboxAndAcquirerRoutesExistOnlyWhenConfigured(t *testing.T) {
	t.Parallel()
	t.Run("without the sandbox and the acquirer's secret their routes do not exist", func(t *testing.T) {
		t.Parallel()
		prod := secAPI(t, apiSettings{NoSandbox: true})
		_, tok := prod.account()
		id := prod.charge(t, tok, 1_000)
		notFound := prod.do("GET", "/no/such/route", tok, nil)
		problem(t, notFound, http.StatusNotFound, "not_found")
		t.Run("refused", func(t *testing.T) {
			for _, template := range []string{
				"/sandbox/transaction/{id}/pay", "/sandbox/transaction/{id}/med/open",
				"/sandbox/transaction/{id}/med/accept", "/sandbox/transaction/{id}/med/reject",
				"/sandbox/transaction/{id}/refund/fail", "/sandbox/withdrawal/{id}/fail",
				"/sandbox/withdrawal/{id}/reject", "/sandbox/withdrawal/{id}/refund", "/acquirer/pix",
			} {
				t.Run("POST "+template+" does not exist in production without its setting", func(t *testing.T) {
					t.Parallel()
					path := strings.ReplaceAll(template, "{id}", id)
					r := prod.do("POST", path, tok, nil, "Authorization", "Bearer "+acquirerSecret)
					problem(t, r, http.StatusNotFound, "not_found")
					if x, y := problemBody(t, r), problemBody(t, notFound); x != y {
						t.Fatalf("answers apart from an unknown route:\n%s\n%s", x, y)
					}
				})
			}
		})
		for _, r := range prod.secRoutes() {
			if strings.HasPrefix(r, "POST /sandbox/") || r == "POST /acquirer/pix" {
				t.Errorf("route %s is registered in production", r)
			}
		}
		if got := prod.want(t, http.StatusOK, "GET", "/transaction/"+id, tok, nil).json(t)["status"]; got != "PIX_QRCODE_GENERATED" {
			t.Fatalf("status %v", got)
		}
	})

	t.Run("the acquirer route refuses a merchant's token, and merchant routes the acquirer's secret", func(t *testing.T) {
		t.Parallel()
		a := secAPI(t, apiSettings{NoSandbox: true, AcquirerSecret: acquirerSecret})
		_, tok := a.account()
		id := a.charge(t, tok, 1_000)
		entry := map[string]any{"pix": []any{a.pixPayment(pixTxID(t, id), acquirerE2E)}}
		problem(t, a.do("POST", "/acquirer/pix", tok, entry), http.StatusUnauthorized, "unauthorized")
		problem(t, a.do("GET", "/transaction/"+id, acquirerSecret, nil), http.StatusUnauthorized, "unauthorized")
		if got := a.want(t, http.StatusOK, "GET", "/transaction/"+id, tok, nil).json(t)["status"]; got != "PIX_QRCODE_GENERATED" {
			t.Fatalf("a refused callback moved the transaction to %v", got)
		}
	})
}

// ---------------------------------------------------------------------------------------------
// API6:2023 Unrestricted Access to Sensitive Business Flows

func TestOWASPAPI6ConcurrentWithdrawalsThroughTwoCredentialsNeverOverdraw(t *testing.T) {
	t.Parallel()
	a := secAPI(t, apiSettings{Fee: &domain.FeePolicy{}, WithdrawalFee: 100})
	_, first := a.account()
	c := a.want(t, http.StatusCreated, "POST", "/auth/credentials", first, nil).json(t)
	second := a.clientCredentials(c["client_id"].(string), c["client_secret"].(string)).json(t)["access_token"].(string)
	a.paidCharge(t, first, 10_000)
	const n = 40
	statuses := make([]int, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		tok := first
		if i%2 == 1 {
			tok = second
		}
		wg.Go(func() {
			<-start
			statuses[i] = a.do("POST", "/withdrawal", tok, map[string]any{"amount": 2_400,
				"pixKey": map[string]any{"key": "maria@example.com", "type": "EMAIL"}}).status
		})
	}
	close(start)
	wg.Wait()
	created := 0
	for i, s := range statuses {
		switch s {
		case http.StatusCreated:
			created++
		case http.StatusUnprocessableEntity:
		default:
			t.Fatalf("withdrawal %d: status %d", i, s)
		}
	}
	if created != 4 { // 4 × (2400 + 100) = 10 000
		t.Fatalf("%d withdrawals went through, want exactly 4", created)
	}
	if got := a.want(t, http.StatusOK, "GET", "/balance", first, nil).json(t)["available"]; got != float64(0) {
		t.Fatalf("available = %v, want 0", got)
	}
}

func TestOWASPAPI6ReplaysWithOneIdempotencyKeyCreateOneResource(t *testing.T) {
	t.Parallel()
	a := secAPI(t, apiSettings{Fee: &domain.FeePolicy{}})
	_, tok := a.account()
	_, other := a.account()
	a.paidCharge(t, tok, 100_000)
	const n = 30
	race := func(t *testing.T, path string, body map[string]any) [][]byte {
		bodies := make([][]byte, n)
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := range n {
			wg.Go(func() {
				<-start
				r := a.do("POST", path, tok, body, "Idempotency-Key", "replayed-key-0001")
				if r.status != http.StatusCreated {
					t.Errorf("replay %d: %d %s", i, r.status, r.body)
				}
				bodies[i] = r.body
			})
		}
		close(start)
		wg.Wait()
		for i := range bodies {
			if !bytes.Equal(bodies[i], bodies[0]) {
				t.Fatalf("replay %d answered another body:\n%s\n%s", i, bodies[i], bodies[0])
			}
		}
		return bodies
	}
	// One key for both resources: the two races run one after the other.
	t.Run("POST /transaction", func(t *testing.T) {
		body := minimalTransaction()
		body["externalCode"] = "replayed-order-1"
		race(t, "/transaction", body)
		list := a.want(t, http.StatusOK, "GET", "/transaction?externalCode=replayed-order-1", tok, nil).json(t)
		if list["total"] != float64(1) {
			t.Fatalf("%v transactions for one key", list["total"])
		}
		body["amount"] = 999
		problem(t, a.do("POST", "/transaction", tok, body, "Idempotency-Key", "replayed-key-0001"), http.StatusUnprocessableEntity, "idempotency_key_reused")
		// Keys belong to one account: another account's key is its own.
		body["amount"] = 1000
		if r := a.do("POST", "/transaction", other, body, "Idempotency-Key", "replayed-key-0001"); r.status != http.StatusCreated || r.header.Get("Idempotent-Replayed") != "" {
			t.Fatalf("another account's first use of the key: %d %v", r.status, r.header)
		}
	})
	t.Run("POST /withdrawal", func(t *testing.T) {
		before := a.want(t, http.StatusOK, "GET", "/balance", tok, nil).json(t)["available"].(float64)
		race(t, "/withdrawal", map[string]any{"amount": 1_000, "pixKey": map[string]any{"key": "maria@example.com", "type": "EMAIL"}})
		after := a.want(t, http.StatusOK, "GET", "/balance", tok, nil).json(t)["available"].(float64)
		if before-after != 1_000 {
			t.Fatalf("the balance went from %v to %v: %v withdrawn for one key", before, after, before-after)
		}
		problem(t, a.do("POST", "/withdrawal", tok, map[string]any{"amount": 2_000, "pixKey": map[string]any{"key": "maria@example.com", "type": "EMAIL"}},
			"Idempotency-Key", "replayed-key-0001"), http.StatusUnprocessableEntity, "idempotency_key_reused")
	})
}

func TestOWASPAPI6ConcurrentStepsOfOnePaymentHappenOnce(t *testing.T) {
	t.Parallel()
	a := secAPI(t)
	_, tok := a.account()
	race := func(path string) (ok int) {
		const n = 20
		statuses := make([]int, n)
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := range n {
			wg.Go(func() {
				<-start
				statuses[i] = a.do("POST", path, tok, nil).status
			})
		}
		close(start)
		wg.Wait()
		for i, s := range statuses {
			switch {
			case s >= 200 && s < 300:
				ok++
			case s != http.StatusConflict:
				t.Fatalf("request %d: status %d", i, s)
			}
		}
		return ok
	}
	a.paidCharge(t, tok, 100_000) // a refund needs the available balance to cover it; fees took some of this payment's
	id := a.charge(t, tok, 1_000)
	if n := race("/sandbox/transaction/" + id + "/pay"); n != 1 {
		t.Fatalf("%d payments went through, want 1", n)
	}
	if n := race("/transaction/" + id + "/refund"); n != 1 {
		t.Fatalf("%d refunds went through, want 1", n)
	}
	got := a.want(t, http.StatusOK, "GET", "/transaction/"+id, tok, nil).json(t)
	var statuses []string
	for _, h := range got["statusHistory"].([]any) {
		statuses = append(statuses, h.(map[string]any)["status"].(string))
	}
	if want := []string{"PENDING", "PIX_QRCODE_GENERATED", "PAID", "PROCESSING_REFUND"}; !slices.Equal(statuses, want) {
		t.Fatalf("history %v, want %v", statuses, want)
	}
}

// ---------------------------------------------------------------------------------------------
// API7:2023 Server Side Request Forgery

func TestOWASPAPI7WebhookURLsOfLocalHostsAndIPLiteralsAreRefusedAtValidation(t *testing.T) {
	t.Parallel()
	a := secAPI(t)
	_, tok := a.account()
	a.paidCharge(t, tok, 100_000)
	for _, u := range []string{
		"https://localhost/hook", "https://localhost:8443/hook", "https://127.0.0.1/hook", "https://[::1]/hook",
		"https://10.0.0.1/hook", "https://169.254.169.254/latest/meta-data/", "https://[fd00::1]/hook",
		"https://[::ffff:127.0.0.1]/hook", "https://0x7f000001/hook", "https://2130706433/hook", "https://0177.0.0.1/hook",
		"https://127.1/hook", "https://metadata/computeMetadata/v1/", "https://internal-service/hook",
		"http://merchant.example.com/hook", "file:///etc/passwd", "gopher://merchant.example.com/", "https:///hook",
		"https://user:pass@merchant.example.com/hook", "https://merchant.example.com/hook#x", "//merchant.example.com/hook",
		"https://merchant.example.123/hook", "https://merchant.example.com:0/hook", "https://merchant.example.com:99999/hook",
		" https://merchant.example.com/hook", "https://merchant.example.com\\@127.0.0.1/hook",
	} {
		t.Run(u, func(t *testing.T) {
			t.Parallel()
			body := minimalTransaction()
			body["webhookUrl"] = u
			fields := problem(t, a.do("POST", "/transaction", tok, body), http.StatusUnprocessableEntity, "validation_failed")
			if len(fields) != 1 || !strings.HasPrefix(fields[0], "webhookUrl ") {
				t.Fatalf("errors %v", fields)
			}
			fields = problem(t, a.do("POST", "/withdrawal", tok, map[string]any{"amount": 1, "webhookUrl": u,
				"pixKey": map[string]any{"key": "maria@example.com", "type": "EMAIL"}}), http.StatusUnprocessableEntity, "validation_failed")
			if len(fields) != 1 || !strings.HasPrefix(fields[0], "webhookUrl ") {
				t.Fatalf("withdrawal errors %v", fields)
			}
		})
	}
}

func TestOWASPAPI7AWebhookHostResolvingToAPrivateAddressIsNeverContacted(t *testing.T) {
	t.Parallel()
	rc := newWebhookReceiver(t)
	for _, c := range []struct {
		name  string
		addrs []string
		dial  bool // use a dialer that records every connection instead of the real one
	}{
		{"loopback, where the receiver listens", []string{"127.0.0.1"}, false},
		{"the cloud metadata address", []string{"169.254.169.254"}, true},
		{"private and unique-local addresses", []string{"10.1.2.3", "192.168.0.10", "fd12::1", "100.64.0.1"}, true},
		{"an IPv4-mapped loopback", []string{"::ffff:127.0.0.1"}, true},
		{"NAT64 of a private address", []string{"64:ff9b::a00:1"}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			res := &resolver{}
			for _, a := range c.addrs {
				res.addrs = append(res.addrs, netip.MustParseAddr(a))
			}
			var mu sync.Mutex
			var dialed []string
			// As serve with PIXGATE_WEBHOOK_ALLOW_PRIVATE=false and the receiver's CA in
			// PIXGATE_WEBHOOK_CA_FILE.
			opts := webhook.Options{Resolver: res, Timeout: 2 * time.Second, AllowPrivate: false, CAFile: rc.caFile}
			if c.dial {
				opts.Dial = func(_ context.Context, _, address string) (net.Conn, error) {
					mu.Lock()
					defer mu.Unlock()
					dialed = append(dialed, address)
					return nil, fmt.Errorf("test dialer: no connection to %s", address)
				}
			}
			a := secAPI(t, apiSettings{Webhook: opts})
			_, tok := a.account()
			body := minimalTransaction()
			body["webhookUrl"] = rc.url("/hooks/pix")
			id := a.want(t, http.StatusCreated, "POST", "/transaction", tok, body).json(t)["id"].(string)
			if n := a.deliver(); n != 1 {
				t.Fatalf("DeliverDue = %d; want one attempt made", n)
			}
			if got := rc.deliveries(); len(got) != 0 {
				t.Fatalf("the receiver got %d deliveries", len(got))
			}
			if res.lookups() == 0 {
				t.Fatal("the sender never resolved the host itself")
			}
			mu.Lock()
			defer mu.Unlock()
			if len(dialed) != 0 {
				t.Fatalf("the sender connected to %v", dialed)
			}
			events := a.want(t, http.StatusOK, "GET", "/transaction/"+id+"/events", tok, nil).json(t)["data"].([]any)
			if len(events) != 1 {
				t.Fatalf("%d events", len(events))
			}
			ev := events[0].(map[string]any)
			attempts := ev["attempts"].([]any)
			if len(attempts) != 1 || ev["status"] != "pending" {
				t.Fatalf("event %v, want one failed attempt and a retry pending", ev)
			}
			msg, _ := attempts[0].(map[string]any)["error"].(string)
			if !strings.Contains(msg, "refused") || attempts[0].(map[string]any)["statusCode"] != nil {
				t.Fatalf("attempt %v, want an error saying the address was refused", attempts[0])
			}
			// What the host resolved to, and what kind of address it is, stay ours.
			for _, a := range c.addrs {
				ip := netip.MustParseAddr(a)
				for _, form := range []string{a, ip.Unmap().String(), "private", "loopback", "link-local", "NAT64"} {
					if strings.Contains(msg, form) {
						t.Fatalf("the attempt's error %q reveals %q", msg, form)
					}
				}
			}
		})
	}
}

// ---------------------------------------------------------------------------------------------
// API8:2023 Security Misconfiguration

func TestOWASPAPI8EveryAnswerCarriesTheSecurityHeaders(t *testing.T) {
	t.Parallel()
	a := secAPI(t, apiSettings{AcquirerSecret: acquirerSecret})
	acc := a.newAccount()
	tok := a.tokenWithScopes(acc, domain.AllScopes()...)
	id := a.charge(t, tok, 1_000)
	form := url.Values{"client_id": {acc.Credential.ClientID}, "client_secret": {acc.Credential.Secret}}.Encode()
	formCT := []string{"Content-Type", "application/x-www-form-urlencoded"}
	answers := []struct {
		name    string
		r       response
		noStore bool
	}{
		{"token 200", a.do("POST", "/auth/token", "", form, formCT...), true},
		{"token 401", a.do("POST", "/auth/token", "", "client_id=x&client_secret=y", formCT...), true},
		{"token 400", a.do("GET", "/auth/token?client_secret=x", "", nil), true},
		{"credential 201", a.do("POST", "/auth/credentials", tok, nil), true},
		{"webhook secret 200", a.do("GET", "/webhook/secret", tok, nil), true},
		{"transaction 201", a.do("POST", "/transaction", tok, minimalTransaction()), true},
		{"transaction 200", a.do("GET", "/transaction/"+id, tok, nil), true},
		{"list 200", a.do("GET", "/transaction", tok, nil), true},
		{"balance 200", a.do("GET", "/balance", tok, nil), true},
		{"problem 401", a.do("GET", "/transaction", "", nil), true},
		{"problem 404", a.do("GET", "/nowhere", "", nil), true},
		{"problem 405", a.do("PUT", "/transaction", tok, nil), true},
		{"problem 422", a.do("POST", "/transaction", tok, `{`), true},
		{"acquirer 200", a.do("POST", "/acquirer/pix", "", `{"pix": []}`, "Authorization", "Bearer "+acquirerSecret), true},
		{"healthz 200", a.do("GET", "/healthz", "", nil), false},
		{"jwks 200", a.do("GET", "/.well-known/jwks.json", "", nil), false},
	}
	for _, c := range answers {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			h := c.r.header
			if h.Get("X-Content-Type-Options") != "nosniff" {
				t.Errorf("X-Content-Type-Options = %q", h.Get("X-Content-Type-Options"))
			}
			if h.Get("Server") != "" || h.Get("X-Powered-By") != "" {
				t.Errorf("the answer names its software: %q %q", h.Get("Server"), h.Get("X-Powered-By"))
			}
			if ct := h.Get("Content-Type"); c.r.status != http.StatusNoContent && !strings.HasPrefix(ct, "application/") {
				t.Errorf("Content-Type = %q", ct)
			}
			if c.noStore && !strings.Contains(h.Get("Cache-Control"), "no-store") {
				t.Errorf("an answer with account data or a secret may be cached: Cache-Control %q", h.Get("Cache-Control"))
			}
		})
	}
}

func TestOWASPAPI8UnknownRoutesAndMethodsAnswerProblems(t *testing.T) {
	t.Parallel()
	a := secAPI(t)
	_, tok := a.account()
	for _, c := range []struct {
		method, path string
		status       int
		code         string
	}{
		{"GET", "/nowhere", http.StatusNotFound, "not_found"},
		{"GET", "/transaction/", http.StatusNotFound, "not_found"},
		{"GET", "/v1/transaction", http.StatusNotFound, "not_found"},
		{"TRACE", "/transaction", http.StatusMethodNotAllowed, "method_not_allowed"},
		{"OPTIONS", "/transaction", http.StatusMethodNotAllowed, "method_not_allowed"},
		{"PUT", "/transaction/" + unknownID, http.StatusMethodNotAllowed, "method_not_allowed"},
		{"DELETE", "/transaction/" + unknownID, http.StatusMethodNotAllowed, "method_not_allowed"},
		{"PATCH", "/withdrawal/" + unknownID, http.StatusMethodNotAllowed, "method_not_allowed"},
		// gorilla/mux v1.8.1 answers 404 rather than 405 when a route registered later accepts
		// the method (here POST): either is a problem, and no handler runs.
		{"POST", "/balance", 0, ""},
		{"POST", "/withdrawal/" + unknownID, 0, ""},
	} {
		t.Run(c.method+" "+c.path, func(t *testing.T) {
			t.Parallel()
			r := a.do(c.method, c.path, tok, nil)
			if c.status == 0 {
				if r.status == http.StatusNotFound {
					c.status, c.code = http.StatusNotFound, "not_found"
				} else {
					c.status, c.code = http.StatusMethodNotAllowed, "method_not_allowed"
				}
			}
			problem(t, r, c.status, c.code)
			if bytes.Contains(r.body, []byte(tok)) {
				t.Fatal("the answer echoes the token")
			}
		})
	}
}

func TestOWASPAPI8ErrorAnswersShowNoInternals(t *testing.T) {
	t.Parallel()
	a := secAPI(t, apiSettings{AcquirerSecret: acquirerSecret})
	_, tok := a.account()
	for _, c := range []struct{ name, method, path, auth, body string }{
		{"broken JSON", "POST", "/transaction", "Bearer " + tok, `{"amount": 10,`},
		{"a JSON array", "POST", "/transaction", "Bearer " + tok, `[1, 2]`},
		{"a number too large for any type", "POST", "/transaction", "Bearer " + tok, `{"amount": 1` + strings.Repeat("0", 400) + `}`},
		{"invalid UTF-8", "POST", "/transaction", "Bearer " + tok, "{\"externalCode\": \"\xff\xfe\xfd\xfc\xfb\xfa\xf9\xf8\"}"},
		{"wrong types everywhere", "POST", "/transaction", "Bearer " + tok, `{"amount": "1", "pix": 1, "items": {}, "customer": []}`},
		{"a malformed id", "GET", "/transaction/%00%ff", "Bearer " + tok, ""},
		{"a malformed token", "GET", "/transaction", "Bearer a.b.c", ""},
		{"a callback of the wrong shape", "POST", "/acquirer/pix", "Bearer " + acquirerSecret, `{"pix": {"valor": 10, "horario": []}}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			r := a.do(c.method, c.path, "", c.body, "Authorization", c.auth)
			if r.status < 400 || r.status >= 500 {
				t.Fatalf("status %d: %s", r.status, r.body)
			}
			for _, internal := range []string{"json:", "invalid character", "unexpected end", "reflect", "goroutine", ".go:",
				"runtime", "int64", "[]interface", "map[string]", "panic", "strconv", "ozzo", "jwt", "token is malformed", "crypto/"} {
				if bytes.Contains(r.body, []byte(internal)) {
					t.Errorf("the answer shows %q: %s", internal, r.body)
				}
			}
		})
	}
}

// ---------------------------------------------------------------------------------------------
// API10:2023 Unsafe Consumption of APIs

func TestOWASPAPI10GarbageFromTheAcquirerAnswers4xxAndAppliesNothing(t *testing.T) {
	t.Parallel()
	a := secAPI(t, apiSettings{AcquirerSecret: acquirerSecret})
	_, tok := a.account()
	id := a.charge(t, tok, 1_000)
	txid := pixTxID(t, id)
	before := a.want(t, http.StatusOK, "GET", "/transaction/"+id, tok, nil).body
	with := func(changes map[string]any) string {
		p := a.pixPayment(txid, acquirerE2E)
		for k, v := range changes {
			if v == nil {
				delete(p, k)
			} else {
				p[k] = v
			}
		}
		return jsonText(t, map[string]any{"pix": []any{p}})
	}
	many := make([]any, 1001)
	for i := range many {
		many[i] = a.pixPayment(txid, acquirerE2E)
	}
	cases := []struct{ name, body string }{
		{"not JSON", `{"pix": [`},
		{"HTML", `<html><body>502 Bad Gateway</body></html>`},
		{"an empty body", ``},
		{"a JSON array", `[{"txid": "x"}]`},
		{"null", `null`},
		{"pix as a string", `{"pix": "all of them"}`},
		{"1001 entries", jsonText(t, map[string]any{"pix": many})},
	}
	// Garbage inside an entry spoils that entry only: it is answered invalid, and applies
	// nothing.
	entries := []struct{ name, body string }{
		{"pix entries of the wrong type", `{"pix": [1, "a", true, []]}`},
		{"valor with 3 decimals", with(map[string]any{"valor": "10.000"})},
		{"valor negative", with(map[string]any{"valor": "-10.00"})},
		{"valor zero", with(map[string]any{"valor": "0.00"})},
		{"valor not a number", with(map[string]any{"valor": "dez reais"})},
		{"valor NaN", with(map[string]any{"valor": "NaN"})},
		{"valor Infinity", with(map[string]any{"valor": "Infinity"})},
		{"valor in exponent form", with(map[string]any{"valor": "1e3"})},
		{"valor beyond int64", with(map[string]any{"valor": "92233720368547758.08"})},
		{"valor as a JSON number", with(map[string]any{"valor": 10.00})},
		{"valor with spaces", with(map[string]any{"valor": " 10.00 "})},
		{"valor with a plus sign", with(map[string]any{"valor": "+10.00"})},
		{"horario not a time", with(map[string]any{"horario": "yesterday"})},
		{"horario as a number", with(map[string]any{"horario": 1732284000})},
		{"an endToEndId with a control character", with(map[string]any{"endToEndId": "E0036030520261122141\x00aBcDeFgHiJk"})},
		{"an endToEndId of 10 KiB", with(map[string]any{"endToEndId": strings.Repeat("E", 10<<10)})},
		{"a txid with a path", with(map[string]any{"txid": "../../transaction/" + id})},
		{"devolucoes as an object", with(map[string]any{"devolucoes": map[string]any{}})},
		{"a refund with a negative valor", with(map[string]any{"devolucoes": []any{devolucao(map[string]any{"valor": "-1.00"})}})},
	}
	// The garbage all at once; then the check that it applied nothing, then the control.
	t.Run("refused", func(t *testing.T) {
		for _, c := range cases {
			t.Run(c.name+" answers 4xx", func(t *testing.T) {
				t.Parallel()
				r := a.postAcquirer(c.body)
				if r.status < 400 || r.status >= 500 {
					t.Fatalf("status %d: %.300s", r.status, r.body)
				}
				if r.header.Get("Content-Type") != "application/problem+json" {
					t.Fatalf("Content-Type %q", r.header.Get("Content-Type"))
				}
			})
		}
		for _, c := range entries {
			t.Run(c.name+" is invalid", func(t *testing.T) {
				t.Parallel()
				res := a.acquirerNotify(t, c.body)
				for _, r := range res {
					if r.Outcome != "invalid" || r.Detail == "" || len(r.EndToEndID) > 32 {
						t.Fatalf("result %.300v, want invalid", r)
					}
				}
			})
		}
	})
	if after := a.want(t, http.StatusOK, "GET", "/transaction/"+id, tok, nil).body; !bytes.Equal(before, after) {
		t.Fatalf("garbage moved the transaction:\n%s\n%s", before, after)
	}
	t.Run("control: the well-formed callback pays it", func(t *testing.T) {
		if res := a.acquirerNotify(t, map[string]any{"pix": []any{a.pixPayment(txid, acquirerE2E)}}); len(res) != 1 || res[0].Outcome != "applied" {
			t.Fatalf("%+v", res)
		}
	})
}

// ---------------------------------------------------------------------------------------------
// Beyond the Top 10: webhook signature forgery and replay, seen from the receiver that verifies
// with the official Standard Webhooks library.

func TestWebhookForgeryAndReplayFailTheReceiversVerification(t *testing.T) {
	t.Parallel()
	rc := newWebhookReceiver(t)
	a := newWebhookAPI(t, rc)
	accountID, tok := a.account()
	otherID, _ := a.account()
	body := minimalTransaction()
	body["webhookUrl"] = rc.url("/hooks/pix")
	a.want(t, http.StatusCreated, "POST", "/transaction", tok, body)
	if n := a.deliver(); n != 1 {
		t.Fatalf("DeliverDue = %d", n)
	}
	got := rc.deliveries()
	if len(got) != 1 {
		t.Fatalf("%d deliveries", len(got))
	}
	d := got[0]
	secretOf := func(id string) string {
		acc, err := a.accounts.GetAccount(context.Background(), id)
		must(t, err)
		return acc.Webhook().Current
	}
	verifier, err := standardwebhooks.NewWebhook(secretOf(accountID))
	must(t, err)
	if err := verifier.Verify(d.body, d.header); err != nil {
		t.Fatalf("control: the genuine delivery does not verify: %v", err)
	}
	msgID := d.header.Get("webhook-id")
	sent, err := time.Parse(time.RFC3339, time.Now().UTC().Format(time.RFC3339))
	must(t, err)
	resign := func(secret string, at time.Time, payload []byte) http.Header {
		wh, err := standardwebhooks.NewWebhook(secret)
		must(t, err)
		sig, err := wh.Sign(msgID, at, payload)
		must(t, err)
		h := d.header.Clone()
		h.Set("webhook-timestamp", fmt.Sprint(at.Unix()))
		h.Set("webhook-signature", sig)
		return h
	}
	tampered := bytes.Replace(d.body, []byte(`"amount":1000`), []byte(`"amount":100000`), 1)
	if bytes.Equal(tampered, d.body) {
		t.Fatalf("the body has no amount to tamper with: %s", d.body)
	}
	laterStamp := d.header.Clone()
	laterStamp.Set("webhook-timestamp", fmt.Sprint(sent.Add(time.Minute).Unix()))
	otherID2 := d.header.Clone()
	otherID2.Set("webhook-id", "msg_forged")
	for _, c := range []struct {
		name    string
		payload []byte
		header  http.Header
	}{
		{"a body changed in transit", tampered, d.header},
		{"a fresh timestamp on a captured delivery", d.body, laterStamp},
		{"another webhook-id on a captured delivery", d.body, otherID2},
		{"a delivery signed with another account's secret", d.body, resign(secretOf(otherID), sent, d.body)},
		{"a delivery signed by whoever guesses the format", tampered, resign("whsec_"+base64.StdEncoding.EncodeToString([]byte("guessed-secret-0123456789abcdef")), sent, tampered)},
		{"a genuine delivery replayed ten minutes later", d.body, resign(secretOf(accountID), sent.Add(-10*time.Minute), d.body)},
	} {
		t.Run(c.name+" fails verification", func(t *testing.T) {
			t.Parallel()
			if err := verifier.Verify(c.payload, c.header); err == nil {
				t.Fatal("the receiver's verification accepts it")
			}
		})
	}
}
