package oidc_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pixgate/pixgate/adapters/oidc"
	"github.com/pixgate/pixgate/domain"
	"github.com/pixgate/pixgate/ports"
)

const (
	upstreamClient = "merchant-1"
	upstreamSecret = "s3cr3t-value-that-must-never-leak-0123456789"
)

type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

var start = time.Date(2031, 4, 5, 6, 7, 8, 0, time.UTC)

func newExchanger(t *testing.T, tokenURL string, cfg oidc.ExchangerConfig) *oidc.Exchanger {
	t.Helper()
	cfg.TokenURL = tokenURL
	if cfg.Clock == nil {
		cfg.Clock = &clock{now: start}
	}
	e, err := oidc.NewExchanger(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// keycloak answers like Keycloak's token endpoint for one client.
func keycloak(t *testing.T, basic bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/x-www-form-urlencoded" {
			http.Error(w, "bad request shape", http.StatusBadRequest)
			return
		}
		if err := r.ParseForm(); err != nil {
			t.Error(err)
		}
		id, secret := r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
		if basic {
			u, p, ok := r.BasicAuth()
			if !ok || id != "" || secret != "" {
				t.Errorf("Basic auth expected alone, got form %v", r.PostForm)
			}
			id, _ = url.QueryUnescape(u)
			secret, _ = url.QueryUnescape(p)
		}
		w.Header().Set("Content-Type", "application/json")
		if r.PostForm.Get("grant_type") != "client_credentials" {
			w.WriteHeader(http.StatusBadRequest)
			_, _ = io.WriteString(w, `{"error":"unsupported_grant_type"}`)
			return
		}
		if id != upstreamClient || secret != upstreamSecret {
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = io.WriteString(w, `{"error":"invalid_client","error_description":"Invalid client or Invalid client credentials"}`)
			return
		}
		_, _ = io.WriteString(w, `{"access_token":"eyJ.upstream.token","expires_in":300,"refresh_expires_in":0,"token_type":"Bearer","not-before-policy":0,"scope":"profile transaction:read email withdrawal:read"}`)
	}
}

func TestExchangeObtainsTheUpstreamToken(t *testing.T) {
	for _, basic := range []bool{false, true} {
		name := "client_secret_post"
		if basic {
			name = "client_secret_basic"
		}
		t.Run(name, func(t *testing.T) {
			srv := httptest.NewServer(keycloak(t, basic))
			defer srv.Close()
			tok, err := newExchanger(t, srv.URL, oidc.ExchangerConfig{BasicAuth: basic}).Exchange(context.Background(), upstreamClient, upstreamSecret, nil)
			if err != nil {
				t.Fatal(err)
			}
			if tok.AccessToken != "eyJ.upstream.token" || tok.Lifetime != 5*time.Minute || !tok.ExpiresAt.Equal(start.Add(5*time.Minute)) {
				t.Errorf("token = %+v", tok)
			}
			if domain.JoinScopes(tok.Scopes) != "transaction:read,withdrawal:read" {
				t.Errorf("scopes = %v", tok.Scopes)
			}
		})
	}
}

