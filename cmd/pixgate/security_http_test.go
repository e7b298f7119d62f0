package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pixgate/pixgate/application"
	"github.com/pixgate/pixgate/domain"
)

// The OWASP API Security Top 10 (2023) tests that need serve itself or its wiring: the real
// http.Server's header timeouts and limits (API4), and the upstream OpenID provider of
// PIXGATE_AUTH_UPSTREAM_* (API10). The rest, item by item, are black-box tests of the HTTP
// adapter: adapters/httpapi/security_http_test.go (API1 to API4) and
// security_flows_http_test.go (API5 to API10, webhook forgery). Helpers here start with "sec";
// other tests of this package use them too.

// secEnv is newEnv with refunds and withdrawals settling as soon as the settle jobs run, and
// vars on top.
func secEnv(t *testing.T, vars map[string]string, options ...func(*app)) *env {
	t.Helper()
	base := map[string]string{"PIXGATE_SANDBOX_SETTLE_SECONDS": "0"}
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

// secWant sends a request and wants status.
func (e *env) secWant(status int, method, path, tok string, body any) response {
	e.t.Helper()
	r := e.do(method, path, tok, body)
	if r.status != status {
		e.t.Fatalf("%s %s: %d, want %d\n%s", method, path, r.status, status, r.body)
	}
	return r
}

func (e *env) secWithdraw(tok string, amount int64) string {
	e.t.Helper()
	r := e.secWant(http.StatusCreated, "POST", "/withdrawal", tok, map[string]any{
		"amount": amount, "pixKey": map[string]any{"key": "maria@example.com", "type": "EMAIL"}})
	return r.json(e.t)["id"].(string)
}

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
// API10:2023 Unsafe Consumption of APIs

func TestOWASPAPI10GarbageFromTheUpstreamTokenProviderAnswers502(t *testing.T) {
	t.Parallel()
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
