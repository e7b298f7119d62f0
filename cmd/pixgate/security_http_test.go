package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/pixgate/pixgate/adapters/webhook"
	"github.com/pixgate/pixgate/application"
	"github.com/pixgate/pixgate/domain"
)

// The OWASP API Security Top 10 (2023), item by item, at the HTTP boundary: pixgate assembled
// as `serve` assembles it, real JSON, real JWTs. Each test is named after the item it proves
// (TestOWASPAPI1..., TestOWASPAPI10...) so that docs/SECURITY.md can cite it. Helpers here
// start with "sec".

// secSigningKey is the RSA key the apps of these tests sign with (through
// PIXGATE_JWT_PRIVATE_KEY_FILE), so that the tests can forge tokens with the very key the
// server trusts.
var secSigningKey = sync.OnceValue(func() *rsa.PrivateKey { return secNewKey() })

func secNewKey() *rsa.PrivateKey {
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		panic(err)
	}
	return k
}

// secEnv is newEnv with the known signing key, refunds and withdrawals settling as soon as the
// settle jobs run, and vars on top.
func secEnv(t *testing.T, vars map[string]string, options ...func(*app)) *env {
	t.Helper()
	keyFile := filepath.Join(t.TempDir(), "signing-key.pem")
	block := pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(secSigningKey())})
	if err := os.WriteFile(keyFile, block, 0o600); err != nil {
		t.Fatal(err)
	}
	base := map[string]string{"PIXGATE_JWT_PRIVATE_KEY_FILE": keyFile, "PIXGATE_SANDBOX_SETTLE_SECONDS": "0"}
	for k, v := range vars {
		base[k] = v
	}
	return newEnv(t, base, options...)
}

// secAccount creates an account with every scope and returns it with its first credential.
func (e *env) secAccount() application.CreatedAccount {
	e.t.Helper()
	created, err := application.NewCreateAccount(e.app.stores.accounts, e.app.ids, e.app.clock, e.app.hasher).
		Execute(context.Background(), "Loja Segura", nil)
	if err != nil {
		e.t.Fatal(err)
	}
	return created
}

// secToken issues a token of the account's first credential carrying exactly scopes.
func (e *env) secToken(a application.CreatedAccount, scopes ...domain.Scope) string {
	e.t.Helper()
	tok, err := e.app.issuer.Issue(context.Background(), domain.Principal{AccountID: a.Account.ID(),
		ClientID: a.Credential.ClientID, Scopes: scopes}, time.Hour)
	if err != nil {
		e.t.Fatal(err)
	}
	return tok.Token
}

// secTokenFromEndpoint obtains a token from POST /auth/token with a form body.
func (e *env) secTokenFromEndpoint(clientID, secret string) response {
	e.t.Helper()
	form := url.Values{"grant_type": {"client_credentials"}, "client_id": {clientID}, "client_secret": {secret}}
	return e.do("POST", "/auth/token", "", form.Encode(), "Content-Type", "application/x-www-form-urlencoded")
}

// secStrip is a problem body without what differs between any two answers (requestId, and
// instance, the path asked for), as canonical JSON.
func secStrip(t *testing.T, r response) string {
	t.Helper()
	m := r.json(t)
	delete(m, "requestId")
	delete(m, "instance")
	return mustJSON(t, m)
}

// secJob runs the background job named name once, as `serve` runs it on its interval.
func (e *env) secJob(name string) {
	e.t.Helper()
	for _, j := range e.app.jobs {
		if j.name == name {
			if _, err := j.run(context.Background()); err != nil {
				e.t.Fatalf("job %s: %v", name, err)
			}
			return
		}
	}
	e.t.Fatalf("no job %q", name)
}

// secCreate creates a transaction of amount (cents) and returns its id.
func (e *env) secCreate(tok string, amount int64) string {
	e.t.Helper()
	body := minimalTransaction()
	body["amount"] = amount
	r := e.do("POST", "/transaction", tok, body)
	if r.status != http.StatusCreated {
		e.t.Fatalf("POST /transaction: %d %s", r.status, r.body)
	}
	return r.json(e.t)["id"].(string)
}