func TestExchangeTranslatesUpstreamFailures(t *testing.T) {
	respond := func(status int, contentType, body string) http.HandlerFunc {
		return func(w http.ResponseWriter, _ *http.Request) {
			if contentType != "" {
				w.Header().Set("Content-Type", contentType)
			}
			w.WriteHeader(status)
			_, _ = io.WriteString(w, body)
		}
	}
	cases := []struct {
		name    string
		handler http.HandlerFunc
		want    error
	}{
		{"wrong credentials (401 invalid_client) are invalid credentials", keycloak(t, false), ports.ErrInvalidCredentials},
		{"a 401 without a body is invalid credentials", respond(401, "", ""), ports.ErrInvalidCredentials},
		{"a 400 invalid_client is invalid credentials", respond(400, "application/json", `{"error":"invalid_client"}`), ports.ErrInvalidCredentials},
		{"a 400 unauthorized_client is invalid credentials", respond(400, "application/json", `{"error":"unauthorized_client"}`), ports.ErrInvalidCredentials},
		{"a 400 invalid_request is the upstream's problem", respond(400, "application/json", `{"error":"invalid_request"}`), ports.ErrUpstreamUnavailable},
		{"a 500 is unavailable", respond(500, "application/json", `{"error":"server_error"}`), ports.ErrUpstreamUnavailable},
		{"a 502 HTML page is unavailable", respond(502, "text/html", "<html>Bad Gateway</html>"), ports.ErrUpstreamUnavailable},
		{"a 503 is unavailable", respond(503, "", ""), ports.ErrUpstreamUnavailable},
		{"a redirect is not followed and is unavailable", func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "https://elsewhere.test/token", http.StatusTemporaryRedirect)
		}, ports.ErrUpstreamUnavailable},
		{"garbage JSON is unavailable", respond(200, "application/json", `{"access_token": "abc", `), ports.ErrUpstreamUnavailable},
		{"a JSON array is unavailable", respond(200, "application/json", `[1,2]`), ports.ErrUpstreamUnavailable},
		{"an HTML 200 is unavailable", respond(200, "text/html", `<html>login</html>`), ports.ErrUpstreamUnavailable},
		{"a 200 without access_token is unavailable", respond(200, "application/json", `{"token_type":"Bearer","expires_in":300}`), ports.ErrUpstreamUnavailable},
		{"a 200 with another token type is unavailable", respond(200, "application/json", `{"access_token":"x","token_type":"mac","expires_in":300}`), ports.ErrUpstreamUnavailable},
		{"a 200 without expires_in is unavailable", respond(200, "application/json", `{"access_token":"x","token_type":"Bearer"}`), ports.ErrUpstreamUnavailable},
		{"a 200 with a negative expires_in is unavailable", respond(200, "application/json", `{"access_token":"x","token_type":"Bearer","expires_in":-5}`), ports.ErrUpstreamUnavailable},
		{"a 200 with expires_in as text is unavailable", respond(200, "application/json", `{"access_token":"x","token_type":"Bearer","expires_in":"soon"}`), ports.ErrUpstreamUnavailable},
		{"an oversized body is unavailable", respond(200, "application/json", `{"access_token":"`+strings.Repeat("a", 2<<20)+`","token_type":"Bearer","expires_in":300}`), ports.ErrUpstreamUnavailable},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(tc.handler)
			defer srv.Close()
			_, err := newExchanger(t, srv.URL, oidc.ExchangerConfig{}).Exchange(context.Background(), upstreamClient, "wrong-"+upstreamSecret, nil)
			if !errors.Is(err, tc.want) {
				t.Fatalf("Exchange = %v, want %v", err, tc.want)
			}
			if strings.Contains(err.Error(), upstreamSecret) {
				t.Fatalf("the error carries the secret: %v", err)
			}
		})
	}
}

func TestExchangeWithAnUnreachableUpstreamIsUnavailable(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there any more
	_, err = newExchanger(t, "http://"+addr+"/token", oidc.ExchangerConfig{}).Exchange(context.Background(), upstreamClient, upstreamSecret, nil)
	if !errors.Is(err, ports.ErrUpstreamUnavailable) || strings.Contains(err.Error(), upstreamSecret) {
		t.Fatalf("Exchange = %v, want ports.ErrUpstreamUnavailable without the secret", err)
	}
}

func TestExchangeWithASlowUpstreamGivesUpAtTheTimeout(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)
	begin := time.Now()
	_, err := newExchanger(t, srv.URL, oidc.ExchangerConfig{Timeout: 200 * time.Millisecond}).Exchange(context.Background(), upstreamClient, upstreamSecret, nil)
	if !errors.Is(err, ports.ErrUpstreamUnavailable) {
		t.Fatalf("Exchange = %v, want ports.ErrUpstreamUnavailable", err)
	}
	if took := time.Since(begin); took > 2*time.Second {
		t.Fatalf("gave up after %v, want about 200ms", took)
	}
}

func TestNewExchangerRefusesBadConfiguration(t *testing.T) {
	for name, cfg := range map[string]oidc.ExchangerConfig{
		"no URL":         {Clock: &clock{}},
		"a relative URL": {TokenURL: "/token", Clock: &clock{}},
		"an ftp URL":     {TokenURL: "ftp://sso.test/token", Clock: &clock{}},
		"no clock":       {TokenURL: "https://sso.test/token"},
	} {
		if _, err := oidc.NewExchanger(cfg); err == nil {
			t.Errorf("NewExchanger with %s succeeded", name)
		}
	}
}
