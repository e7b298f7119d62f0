package main

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/pixgate/pixgate/adapters/httpapi/apitest"
	"github.com/pixgate/pixgate/application"
	"github.com/pixgate/pixgate/domain"
)

// The OAuth behaviour that lies in serve's wiring rather than in the HTTP adapter: accounts
// made by PIXGATE_SEED_CLIENTS and by `pixgate clients create`, and the upstream OpenID
// provider of PIXGATE_AUTH_UPSTREAM_*. The token endpoints, scopes, credentials, metadata and
// token limits are tested in adapters/httpapi (oauth_http_test.go).

// tkAccount creates an account with scopes (none: every scope) and its first credential.
func (e *env) tkAccount(scopes ...domain.Scope) application.CreatedAccount {
	e.t.Helper()
	created, err := application.NewCreateAccount(e.app.stores.accounts, e.app.ids, e.app.clock, e.app.hasher).
		Execute(context.Background(), "Loja OAuth", scopes)
	if err != nil {
		e.t.Fatal(err)
	}
	return created
}

func TestAccountsMadeWithoutScopesGetEveryScopeIncludingAccountAdmin(t *testing.T) {
	t.Parallel()
	secret := strings.Repeat("s3cr3t-", 6)
	t.Run("PIXGATE_SEED_CLIENTS without scopes", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, map[string]string{"PIXGATE_SEED_CLIENTS": "Loja Semente:seed-client:" + secret})
		if err := e.app.seed(context.Background(), &bytes.Buffer{}); err != nil {
			t.Fatal(err)
		}
		_, scope := apitest.AccessToken(t, e.client().PostForm(t, "/auth/token", apitest.Credentials("seed-client", secret)))
		if scope != domain.JoinScopes(domain.AllScopes()) {
			t.Fatalf("scope = %q, want every scope", scope)
		}
	})
	t.Run("pixgate clients create without --scopes", func(t *testing.T) {
		t.Parallel()
		cfg, err := loadConfig(func(string) string { return "" })
		if err != nil {
			t.Fatal(err)
		}
		st, err := openStores(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		var out, errOut bytes.Buffer
		if err := clientsIn(context.Background(), cfg, st, []string{"create", "--name", "Loja CLI"}, &out, &errOut); err != nil {
			t.Fatalf("%v: %s", err, errOut.String())
		}
		if !strings.Contains(out.String(), "scopes="+domain.JoinScopes(domain.AllScopes())+"\n") {
			t.Fatalf("output %q does not grant every scope", out.String())
		}
	})
}

func TestWithAnUpstreamProviderTheScopeIsPassedOnAndTheMetadataNamesItsKeys(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var asked []string
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := r.ParseForm(); err != nil {
			t.Error(err)
		}
		mu.Lock()
		asked = append(asked, r.PostForm.Get("scope"))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"access_token":"upstream-token","token_type":"Bearer","expires_in":300,"scope":"transaction:read profile"}`))
	}))
	t.Cleanup(upstream.Close)
	e := newEnv(t, map[string]string{
		"PIXGATE_AUTH_UPSTREAM_TOKEN_URL": upstream.URL + "/token", "PIXGATE_AUTH_UPSTREAM_JWKS_URL": upstream.URL + "/jwks",
		"PIXGATE_AUTH_UPSTREAM_ISSUER": "https://upstream.example", "PIXGATE_AUTH_UPSTREAM_AUDIENCE": "pixgate",
	})
	acc := e.tkAccount(domain.ScopeTransactionRead, domain.ScopeBalanceRead)

	m := e.do("GET", "/.well-known/oauth-authorization-server", "", nil).json(t)
	if m["issuer"] != "https://upstream.example" || m["jwks_uri"] != upstream.URL+"/jwks" || m["token_endpoint"] != e.srv.URL+"/oauth/token" {
		t.Fatalf("metadata %v: want the upstream's issuer and keys, pixgate's token endpoint", m)
	}
	c := acc.Credential
	r := e.client().PostForm(t, "/oauth/token", apitest.Credentials(c.ClientID, c.Secret, "scope", "transaction:read"))
	if body := r.JSON(t); r.Status != http.StatusOK || body["scope"] != "transaction:read" || body["expires_in"] != float64(300) {
		t.Fatalf("%d %s", r.Status, r.Body)
	}
	apitest.TokenError(t, e.client().PostForm(t, "/oauth/token", apitest.Credentials(c.ClientID, c.Secret, "scope", "withdrawal:write")), http.StatusBadRequest, "invalid_scope")
	mu.Lock()
	defer mu.Unlock()
	if len(asked) != 2 || asked[0] != "transaction:read" || asked[1] != "withdrawal:write" {
		t.Fatalf("the upstream was asked for %q", asked)
	}
}