// secWant sends a request and wants status.
func (e *env) secWant(status int, method, path, tok string, body any) response {
	e.t.Helper()
	r := e.do(method, path, tok, body)
	if r.status != status {
		e.t.Fatalf("%s %s: %d, want %d\n%s", method, path, r.status, status, r.body)
	}
	return r
}

// secPaid creates a transaction of amount and pays it through the sandbox.
func (e *env) secPaid(tok string, amount int64) string {
	e.t.Helper()
	id := e.secCreate(tok, amount)
	e.secWant(http.StatusOK, "POST", "/sandbox/transaction/"+id+"/pay", tok, nil)
	return id
}

func (e *env) secWithdraw(tok string, amount int64) string {
	e.t.Helper()
	r := e.secWant(http.StatusCreated, "POST", "/withdrawal", tok, map[string]any{
		"amount": amount, "pixKey": map[string]any{"key": "maria@example.com", "type": "EMAIL"}})
	return r.json(e.t)["id"].(string)
}

func (e *env) secBalance(tok string) string {
	e.t.Helper()
	return string(e.secWant(http.StatusOK, "GET", "/balance", tok, nil).body)
}

// secRoutes lists the routes of the app's router as "METHOD /template".
func (e *env) secRoutes() []string {
	e.t.Helper()
	var out []string
	for _, route := range e.app.server.Routes() {
		for _, m := range route.Methods {
			out = append(out, m+" "+route.Path)
		}
	}
	slices.Sort(out)
	return out
}

const secUnknownID = "4f1c2d3e-5a6b-4c7d-8e9f-0a1b2c3d4e5f"

// ---------------------------------------------------------------------------------------------
// API4:2023 Unrestricted Resource Consumption

// secServe runs the real `serve` on a loopback port until the test ends.
func secServe(t *testing.T, vars map[string]string) string {
	t.Helper()
	base := map[string]string{"PIXGATE_ADDR": "127.0.0.1:0", "PIXGATE_LOG_LEVEL": "error"}
	for k, v := range vars {
		base[k] = v
	}
	cfg, err := loadConfig(func(k string) string { return base[k] })
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	addrs := make(chan string, 1)
	done := make(chan error, 1)
	go func() { done <- serve(ctx, cfg, io.Discard, io.Discard, func(addr string) { addrs <- addr }) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("serve: %v", err)
			}
		case <-time.After(15 * time.Second):
			t.Error("serve did not stop")
		}
	})
	select {
	case addr := <-addrs:
		return addr
	case err := <-done:
		t.Fatalf("serve: %v", err)
	case <-time.After(15 * time.Second):
		t.Fatal("serve did not start")
	}
	return ""
}

