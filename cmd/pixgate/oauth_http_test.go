package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"

	"github.com/pixgate/pixgate/application"
	"github.com/pixgate/pixgate/domain"
)

// Least privilege, the token endpoints' scope parameter, /oauth/token and its metadata, and
// the token limits, through the whole app over real HTTP (docs/API.md, OAuth clients).

var tkTimestamp = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$`)

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

// tkForm posts form to a token endpoint.
func (e *env) tkForm(path string, form url.Values, headers ...string) response {
	e.t.Helper()
	return e.do("POST", path, "", form.Encode(), append([]string{"Content-Type", "application/x-www-form-urlencoded"}, headers...)...)
}

func tkCreds(c application.NewCredential, more ...string) url.Values {
	v := url.Values{"client_id": {c.ClientID}, "client_secret": {c.Secret}}
	for i := 0; i+1 < len(more); i += 2 {
		v.Set(more[i], more[i+1])
	}
	return v
}

func tkBasic(c application.NewCredential) string {
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(url.QueryEscape(c.ClientID)+":"+url.QueryEscape(c.Secret)))
}

// tkTokenError checks an RFC 6749 error answer.
func tkTokenError(t *testing.T, r response, status int, code string) {
	t.Helper()
	if r.status != status || !strings.HasPrefix(r.header.Get("Content-Type"), "application/json") || r.header.Get("Cache-Control") != "no-store" {
		t.Fatalf("%d %v %s; want %d %s", r.status, r.header, r.body, status, code)
	}
	m := r.json(t)
	if m["error"] != code || m["error_description"] == "" || len(m) != 2 {
		t.Fatalf("body %s, want error %s", r.body, code)
	}
}

// tkAccessToken reads a successful token answer.
func tkAccessToken(t *testing.T, r response) (token, scope string) {
	t.Helper()
	if r.status != http.StatusOK {
		t.Fatalf("token: %d %s", r.status, r.body)
	}
	m := r.json(t)
	token, _ = m["access_token"].(string)
	scope, _ = m["scope"].(string)
	if token == "" {
		t.Fatalf("no access_token in %s", r.body)
	}
	return token, scope
}

func TestAccountAdminGuardsCredentialsAndTheWebhookSecret(t *testing.T) {
	e := newEnv(t, nil)
	acc := e.tkAccount()
	reporting, scope := tkAccessToken(t, e.tkForm("/auth/token", tkCreds(acc.Credential, "scope", "transaction:read balance:read")))
	if scope != "transaction:read,balance:read" {
		t.Fatalf("scope = %q", scope)
	}
	admin, _ := tkAccessToken(t, e.tkForm("/auth/token", tkCreds(acc.Credential, "scope", "account:admin")))

	routes := []struct{ method, path string }{
		{"POST", "/auth/credentials"}, {"GET", "/auth/credentials"},
		{"DELETE", "/auth/credentials/" + acc.Credential.ClientID},
		{"GET", "/webhook/secret"}, {"POST", "/webhook/secret/rotate"},
	}
	for _, rt := range routes {
		t.Run(rt.method+" "+rt.path+" answers 403 insufficient_scope to a reporting token", func(t *testing.T) {
			r := e.do(rt.method, rt.path, reporting, nil)
			problemOf(t, r, http.StatusForbidden, "insufficient_scope")
			if got := r.header.Get("WWW-Authenticate"); got != `Bearer error="insufficient_scope", scope="account:admin"` {
				t.Fatalf("WWW-Authenticate = %q", got)
			}
		})
	}
	t.Run("the reporting token still reads what it was made for", func(t *testing.T) {
		if r := e.do("GET", "/balance", reporting, nil); r.status != http.StatusOK {
			t.Fatalf("%d %s", r.status, r.body)
		}
	})
	t.Run("nothing changed: one credential, the same webhook secret", func(t *testing.T) {
		list := e.do("GET", "/auth/credentials", admin, nil)
		if list.status != http.StatusOK || strings.Count(string(list.body), `"client_id"`) != 1 || strings.Contains(string(list.body), `"revokedAt":"`) {
			t.Fatalf("%d %s", list.status, list.body)
		}
		r := e.do("GET", "/webhook/secret", admin, nil)
		if r.status != http.StatusOK || r.json(t)["secret"] != acc.Account.Webhook().Current || r.json(t)["previousSecret"] != nil {
			t.Fatalf("%d %s", r.status, r.body)
		}
	})
	t.Run("a token of account:admin alone manages the account and nothing else", func(t *testing.T) {
		if r := e.do("POST", "/auth/credentials", admin, nil); r.status != http.StatusCreated {
			t.Fatalf("%d %s", r.status, r.body)
		}
		problemOf(t, e.do("GET", "/balance", admin, nil), http.StatusForbidden, "insufficient_scope")
	})
}