func TestOWASPAPI4TheRealServerCutsOffSlowAndOversizedHeaders(t *testing.T) {
	t.Parallel()
	addr := secServe(t, nil)

	t.Run("a client dripping its headers is cut off after the 5 s header timeout", func(t *testing.T) {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		start := time.Now()
		if _, err := io.WriteString(conn, "GET /healthz HTTP/1.1\r\nHost: pixgate\r\n"); err != nil {
			t.Fatal(err)
		}
		closed := make(chan time.Duration, 1)
		go func() {
			_ = conn.SetReadDeadline(time.Now().Add(15 * time.Second))
			_, _ = io.Copy(io.Discard, conn) // ends when the server closes the connection
			closed <- time.Since(start)
		}()
		tick := time.NewTicker(250 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case elapsed := <-closed:
				if elapsed < 4*time.Second || elapsed > 8*time.Second {
					t.Fatalf("the connection closed after %v, want about 5 s", elapsed)
				}
				return
			case <-tick.C:
				_, _ = io.WriteString(conn, "X-Slow: a\r\n") // never the blank line that ends the headers
			}
		}
	})
	t.Run("headers over 64 KiB answer 431", func(t *testing.T) {
		req, _ := http.NewRequest("GET", "http://"+addr+"/healthz", nil)
		req.Header.Set("X-Big", strings.Repeat("a", 100<<10))
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
			t.Fatalf("status %d", res.StatusCode)
		}
	})
	t.Run("a request with a huge URL is refused before routing", func(t *testing.T) {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		fmt.Fprintf(conn, "GET /transaction?%s HTTP/1.1\r\nHost: pixgate\r\n\r\n", strings.Repeat("a", 200<<10))
		res, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
			t.Fatalf("status %d", res.StatusCode)
		}
	})
}

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
	e := secEnv(t, map[string]string{"PIXGATE_ACQUIRER_SECRET": acqSecret})
	a := e.secAccount()

	t.Run("every route of the router is in the scope table or public", func(t *testing.T) {
		for _, r := range e.secRoutes() {
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
		path := strings.NewReplacer("{id}", secUnknownID, "{clientId}", secUnknownID).Replace(rt.template)
		t.Run(rt.method+" "+rt.template, func(t *testing.T) {
			r := e.do(rt.method, path, "", nil)
			problemOf(t, r, http.StatusUnauthorized, "unauthorized")
			if r.header.Get("WWW-Authenticate") != "Bearer" {
				t.Errorf("WWW-Authenticate = %q", r.header.Get("WWW-Authenticate"))
			}
			if rt.scope == "" {
				r := e.do(rt.method, path, e.secToken(a), nil)
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
			r = e.do(rt.method, path, e.secToken(a, others...), nil)
			problemOf(t, r, http.StatusForbidden, "insufficient_scope")
			if !strings.Contains(r.header.Get("WWW-Authenticate"), `error="insufficient_scope"`) {
				t.Errorf("WWW-Authenticate = %q", r.header.Get("WWW-Authenticate"))
			}
			if r := e.do(rt.method, path, e.secToken(a, rt.scope), nil); r.status == http.StatusUnauthorized || r.status == http.StatusForbidden {
				t.Fatalf("with exactly %s: %d %s", rt.scope, r.status, r.body)
			}
		})
	}
	t.Run("a token never carries more than its account holds", func(t *testing.T) {
		created, err := application.NewCreateAccount(e.app.stores.accounts, e.app.ids, e.app.clock, e.app.hasher).
			Execute(context.Background(), "Somente Leitura", []domain.Scope{domain.ScopeTransactionRead})
		if err != nil {
			t.Fatal(err)
		}
		// A token claiming every scope (as a compromised issuer or an old token might).
		tok := e.secToken(created, domain.AllScopes()...)
		problemOf(t, e.do("POST", "/transaction", tok, minimalTransaction()), http.StatusForbidden, "insufficient_scope")
		granted := e.secTokenFromEndpoint(created.Credential.ClientID, created.Credential.Secret).json(t)
		if granted["scope"] != "transaction:read" {
			t.Fatalf("the token endpoint granted %v", granted["scope"])
		}
	})
}

func TestOWASPAPI5SandboxAndAcquirerRoutesExistOnlyWhenConfigured(t *testing.T) {
	prod := secEnv(t, map[string]string{"PIXGATE_SANDBOX": "false"})
	_, tok := prod.account()
	id := prod.secCreate(tok, 1_000)
	notFound := prod.do("GET", "/no/such/route", tok, nil)
	problemOf(t, notFound, http.StatusNotFound, "not_found")
	for _, path := range []string{
		"/sandbox/transaction/" + id + "/pay", "/sandbox/transaction/" + id + "/med/open",
		"/sandbox/transaction/" + id + "/med/accept", "/sandbox/transaction/" + id + "/med/reject",
		"/sandbox/transaction/" + id + "/refund/fail", "/sandbox/withdrawal/" + id + "/fail",
		"/sandbox/withdrawal/" + id + "/reject", "/sandbox/withdrawal/" + id + "/refund", "/acquirer/pix",
	} {
		t.Run("POST "+path+" does not exist in production without its setting", func(t *testing.T) {
			r := prod.do("POST", path, tok, nil, "Authorization", "Bearer "+acqSecret)
			problemOf(t, r, http.StatusNotFound, "not_found")
			if a, b := secStrip(t, r), secStrip(t, notFound); a != b {
				t.Fatalf("answers apart from an unknown route:\n%s\n%s", a, b)
			}
		})
	}
	for _, r := range prod.secRoutes() {
		if strings.HasPrefix(r, "POST /sandbox/") || r == "POST /acquirer/pix" {
			t.Errorf("route %s is registered in production", r)
		}
	}
	if got := prod.secWant(http.StatusOK, "GET", "/transaction/"+id, tok, nil).json(t)["status"]; got != "PIX_QRCODE_GENERATED" {
		t.Fatalf("status %v", got)
	}

	t.Run("the acquirer route refuses a merchant's token, and merchant routes the acquirer's secret", func(t *testing.T) {
		e := secEnv(t, map[string]string{"PIXGATE_SANDBOX": "false", "PIXGATE_ACQUIRER_SECRET": acqSecret})
		_, tok := e.account()
		id := e.secCreate(tok, 1_000)
		entry := map[string]any{"pix": []any{acqPix(acqTxID(t, id), acqE2E)}}
		problemOf(t, e.do("POST", "/acquirer/pix", tok, entry), http.StatusUnauthorized, "unauthorized")
		problemOf(t, e.do("GET", "/transaction/"+id, acqSecret, nil), http.StatusUnauthorized, "unauthorized")
		if got := e.secWant(http.StatusOK, "GET", "/transaction/"+id, tok, nil).json(t)["status"]; got != "PIX_QRCODE_GENERATED" {
			t.Fatalf("a refused callback moved the transaction to %v", got)
		}
	})
}

// ---------------------------------------------------------------------------------------------
// API6:2023 Unrestricted Access to Sensitive Business Flows

func TestOWASPAPI6ConcurrentWithdrawalsThroughTwoCredentialsNeverOverdraw(t *testing.T) {
	e := secEnv(t, map[string]string{"PIXGATE_FEE_BASIS_POINTS": "0", "PIXGATE_WITHDRAWAL_FEE_CENTS": "100"})
	_, first := e.account()
	c := e.secWant(http.StatusCreated, "POST", "/auth/credentials", first, nil).json(t)
	second := e.secTokenFromEndpoint(c["client_id"].(string), c["client_secret"].(string)).json(t)["access_token"].(string)
	e.secPaid(first, 10_000)
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
			statuses[i] = e.do("POST", "/withdrawal", tok, map[string]any{"amount": 2_400,
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
	if got := e.secWant(http.StatusOK, "GET", "/balance", first, nil).json(t)["available"]; got != float64(0) {
		t.Fatalf("available = %v, want 0", got)
	}
}

func TestOWASPAPI6ReplaysWithOneIdempotencyKeyCreateOneResource(t *testing.T) {
	e := secEnv(t, map[string]string{"PIXGATE_FEE_BASIS_POINTS": "0"})
	_, tok := e.account()
	_, other := e.account()
	e.secPaid(tok, 100_000)
	const n = 30
	race := func(path string, body map[string]any) [][]byte {
		bodies := make([][]byte, n)
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := range n {
			wg.Go(func() {
				<-start
				r := e.do("POST", path, tok, body, "Idempotency-Key", "replayed-key-0001")
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
	t.Run("POST /transaction", func(t *testing.T) {
		body := minimalTransaction()
		body["externalCode"] = "replayed-order-1"
		race("/transaction", body)
		list := e.secWant(http.StatusOK, "GET", "/transaction?externalCode=replayed-order-1", tok, nil).json(t)
		if list["total"] != float64(1) {
			t.Fatalf("%v transactions for one key", list["total"])
		}
		body["amount"] = 999
		problemOf(t, e.do("POST", "/transaction", tok, body, "Idempotency-Key", "replayed-key-0001"), http.StatusUnprocessableEntity, "idempotency_key_reused")
		// Keys belong to one account: another account's key is its own.
		body["amount"] = 1000
		if r := e.do("POST", "/transaction", other, body, "Idempotency-Key", "replayed-key-0001"); r.status != http.StatusCreated || r.header.Get("Idempotent-Replayed") != "" {
			t.Fatalf("another account's first use of the key: %d %v", r.status, r.header)
		}
	})
	t.Run("POST /withdrawal", func(t *testing.T) {
		before := e.secWant(http.StatusOK, "GET", "/balance", tok, nil).json(t)["available"].(float64)
		race("/withdrawal", map[string]any{"amount": 1_000, "pixKey": map[string]any{"key": "maria@example.com", "type": "EMAIL"}})
		after := e.secWant(http.StatusOK, "GET", "/balance", tok, nil).json(t)["available"].(float64)
		if before-after != 1_000 {
			t.Fatalf("the balance went from %v to %v: %v withdrawn for one key", before, after, before-after)
		}
		problemOf(t, e.do("POST", "/withdrawal", tok, map[string]any{"amount": 2_000, "pixKey": map[string]any{"key": "maria@example.com", "type": "EMAIL"}},
			"Idempotency-Key", "replayed-key-0001"), http.StatusUnprocessableEntity, "idempotency_key_reused")
	})
}

func TestOWASPAPI6ConcurrentStepsOfOnePaymentHappenOnce(t *testing.T) {
	e := secEnv(t, nil)
	_, tok := e.account()
	race := func(path string) (ok int) {
		const n = 20
		statuses := make([]int, n)
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := range n {
			wg.Go(func() {
				<-start
				statuses[i] = e.do("POST", path, tok, nil).status
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
	e.secPaid(tok, 100_000) // a refund needs the available balance to cover it; fees took some of this payment's
	id := e.secCreate(tok, 1_000)
	if n := race("/sandbox/transaction/" + id + "/pay"); n != 1 {
		t.Fatalf("%d payments went through, want 1", n)
	}
	if n := race("/transaction/" + id + "/refund"); n != 1 {
		t.Fatalf("%d refunds went through, want 1", n)
	}
	got := e.secWant(http.StatusOK, "GET", "/transaction/"+id, tok, nil).json(t)
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
	e := secEnv(t, nil)
	_, tok := e.account()
	e.secPaid(tok, 100_000)
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
			body := minimalTransaction()
			body["webhookUrl"] = u
			fields := problemOf(t, e.do("POST", "/transaction", tok, body), http.StatusUnprocessableEntity, "validation_failed")
			if len(fields) != 1 || !strings.HasPrefix(fields[0], "webhookUrl ") {
				t.Fatalf("errors %v", fields)
			}
			fields = problemOf(t, e.do("POST", "/withdrawal", tok, map[string]any{"amount": 1, "webhookUrl": u,
				"pixKey": map[string]any{"key": "maria@example.com", "type": "EMAIL"}}), http.StatusUnprocessableEntity, "validation_failed")
			if len(fields) != 1 || !strings.HasPrefix(fields[0], "webhookUrl ") {
				t.Fatalf("withdrawal errors %v", fields)
			}
		})
	}
}

func TestOWASPAPI7AWebhookHostResolvingToAPrivateAddressIsNeverContacted(t *testing.T) {
	rc := newReceiver(t)
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
			res := &fakeResolver{}
			for _, a := range c.addrs {
				res.addrs = append(res.addrs, netip.MustParseAddr(a))
			}
			var mu sync.Mutex
			var dialed []string
			opts := webhook.Options{Resolver: res, Timeout: 2 * time.Second}
			if c.dial {
				opts.Dial = func(_ context.Context, _, address string) (net.Conn, error) {
					mu.Lock()
					defer mu.Unlock()
					dialed = append(dialed, address)
					return nil, fmt.Errorf("test dialer: no connection to %s", address)
				}
			}
			e := secEnv(t, map[string]string{"PIXGATE_WEBHOOK_ALLOW_PRIVATE": "false", "PIXGATE_WEBHOOK_CA_FILE": rc.caFile},
				func(a *app) { a.webhookOptions = opts })
			_, tok := e.account()
			body := minimalTransaction()
			body["webhookUrl"] = rc.url("/hooks/pix")
			id := e.secWant(http.StatusCreated, "POST", "/transaction", tok, body).json(t)["id"].(string)
			if n, err := e.app.dispatcher.DeliverDue(context.Background()); n != 1 || err != nil {
				t.Fatalf("DeliverDue = %d, %v; want one attempt made", n, err)
			}
			if got := rc.deliveries(); len(got) != 0 {
				t.Fatalf("the receiver got %d deliveries", len(got))
			}
			if res.asked == 0 {
				t.Fatal("the sender never resolved the host itself")
			}
			if len(dialed) != 0 {
				t.Fatalf("the sender connected to %v", dialed)
			}
			events := e.secWant(http.StatusOK, "GET", "/transaction/"+id+"/events", tok, nil).json(t)["data"].([]any)
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
	e := secEnv(t, map[string]string{"PIXGATE_ACQUIRER_SECRET": acqSecret})
	a := e.secAccount()
	tok := e.secToken(a, domain.AllScopes()...)
	id := e.secCreate(tok, 1_000)
	form := url.Values{"client_id": {a.Credential.ClientID}, "client_secret": {a.Credential.Secret}}.Encode()
	formCT := []string{"Content-Type", "application/x-www-form-urlencoded"}
	answers := []struct {
		name    string
		r       response
		noStore bool
	}{
		{"token 200", e.do("POST", "/auth/token", "", form, formCT...), true},
		{"token 401", e.do("POST", "/auth/token", "", "client_id=x&client_secret=y", formCT...), true},
		{"token 400", e.do("GET", "/auth/token?client_secret=x", "", nil), true},
		{"credential 201", e.do("POST", "/auth/credentials", tok, nil), true},
		{"webhook secret 200", e.do("GET", "/webhook/secret", tok, nil), true},
		{"transaction 201", e.do("POST", "/transaction", tok, minimalTransaction()), true},
		{"transaction 200", e.do("GET", "/transaction/"+id, tok, nil), true},
		{"list 200", e.do("GET", "/transaction", tok, nil), true},
		{"balance 200", e.do("GET", "/balance", tok, nil), true},
		{"problem 401", e.do("GET", "/transaction", "", nil), true},
		{"problem 404", e.do("GET", "/nowhere", "", nil), true},
		{"problem 405", e.do("PUT", "/transaction", tok, nil), true},
		{"problem 422", e.do("POST", "/transaction", tok, `{`), true},
		{"acquirer 200", e.do("POST", "/acquirer/pix", "", `{"pix": []}`, "Authorization", "Bearer "+acqSecret), true},
		{"healthz 200", e.do("GET", "/healthz", "", nil), false},
		{"jwks 200", e.do("GET", "/.well-known/jwks.json", "", nil), false},
	}
	for _, c := range answers {
		t.Run(c.name, func(t *testing.T) {
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
	e := secEnv(t, nil)
	_, tok := e.account()
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
		{"PUT", "/transaction/" + secUnknownID, http.StatusMethodNotAllowed, "method_not_allowed"},
		{"DELETE", "/transaction/" + secUnknownID, http.StatusMethodNotAllowed, "method_not_allowed"},
		{"PATCH", "/withdrawal/" + secUnknownID, http.StatusMethodNotAllowed, "method_not_allowed"},
		// gorilla/mux v1.8.1 answers 404 rather than 405 when a route registered later accepts
		// the method (here POST): either is a problem, and no handler runs.
		{"POST", "/balance", 0, ""},
		{"POST", "/withdrawal/" + secUnknownID, 0, ""},
	} {
		t.Run(c.method+" "+c.path, func(t *testing.T) {
			r := e.do(c.method, c.path, tok, nil)
			if c.status == 0 {
				if r.status == http.StatusNotFound {
					c.status, c.code = http.StatusNotFound, "not_found"
				} else {
					c.status, c.code = http.StatusMethodNotAllowed, "method_not_allowed"
				}
			}
			problemOf(t, r, c.status, c.code)
			if bytes.Contains(r.body, []byte(tok)) {
				t.Fatal("the answer echoes the token")
			}
		})
	}
}

func TestOWASPAPI8ErrorAnswersShowNoInternals(t *testing.T) {
	e := secEnv(t, map[string]string{"PIXGATE_ACQUIRER_SECRET": acqSecret})
	_, tok := e.account()
	for _, c := range []struct{ name, method, path, auth, body string }{
		{"broken JSON", "POST", "/transaction", "Bearer " + tok, `{"amount": 10,`},
		{"a JSON array", "POST", "/transaction", "Bearer " + tok, `[1, 2]`},
		{"a number too large for any type", "POST", "/transaction", "Bearer " + tok, `{"amount": 1` + strings.Repeat("0", 400) + `}`},
		{"invalid UTF-8", "POST", "/transaction", "Bearer " + tok, "{\"externalCode\": \"\xff\xfe\xfd\xfc\xfb\xfa\xf9\xf8\"}"},
		{"wrong types everywhere", "POST", "/transaction", "Bearer " + tok, `{"amount": "1", "pix": 1, "items": {}, "customer": []}`},
		{"a malformed id", "GET", "/transaction/%00%ff", "Bearer " + tok, ""},
		{"a malformed token", "GET", "/transaction", "Bearer a.b.c", ""},
		{"a callback of the wrong shape", "POST", "/acquirer/pix", "Bearer " + acqSecret, `{"pix": {"valor": 10, "horario": []}}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := e.do(c.method, c.path, "", c.body, "Authorization", c.auth)
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
	e := secEnv(t, map[string]string{"PIXGATE_ACQUIRER_SECRET": acqSecret})
	_, tok := e.account()
	id := e.secCreate(tok, 1_000)
	txid := acqTxID(t, id)
	before := e.secWant(http.StatusOK, "GET", "/transaction/"+id, tok, nil).body
	with := func(changes map[string]any) string {
		p := acqPix(txid, acqE2E)
		for k, v := range changes {
			if v == nil {
				delete(p, k)
			} else {
				p[k] = v
			}
		}
		return mustJSON(t, map[string]any{"pix": []any{p}})
	}
	many := make([]any, 1001)
	for i := range many {
		many[i] = acqPix(txid, acqE2E)
	}
	cases := []struct{ name, body string }{
		{"not JSON", `{"pix": [`},
		{"HTML", `<html><body>502 Bad Gateway</body></html>`},
		{"an empty body", ``},
		{"a JSON array", `[{"txid": "x"}]`},
		{"null", `null`},
		{"pix as a string", `{"pix": "all of them"}`},
		{"1001 entries", mustJSON(t, map[string]any{"pix": many})},
	}
	for _, c := range cases {
		t.Run(c.name+" answers 4xx", func(t *testing.T) {
			r := e.do("POST", "/acquirer/pix", "", c.body, "Authorization", "Bearer "+acqSecret)
			if r.status < 400 || r.status >= 500 {
				t.Fatalf("status %d: %.300s", r.status, r.body)
			}
			if r.header.Get("Content-Type") != "application/problem+json" {
				t.Fatalf("Content-Type %q", r.header.Get("Content-Type"))
			}
		})
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
		{"a refund with a negative valor", with(map[string]any{"devolucoes": []any{secWithDevolucao(map[string]any{"valor": "-1.00"})}})},
	}
	for _, c := range entries {
		t.Run(c.name+" is invalid", func(t *testing.T) {
			res := acqResults(t, e.do("POST", "/acquirer/pix", "", c.body, "Authorization", "Bearer "+acqSecret))
			for _, r := range res {
				if r.Outcome != "invalid" || r.Detail == "" || len(r.EndToEndID) > 32 {
					t.Fatalf("result %.300v, want invalid", r)
				}
			}
		})
	}
	if after := e.secWant(http.StatusOK, "GET", "/transaction/"+id, tok, nil).body; !bytes.Equal(before, after) {
		t.Fatalf("garbage moved the transaction:\n%s\n%s", before, after)
	}
	t.Run("control: the well-formed callback pays it", func(t *testing.T) {
		if res := acqResults(t, e.acqNotify(map[string]any{"pix": []any{acqPix(txid, acqE2E)}})); len(res) != 1 || res[0].Outcome != "applied" {
			t.Fatalf("%+v", res)
		}
	})
}

func secWithDevolucao(changes map[string]any) map[string]any {
	d := acqDevolucao("DEVOLVIDO")
	for k, v := range changes {
		d[k] = v
	}
	return d
}

func TestOWASPAPI10GarbageFromTheUpstreamTokenProviderAnswers502(t *testing.T) {
	var mu sync.Mutex
	answer := func(w http.ResponseWriter) {}
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		a := answer
		mu.Unlock()
		a(w)
	}))
	t.Cleanup(upstream.Close)
	e := secEnv(t, map[string]string{
		"PIXGATE_AUTH_UPSTREAM_TOKEN_URL": upstream.URL + "/token", "PIXGATE_AUTH_UPSTREAM_JWKS_URL": upstream.URL + "/jwks",
		"PIXGATE_AUTH_UPSTREAM_ISSUER": "https://upstream.example", "PIXGATE_AUTH_UPSTREAM_AUDIENCE": "pixgate",
		"PIXGATE_AUTH_UPSTREAM_TIMEOUT": "1s",
	})
	a := e.secAccount()
	jsonAnswer := func(status int, body string) func(http.ResponseWriter) {
		return func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(status)
			io.WriteString(w, body)
		}
	}
	for _, c := range []struct {
		name   string
		answer func(http.ResponseWriter)
	}{
		{"an HTML error page", func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "text/html")
			io.WriteString(w, "<html>oops</html>")
		}},
		{"a 500", jsonAnswer(500, `{"error": "server_error"}`)},
		{"JSON without access_token", jsonAnswer(200, `{"token_type": "Bearer", "expires_in": 300}`)},
		{"an access_token that is a number", jsonAnswer(200, `{"access_token": 12, "token_type": "Bearer", "expires_in": 300}`)},
		{"a token type other than Bearer", jsonAnswer(200, `{"access_token": "x", "token_type": "MAC", "expires_in": 300}`)},
		{"a negative lifetime", jsonAnswer(200, `{"access_token": "x", "token_type": "Bearer", "expires_in": -1}`)},
		{"truncated JSON", jsonAnswer(200, `{"access_token": "x", "token_`)},
		{"a body of 2 MiB", jsonAnswer(200, `{"access_token": "`+strings.Repeat("a", 2<<20)+`", "token_type": "Bearer", "expires_in": 300}`)},
		{"a redirect to elsewhere", func(w http.ResponseWriter) {
			w.Header().Set("Location", "https://evil.example/token")
			w.WriteHeader(http.StatusTemporaryRedirect)
		}},
		{"no answer in time", func(w http.ResponseWriter) { time.Sleep(1500 * time.Millisecond) }},
	} {
		t.Run(c.name+" answers 502", func(t *testing.T) {
			mu.Lock()
			answer = c.answer
			mu.Unlock()
			r := e.secTokenFromEndpoint(a.Credential.ClientID, a.Credential.Secret)
			if r.status != http.StatusBadGateway || r.json(t)["error"] != "temporarily_unavailable" {
				t.Fatalf("%d %.300s", r.status, r.body)
			}
			if bytes.Contains(r.body, []byte("oops")) || bytes.Contains(r.body, []byte("evil")) {
				t.Fatalf("the upstream's answer leaks through: %s", r.body)
			}
		})
	}
}

// ---------------------------------------------------------------------------------------------
// Beyond the Top 10: webhook signature forgery and replay, seen from the receiver that verifies
// with the official Standard Webhooks library.

func TestWebhookForgeryAndReplayFailTheReceiversVerification(t *testing.T) {
	rc := newReceiver(t)
	e := newWebhookEnv(t, rc)
	accountID, tok := e.account()
	otherID, _ := e.account()
	body := minimalTransaction()
	body["webhookUrl"] = rc.url("/hooks/pix")
	e.secWant(http.StatusCreated, "POST", "/transaction", tok, body)
	if n, err := e.app.dispatcher.DeliverDue(context.Background()); n != 1 || err != nil {
		t.Fatalf("DeliverDue = %d, %v", n, err)
	}
	got := rc.deliveries()
	if len(got) != 1 {
		t.Fatalf("%d deliveries", len(got))
	}
	d := got[0]
	secretOf := func(id string) string {
		a, err := e.app.stores.accounts.GetAccount(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		return a.Webhook().Current
	}
	verifier, err := standardwebhooks.NewWebhook(secretOf(accountID))
	if err != nil {
		t.Fatal(err)
	}
	if err := verifier.Verify(d.body, d.header); err != nil {
		t.Fatalf("control: the genuine delivery does not verify: %v", err)
	}
	msgID := d.header.Get("webhook-id")
	sent, err := time.Parse(time.RFC3339, time.Now().UTC().Format(time.RFC3339))
	if err != nil {
		t.Fatal(err)
	}
	resign := func(secret string, at time.Time, payload []byte) http.Header {
		wh, err := standardwebhooks.NewWebhook(secret)
		if err != nil {
			t.Fatal(err)
		}
		sig, err := wh.Sign(msgID, at, payload)
		if err != nil {
			t.Fatal(err)
		}
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
			if err := verifier.Verify(c.payload, c.header); err == nil {
				t.Fatal("the receiver's verification accepts it")
			}
		})
	}
}