func TestAccountsMadeWithoutScopesGetEveryScopeIncludingAccountAdmin(t *testing.T) {
	secret := strings.Repeat("s3cr3t-", 6)
	t.Run("PIXGATE_SEED_CLIENTS without scopes", func(t *testing.T) {
		e := newEnv(t, map[string]string{"PIXGATE_SEED_CLIENTS": "Loja Semente:seed-client:" + secret})
		if err := e.app.seed(context.Background(), &bytes.Buffer{}); err != nil {
			t.Fatal(err)
		}
		_, scope := tkAccessToken(t, e.tkForm("/auth/token", url.Values{"client_id": {"seed-client"}, "client_secret": {secret}}))
		if scope != domain.JoinScopes(domain.AllScopes()) {
			t.Fatalf("scope = %q, want every scope", scope)
		}
	})
	t.Run("pixgate clients create without --scopes", func(t *testing.T) {
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

func TestCredentialListShowsNewestFirstWithLastUseAndNoSecret(t *testing.T) {
	e := newEnv(t, nil)
	acc := e.tkAccount()
	_, admin := e.account() // an account of its own: its token must not see acc's credentials
	first := acc.Credential

	type item struct {
		ClientID   string  `json:"client_id"`
		CreatedAt  string  `json:"createdAt"`
		LastUsedAt *string `json:"lastUsedAt"`
		RevokedAt  *string `json:"revokedAt"`
	}
	list := func(token string) []item {
		t.Helper()
		r := e.do("GET", "/auth/credentials", token, nil)
		if r.status != http.StatusOK {
			t.Fatalf("list: %d %s", r.status, r.body)
		}
		for _, leak := range []string{"secret", "Hash", first.Secret} {
			if strings.Contains(string(r.body), leak) {
				t.Fatalf("the list shows %q: %s", leak, r.body)
			}
		}
		var body struct {
			Data []item `json:"data"`
		}
		dec := json.NewDecoder(bytes.NewReader(r.body))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&body); err != nil {
			t.Fatalf("%v: %s", err, r.body)
		}
		if !strings.Contains(string(r.body), `"lastUsedAt":`) || !strings.Contains(string(r.body), `"revokedAt":`) {
			t.Fatalf("lastUsedAt and revokedAt must be present, null when empty: %s", r.body)
		}
		return body.Data
	}

	before := time.Now().UTC().Add(-time.Second)
	tok, _ := tkAccessToken(t, e.tkForm("/auth/token", tkCreds(first)))
	got := list(tok)
	if len(got) != 1 || got[0].ClientID != first.ClientID || !tkTimestamp.MatchString(got[0].CreatedAt) ||
		got[0].LastUsedAt == nil || !tkTimestamp.MatchString(*got[0].LastUsedAt) || got[0].RevokedAt != nil {
		t.Fatalf("after one token: %+v, want the credential with its last use", got)
	}
	used, _ := time.Parse(time.RFC3339, *got[0].LastUsedAt)
	if used.Before(before) || used.After(time.Now().Add(time.Second)) {
		t.Fatalf("lastUsedAt %v is not the token's time", used)
	}

	t.Run("more tokens within the minute record nothing new", func(t *testing.T) {
		time.Sleep(1100 * time.Millisecond) // past the second the first use was recorded in
		for range 3 {
			tkAccessToken(t, e.tkForm("/auth/token", tkCreds(first)))
		}
		if again := list(tok); *again[0].LastUsedAt != *got[0].LastUsedAt {
			t.Fatalf("lastUsedAt moved from %s to %s within the minute", *got[0].LastUsedAt, *again[0].LastUsedAt)
		}
	})

	r := e.do("POST", "/auth/credentials", tok, nil)
	if r.status != http.StatusCreated {
		t.Fatalf("create: %d %s", r.status, r.body)
	}
	second := application.NewCredential{ClientID: r.json(t)["client_id"].(string), Secret: r.json(t)["client_secret"].(string)}
	secondTok, _ := tkAccessToken(t, e.tkForm("/auth/token", tkCreds(second)))
	if r := e.do("DELETE", "/auth/credentials/"+first.ClientID, secondTok, nil); r.status != http.StatusNoContent {
		t.Fatalf("revoke: %d %s", r.status, r.body)
	}
	got = list(secondTok)
	if len(got) != 2 || got[0].ClientID != second.ClientID || got[1].ClientID != first.ClientID {
		t.Fatalf("list %+v, want the new credential first", got)
	}
	if got[0].RevokedAt != nil || got[1].RevokedAt == nil || !tkTimestamp.MatchString(*got[1].RevokedAt) || got[0].LastUsedAt == nil {
		t.Fatalf("list %+v, want the first revoked and the second used", got)
	}
	if others := list(admin); len(others) != 1 || others[0].ClientID == first.ClientID || others[0].ClientID == second.ClientID {
		t.Fatalf("another account's token lists %+v", others)
	}
}

func TestAnAccountHoldsAtMostTenActiveCredentials(t *testing.T) {
	e := newEnv(t, nil)

	t.Run("the eleventh answers 422 limit_exceeded until one is revoked", func(t *testing.T) {
		_, tok := e.account()
		var made []string
		for range domain.MaxActiveCredentials - 1 {
			r := e.do("POST", "/auth/credentials", tok, nil)
			if r.status != http.StatusCreated {
				t.Fatalf("%d %s", r.status, r.body)
			}
			made = append(made, r.json(t)["client_id"].(string))
		}
		problemOf(t, e.do("POST", "/auth/credentials", tok, nil), http.StatusUnprocessableEntity, "limit_exceeded")
		if r := e.do("DELETE", "/auth/credentials/"+made[0], tok, nil); r.status != http.StatusNoContent {
			t.Fatalf("%d %s", r.status, r.body)
		}
		if r := e.do("POST", "/auth/credentials", tok, nil); r.status != http.StatusCreated {
			t.Fatalf("after a revocation: %d %s", r.status, r.body)
		}
		problemOf(t, e.do("POST", "/auth/credentials", tok, nil), http.StatusUnprocessableEntity, "limit_exceeded")
	})

	t.Run("thirty concurrent creations leave exactly ten active", func(t *testing.T) {
		_, tok := e.account()
		var created, refused atomic.Int32
		var wg sync.WaitGroup
		for range 30 {
			wg.Go(func() {
				switch r := e.do("POST", "/auth/credentials", tok, nil); r.status {
				case http.StatusCreated:
					created.Add(1)
				case http.StatusUnprocessableEntity:
					refused.Add(1)
				default:
					t.Errorf("%d %s", r.status, r.body)
				}
			})
		}
		wg.Wait()
		if created.Load() != domain.MaxActiveCredentials-1 || refused.Load() != 30-(domain.MaxActiveCredentials-1) {
			t.Fatalf("%d created, %d refused; want %d and %d", created.Load(), refused.Load(), domain.MaxActiveCredentials-1, 30-(domain.MaxActiveCredentials-1))
		}
		r := e.do("GET", "/auth/credentials", tok, nil)
		if n := strings.Count(string(r.body), `"client_id"`); n != domain.MaxActiveCredentials {
			t.Fatalf("%d credentials listed, want %d", n, domain.MaxActiveCredentials)
		}
	})
}

func TestTokenRequestsNameTheirScopes(t *testing.T) {
	e := newEnv(t, nil)
	acc := e.tkAccount()
	narrow := e.tkAccount(domain.ScopeTransactionRead)

	for _, c := range []struct {
		name, path, scope, want string
	}{
		{"comma-separated on /auth/token: exactly those, comma-separated", "/auth/token", "balance:read,transaction:read", "transaction:read,balance:read"},
		{"space-separated on /auth/token", "/auth/token", "balance:read transaction:read", "transaction:read,balance:read"},
		{"comma-separated on /oauth/token: space-separated back", "/oauth/token", "balance:read,transaction:read", "transaction:read balance:read"},
		{"space-separated on /oauth/token", "/oauth/token", "account:admin", "account:admin"},
	} {
		t.Run(c.name, func(t *testing.T) {
			tok, scope := tkAccessToken(t, e.tkForm(c.path, tkCreds(acc.Credential, "scope", c.scope)))
			if scope != c.want {
				t.Fatalf("scope = %q, want %q", scope, c.want)
			}
			_, claims := secSplit(t, tok)
			if got := strings.ReplaceAll(c.want, " ", ","); claims["scope"] != got {
				t.Fatalf("the token's scope claim is %v, want %q", claims["scope"], got)
			}
		})
	}
	t.Run("GET /auth/token takes scope in the query", func(t *testing.T) {
		tok, scope := tkAccessToken(t, e.do("GET", "/auth/token?scope=balance:read", "", nil, "Authorization", tkBasic(acc.Credential)))
		if scope != "balance:read" {
			t.Fatalf("scope = %q", scope)
		}
		problemOf(t, e.do("GET", "/transaction", tok, nil), http.StatusForbidden, "insufficient_scope")
		if r := e.do("GET", "/balance", tok, nil); r.status != http.StatusOK {
			t.Fatalf("%d %s", r.status, r.body)
		}
	})
	t.Run("without scope the token carries every scope of the account", func(t *testing.T) {
		if _, scope := tkAccessToken(t, e.tkForm("/oauth/token", tkCreds(narrow.Credential))); scope != "transaction:read" {
			t.Fatalf("scope = %q", scope)
		}
	})
	for _, c := range []struct {
		name  string
		form  url.Values
		code  string
		state int
	}{
		{"an unknown scope answers 400 invalid_scope", tkCreds(acc.Credential, "scope", "transaction:read admin"), "invalid_scope", 400},
		{"a scope in the wrong case is unknown", tkCreds(acc.Credential, "scope", "Balance:Read"), "invalid_scope", 400},
		{"an empty scope answers 400 invalid_scope", tkCreds(acc.Credential, "scope", ""), "invalid_scope", 400},
		{"a scope the account does not hold answers 400 invalid_scope", tkCreds(narrow.Credential, "scope", "transaction:read withdrawal:write"), "invalid_scope", 400},
		{"a wrong secret asking for a scope the account lacks learns only invalid_client", url.Values{"client_id": {narrow.Credential.ClientID}, "client_secret": {"wrong-secret"}, "scope": {"withdrawal:write"}}, "invalid_client", 401},
		{"scope sent twice answers 400 invalid_request", url.Values{"client_id": {acc.Credential.ClientID}, "client_secret": {acc.Credential.Secret}, "scope": {"balance:read", "account:admin"}}, "invalid_request", 400},
	} {
		for _, path := range []string{"/auth/token", "/oauth/token"} {
			t.Run(path+": "+c.name, func(t *testing.T) {
				tkTokenError(t, e.tkForm(path, c.form), c.state, c.code)
			})
		}
	}
}

func TestOAuthTokenEndpointAnswersAsRFC6749Says(t *testing.T) {
	e := newEnv(t, map[string]string{"PIXGATE_TOKEN_TTL": "900"})
	acc := e.tkAccount(domain.ScopeTransactionRead, domain.ScopeBalanceRead)

	for name, r := range map[string]response{
		"form":  e.tkForm("/oauth/token", tkCreds(acc.Credential, "grant_type", "client_credentials")),
		"basic": e.tkForm("/oauth/token", url.Values{"grant_type": {"client_credentials"}}, "Authorization", tkBasic(acc.Credential)),
	} {
		t.Run("client_secret_"+name+" gets a lifetime in expires_in and a space-separated scope", func(t *testing.T) {
			if r.status != http.StatusOK || r.header.Get("Cache-Control") != "no-store" || r.header.Get("Pragma") != "no-cache" {
				t.Fatalf("%d %v %s", r.status, r.header, r.body)
			}
			var body map[string]any
			if err := json.Unmarshal(r.body, &body); err != nil {
				t.Fatal(err)
			}
			want := map[string]any{"token_type": "Bearer", "expires_in": float64(900), "scope": "transaction:read balance:read"}
			for k, v := range want {
				if body[k] != v {
					t.Errorf("%s = %v, want %v", k, body[k], v)
				}
			}
			if len(body) != 4 || body["access_token"] == "" {
				t.Fatalf("body %s, want exactly access_token, token_type, expires_in and scope", r.body)
			}
			if g := e.do("GET", "/transaction", body["access_token"].(string), nil); g.status != http.StatusOK {
				t.Fatalf("the token: %d %s", g.status, g.body)
			}
		})
	}
	t.Run("/auth/token keeps the Unix time of docs/API.md, Token endpoints", func(t *testing.T) {
		m := e.tkForm("/auth/token", tkCreds(acc.Credential)).json(t)
		if exp := m["expires_in"].(float64); exp < float64(time.Now().Unix()) || m["expires_in_sec"] != float64(900) {
			t.Fatalf("body %v", m)
		}
	})
	t.Run("the same refusals as /auth/token", func(t *testing.T) {
		r := e.tkForm("/oauth/token", url.Values{"grant_type": {"client_credentials"}}, "Authorization",
			tkBasic(application.NewCredential{ClientID: acc.Credential.ClientID, Secret: "wrong"}))
		tkTokenError(t, r, http.StatusUnauthorized, "invalid_client")
		if !strings.HasPrefix(r.header.Get("WWW-Authenticate"), "Basic") {
			t.Fatalf("WWW-Authenticate = %q", r.header.Get("WWW-Authenticate"))
		}
		tkTokenError(t, e.tkForm("/oauth/token", tkCreds(acc.Credential, "grant_type", "password")), http.StatusBadRequest, "unsupported_grant_type")
		tkTokenError(t, e.tkForm("/oauth/token", url.Values{"client_secret": {"x"}}), http.StatusBadRequest, "invalid_request")
		tkTokenError(t, e.do("POST", "/oauth/token?client_secret=x", "", tkCreds(acc.Credential).Encode(), "Content-Type", "application/x-www-form-urlencoded"), http.StatusBadRequest, "invalid_request")
		// POST only, as RFC 6749 section 3.2 says.
		if r := e.do("GET", "/oauth/token", "", nil, "Authorization", tkBasic(acc.Credential)); r.status == http.StatusOK {
			t.Fatalf("GET /oauth/token issued a token: %s", r.body)
		}
	})
}

func TestAuthorizationServerMetadata(t *testing.T) {
	t.Run("under the address the request came to", func(t *testing.T) {
		e := newEnv(t, nil)
		r := e.do("GET", "/.well-known/oauth-authorization-server", "", nil, "Authorization", "Bearer garbage")
		if r.status != http.StatusOK {
			t.Fatalf("%d %s", r.status, r.body)
		}
		var md struct {
			Issuer        string   `json:"issuer"`
			TokenEndpoint string   `json:"token_endpoint"`
			JWKSURI       string   `json:"jwks_uri"`
			Grants        []string `json:"grant_types_supported"`
			AuthMethods   []string `json:"token_endpoint_auth_methods_supported"`
			Scopes        []string `json:"scopes_supported"`
		}
		if err := json.Unmarshal(r.body, &md); err != nil {
			t.Fatal(err)
		}
		var all []string
		for _, s := range domain.AllScopes() {
			all = append(all, string(s))
		}
		if md.Issuer != "pixgate" || md.TokenEndpoint != e.srv.URL+"/oauth/token" || md.JWKSURI != e.srv.URL+"/.well-known/jwks.json" ||
			!slices.Equal(md.Grants, []string{"client_credentials"}) ||
			!slices.Equal(md.AuthMethods, []string{"client_secret_basic", "client_secret_post"}) || !slices.Equal(md.Scopes, all) {
			t.Fatalf("metadata %s", r.body)
		}
		keys, err := http.Get(md.JWKSURI)
		if err != nil || keys.StatusCode != http.StatusOK {
			t.Fatalf("jwks_uri: %v %v", keys, err)
		}
		_ = keys.Body.Close()
	})
	t.Run("under the issuer when it is a URL", func(t *testing.T) {
		e := newEnv(t, map[string]string{"PIXGATE_JWT_ISSUER": "https://api.pixgate.example/"})
		m := e.do("GET", "/.well-known/oauth-authorization-server", "", nil).json(t)
		if m["issuer"] != "https://api.pixgate.example/" || m["token_endpoint"] != "https://api.pixgate.example/oauth/token" ||
			m["jwks_uri"] != "https://api.pixgate.example/.well-known/jwks.json" {
			t.Fatalf("metadata %v", m)
		}
	})
}

// TestClientCredentialsRenewsOnTime points golang.org/x/oauth2's clientcredentials, unchanged,
// at the metadata's token endpoint with a 12 s token lifetime. The library renews a token 10 s
// before it expires, so each token serves it about 2 s: a client that read expires_in as a
// lifetime renews every 2 s, one that read it as a Unix time (as from /auth/token) would keep
// its first token for decades and meet 401 once it expired.
func TestClientCredentialsRenewsOnTime(t *testing.T) {
	t.Parallel()
	e := newEnv(t, map[string]string{"PIXGATE_TOKEN_TTL": "12"})
	acc := e.tkAccount()
	md := e.do("GET", "/.well-known/oauth-authorization-server", "", nil).json(t)

	var mu sync.Mutex
	var fetched []time.Time
	copied := *e.srv.Client()
	counting := &copied
	inner := counting.Transport
	counting.Transport = roundTripFunc(func(r *http.Request) (*http.Response, error) {
		if r.URL.Path == "/oauth/token" {
			mu.Lock()
			fetched = append(fetched, time.Now())
			mu.Unlock()
		}
		return inner.RoundTrip(r)
	})
	ctx := context.WithValue(context.Background(), oauth2.HTTPClient, counting)
	cfg := clientcredentials.Config{ClientID: acc.Credential.ClientID, ClientSecret: acc.Credential.Secret,
		TokenURL: md["token_endpoint"].(string), Scopes: []string{"transaction:read", "balance:read"}}
	client := cfg.Client(ctx)

	start := time.Now()
	tokens := map[string]bool{}
	for time.Since(start) < 4500*time.Millisecond {
		res, err := client.Get(e.srv.URL + "/balance")
		if err != nil {
			t.Fatal(err)
		}
		tokens[res.Request.Header.Get("Authorization")] = true
		_ = res.Body.Close()
		if res.StatusCode != http.StatusOK {
			t.Fatalf("after %s: %d", time.Since(start), res.StatusCode)
		}
		time.Sleep(100 * time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(fetched) < 2 || len(fetched) > 4 || len(tokens) != len(fetched) {
		t.Fatalf("%d token requests and %d distinct tokens in 4.5 s, want one every ~2 s", len(fetched), len(tokens))
	}
	if gap := fetched[1].Sub(fetched[0]); gap < 1500*time.Millisecond || gap > 3*time.Second {
		t.Fatalf("the client renewed its token after %s, want about 2 s (12 s less its 10 s margin)", gap)
	}

	t.Run("the same library reads /auth/token's expires_in as decades", func(t *testing.T) {
		legacy := clientcredentials.Config{ClientID: acc.Credential.ClientID, ClientSecret: acc.Credential.Secret,
			TokenURL: e.srv.URL + "/auth/token"}
		tok, err := legacy.Token(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if tok.Expiry.Before(time.Now().AddDate(10, 0, 0)) {
			t.Fatalf("expiry %v: the comparison no longer shows why /oauth/token exists", tok.Expiry)
		}
	})
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func TestTokenRequestsAreLimited(t *testing.T) {
	t.Run("per client_id: 429 slow_down with Retry-After, other clients unaffected", func(t *testing.T) {
		e := newEnv(t, map[string]string{"PIXGATE_TOKEN_RATE_LIMIT_RPS": "0.5", "PIXGATE_TOKEN_RATE_LIMIT_BURST": "2"})
		busy, calm := e.tkAccount(), e.tkAccount()
		tkAccessToken(t, e.tkForm("/auth/token", tkCreds(busy.Credential)))
		tkAccessToken(t, e.tkForm("/oauth/token", tkCreds(busy.Credential)))
		for _, path := range []string{"/auth/token", "/oauth/token"} {
			r := e.tkForm(path, tkCreds(busy.Credential))
			tkTokenError(t, r, http.StatusTooManyRequests, "slow_down")
			if s, err := strconv.Atoi(r.header.Get("Retry-After")); err != nil || s < 1 || s > 2 {
				t.Fatalf("Retry-After = %q, want 1 or 2 s (one token every 2 s)", r.header.Get("Retry-After"))
			}
		}
		tkTokenError(t, e.do("GET", "/auth/token", "", nil, "Authorization", tkBasic(busy.Credential)), http.StatusTooManyRequests, "slow_down")
		tkAccessToken(t, e.tkForm("/auth/token", tkCreds(calm.Credential)))
	})
	t.Run("per address: failures spend the budget, successes do not", func(t *testing.T) {
		e := newEnv(t, map[string]string{"PIXGATE_TOKEN_FAILURE_LIMIT": "3"})
		acc := e.tkAccount()
		for range 10 {
			tkAccessToken(t, e.tkForm("/auth/token", tkCreds(acc.Credential)))
		}
		tkTokenError(t, e.tkForm("/auth/token", url.Values{"client_id": {acc.Credential.ClientID}, "client_secret": {"guess-1"}}), http.StatusUnauthorized, "invalid_client")
		tkTokenError(t, e.tkForm("/oauth/token", url.Values{"client_id": {"nobody"}, "client_secret": {"guess-2"}}), http.StatusUnauthorized, "invalid_client")
		tkTokenError(t, e.tkForm("/auth/token", tkCreds(acc.Credential, "scope", "root")), http.StatusBadRequest, "invalid_scope")
		// The budget is spent: even the right secret waits, since a guess cannot be told apart
		// before the secret is checked.
		r := e.tkForm("/auth/token", tkCreds(acc.Credential))
		tkTokenError(t, r, http.StatusTooManyRequests, "slow_down")
		if s, err := strconv.Atoi(r.header.Get("Retry-After")); err != nil || s < 1 || s > 20 {
			t.Fatalf("Retry-After = %q, want at most 20 s (3 failures a minute)", r.header.Get("Retry-After"))
		}
		tkTokenError(t, e.tkForm("/oauth/token", url.Values{"client_id": {"nobody"}, "client_secret": {"guess-3"}}), http.StatusTooManyRequests, "slow_down")
		if r := e.do("GET", "/.well-known/oauth-authorization-server", "", nil); r.status != http.StatusOK {
			t.Fatalf("the metadata is not a token request and is not limited: %d", r.status)
		}
	})
}

// tkFormFrom posts form to a token endpoint from the loopback address 127.0.0.host. The token
// limits count the TCP peer's address (forwarding headers are not trusted), and on Linux all of
// 127.0.0.0/8 reaches the loopback interface: each host is another client address, over real
// HTTP.
func (e *env) tkFormFrom(host byte, path string, form url.Values) response {
	e.t.Helper()
	dialer := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, host)}, Timeout: 10 * time.Second}
	transport := &http.Transport{DialContext: dialer.DialContext, DisableKeepAlives: true}
	defer transport.CloseIdleConnections()
	req, err := http.NewRequest("POST", e.srv.URL+path, strings.NewReader(form.Encode()))
	if err != nil {
		e.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	res, err := (&http.Client{Transport: transport, Timeout: time.Minute}).Do(req)
	if err != nil {
		if runtime.GOOS != "linux" {
			e.t.Skipf("sending from 127.0.0.%d: %v (only Linux routes all of 127.0.0.0/8 to loopback)", host, err)
		}
		e.t.Fatalf("POST %s from 127.0.0.%d: %v", path, host, err)
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	if err != nil {
		e.t.Fatal(err)
	}
	return response{status: res.StatusCode, header: res.Header, body: raw}
}

// TestTokenLimitsCannotBeTurnedAgainstAClient: a client_id is no secret (it is in every token),
// so whoever knows one can send wrong secrets for it from many addresses, each within its own
// failure budget. Those guesses must neither keep the right secret from its token nor be
// checked faster than the client_id's failure budget allows.
func TestTokenLimitsCannotBeTurnedAgainstAClient(t *testing.T) {
	t.Parallel()
	frozen := func(a *app) { a.clock = &fakeClock{at: time.Now().UTC()} }
	advance := func(e *env, d time.Duration) { e.app.clock.(*fakeClock).Advance(d) }
	wrong := func(clientID string, n int) url.Values {
		return url.Values{"client_id": {clientID}, "client_secret": {fmt.Sprintf("guess-%d", n)}}
	}

	t.Run("ten addresses guessing once a second each do not lock the right secret out", func(t *testing.T) {
		t.Parallel()
		// The defaults: 10 token requests a second per client_id with bursts of 20, 60 failures
		// a minute per address and per client_id.
		e := newEnv(t, map[string]string{"PIXGATE_TOKEN_RATE_LIMIT_RPS": "10", "PIXGATE_TOKEN_RATE_LIMIT_BURST": "20",
			"PIXGATE_TOKEN_FAILURE_LIMIT": "60"}, frozen)
		victim := e.tkAccount()
		answers := map[string]int{}
		guess := func(host byte, n int) {
			r := e.tkFormFrom(host, "/oauth/token", wrong(victim.Credential.ClientID, n))
			answers[fmt.Sprintf("%d %s", r.status, r.json(t)["error"])]++
		}
		guesses := 0
		for host := byte(10); host < 20; host++ { // two guesses each: the size of the client's burst
			guess(host, guesses)
			guess(host, guesses+1)
			guesses += 2
		}
		refused := 0
		for second := range 12 {
			for host := byte(10); host < 20; host++ { // one guess a second from each, 100 ms apart
				advance(e, 100*time.Millisecond)
				guess(host, guesses)
				guesses++
			}
			if r := e.tkFormFrom(2, "/oauth/token", tkCreds(victim.Credential)); r.status != http.StatusOK {
				refused++
				t.Logf("second %d: the right secret answered %d %s", second, r.status, r.body)
			}
		}
		if refused > 0 {
			t.Fatalf("the right secret was refused %d times in 12 while other addresses guessed", refused)
		}
		// Each address stayed within its own budget (14 failures); the client_id's budget (60
		// a minute, so 72 in these 12 s) is all the guesses that were checked.
		if answers["401 invalid_client"] > 72 || answers["401 invalid_client"]+answers["429 slow_down"] != guesses {
			t.Fatalf("%d guesses answered %v; want at most 72 checked (401), the rest 429 slow_down", guesses, answers)
		}
	})

	t.Run("wrong secrets spend nothing of the client_id's rate, the right secret does", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, map[string]string{"PIXGATE_TOKEN_RATE_LIMIT_RPS": "0.001", "PIXGATE_TOKEN_RATE_LIMIT_BURST": "2",
			"PIXGATE_TOKEN_FAILURE_LIMIT": "60"}, frozen)
		victim := e.tkAccount()
		for host := byte(10); host < 15; host++ {
			if r := e.tkFormFrom(host, "/auth/token", wrong(victim.Credential.ClientID, int(host))); r.status != http.StatusUnauthorized {
				t.Fatalf("guess from 127.0.0.%d: %d %s, want 401", host, r.status, r.body)
			}
		}
		tkAccessToken(t, e.tkFormFrom(2, "/oauth/token", tkCreds(victim.Credential)))
		tkAccessToken(t, e.tkFormFrom(3, "/auth/token", tkCreds(victim.Credential)))
		r := e.tkFormFrom(2, "/oauth/token", tkCreds(victim.Credential))
		tkTokenError(t, r, http.StatusTooManyRequests, "slow_down")
		if !strings.Contains(r.json(t)["error_description"].(string), "reuse the token") {
			t.Fatalf("the client's own rate answered %s", r.body)
		}
	})

	t.Run("past the client_id's failure budget guesses answer 429 slow_down, unknown or known, and the right secret 200", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, map[string]string{"PIXGATE_TOKEN_FAILURE_LIMIT": "3"}, frozen) // one failure every 20 s
		victim := e.tkAccount()
		type answer struct {
			status     int
			error      string
			retryAfter string
		}
		read := func(r response) answer {
			return answer{r.status, fmt.Sprint(r.json(t)["error"]), r.header.Get("Retry-After")}
		}
		// The same guesses against the victim and against a client_id nobody holds, each from
		// addresses of its own: an outsider must not tell them apart.
		run := func(clientID string, first byte) []answer {
			var out []answer
			for host := first; host < first+5; host++ { // three spend the budget, two come after it
				out = append(out, read(e.tkFormFrom(host, "/oauth/token", wrong(clientID, int(host)))))
			}
			// An address that guessed gets no further guess checked, not even one that happens
			// to be right: it could not tell the right secret from the others.
			out = append(out, read(e.tkFormFrom(first, "/oauth/token", wrong(clientID, 99))))
			return out
		}
		known := run(victim.Credential.ClientID, 10)
		unknown := run("c0ffee00-0000-4000-8000-000000000000", 30)
		want := []answer{{401, "invalid_client", ""}, {401, "invalid_client", ""}, {401, "invalid_client", ""},
			{429, "slow_down", "20"}, {429, "slow_down", "20"}, {429, "slow_down", "20"}}
		if !slices.Equal(known, want) || !slices.Equal(unknown, want) {
			t.Fatalf("guesses answered\n%v for the client\n%v for an unknown client_id\nwant %v", known, unknown, want)
		}
		tkTokenError(t, e.tkFormFrom(10, "/oauth/token", tkCreds(victim.Credential)), http.StatusTooManyRequests, "slow_down")

		tkAccessToken(t, e.tkFormFrom(2, "/oauth/token", tkCreds(victim.Credential)))
		tkAccessToken(t, e.tkFormFrom(3, "/auth/token", tkCreds(victim.Credential)))

		// 20 s later the budget holds one failure again: one more guess is checked.
		advance(e, 20*time.Second)
		if got := read(e.tkFormFrom(11, "/oauth/token", wrong(victim.Credential.ClientID, 100))); got != (answer{401, "invalid_client", ""}) {
			t.Fatalf("a guess once the budget refilled: %v, want it checked (401)", got)
		}
		if got := read(e.tkFormFrom(15, "/oauth/token", wrong(victim.Credential.ClientID, 101))); got.status != http.StatusTooManyRequests {
			t.Fatalf("the guess after it: %v, want 429", got)
		}
	})
}

func TestWithAnUpstreamProviderTheScopeIsPassedOnAndTheMetadataNamesItsKeys(t *testing.T) {
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
	r := e.tkForm("/oauth/token", tkCreds(acc.Credential, "scope", "transaction:read"))
	if body := r.json(t); r.status != http.StatusOK || body["scope"] != "transaction:read" || body["expires_in"] != float64(300) {
		t.Fatalf("%d %s", r.status, r.body)
	}
	tkTokenError(t, e.tkForm("/oauth/token", tkCreds(acc.Credential, "scope", "withdrawal:write")), http.StatusBadRequest, "invalid_scope")
	mu.Lock()
	defer mu.Unlock()
	if len(asked) != 2 || asked[0] != "transaction:read" || asked[1] != "withdrawal:write" {
		t.Fatalf("the upstream was asked for %q", asked)
	}
}
