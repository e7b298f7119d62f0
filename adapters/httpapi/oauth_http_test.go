package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
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

	"github.com/pixgate/pixgate/adapters/httpapi/apitest"
	"github.com/pixgate/pixgate/application"
	"github.com/pixgate/pixgate/domain"
)

// Least privilege, the token endpoints' scope parameter, /oauth/token and its metadata, and
// the token limits, over real HTTP (docs/API.md, OAuth clients). Helpers here start with "tk".

var tkTimestamp = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$`)

// tkClock is a stopped clock at a whole second, for the tests whose limits or records count
// time.
func tkClock() *fakeClock { return newFakeClock(time.Now().UTC().Truncate(time.Second)) }

// tkCreds is the client_credentials form of c, as apitest.Credentials.
func tkCreds(c application.NewCredential, more ...string) url.Values {
	return apitest.Credentials(c.ClientID, c.Secret, more...)
}

// tkTokenError checks an RFC 6749 error answer, as apitest.TokenError.
func tkTokenError(t *testing.T, r response, status int, code string) {
	t.Helper()
	apitest.TokenError(t, r.api(), status, code)
}

// tkAccessToken reads a successful token answer, as apitest.AccessToken.
func tkAccessToken(t *testing.T, r response) (token, scope string) {
	t.Helper()
	return apitest.AccessToken(t, r.api())
}

func TestAccountAdminGuardsCredentialsAndTheWebhookSecret(t *testing.T) {
	t.Parallel()
	a := newAPI(t)
	acc := a.newAccount()
	reporting, scope := tkAccessToken(t, a.postForm("/auth/token", tkCreds(acc.Credential, "scope", "transaction:read balance:read")))
	if scope != "transaction:read,balance:read" {
		t.Fatalf("scope = %q", scope)
	}
	admin, _ := tkAccessToken(t, a.postForm("/auth/token", tkCreds(acc.Credential, "scope", "account:admin")))

	routes := []struct{ method, path string }{
		{"POST", "/auth/credentials"}, {"GET", "/auth/credentials"},
		{"DELETE", "/auth/credentials/" + acc.Credential.ClientID},
		{"GET", "/webhook/secret"}, {"POST", "/webhook/secret/rotate"},
	}
	// The refusals first, all at once; then what they must have left alone.
	t.Run("refused", func(t *testing.T) {
		for _, rt := range routes {
			t.Run(rt.method+" "+rt.path+" answers 403 insufficient_scope to a reporting token", func(t *testing.T) {
				t.Parallel()
				r := a.do(rt.method, rt.path, reporting, nil)
				problem(t, r, http.StatusForbidden, "insufficient_scope")
				if got := r.header.Get("WWW-Authenticate"); got != `Bearer error="insufficient_scope", scope="account:admin"` {
					t.Fatalf("WWW-Authenticate = %q", got)
				}
			})
		}
		t.Run("the reporting token still reads what it was made for", func(t *testing.T) {
			t.Parallel()
			if r := a.do("GET", "/balance", reporting, nil); r.status != http.StatusOK {
				t.Fatalf("%d %s", r.status, r.body)
			}
		})
	})
	t.Run("nothing changed: one credential, the same webhook secret", func(t *testing.T) {
		list := a.do("GET", "/auth/credentials", admin, nil)
		if list.status != http.StatusOK || strings.Count(string(list.body), `"client_id"`) != 1 || strings.Contains(string(list.body), `"revokedAt":"`) {
			t.Fatalf("%d %s", list.status, list.body)
		}
		r := a.do("GET", "/webhook/secret", admin, nil)
		if r.status != http.StatusOK || r.json(t)["secret"] != acc.Account.Webhook().Current || r.json(t)["previousSecret"] != nil {
			t.Fatalf("%d %s", r.status, r.body)
		}
	})
	t.Run("a token of account:admin alone manages the account and nothing else", func(t *testing.T) {
		if r := a.do("POST", "/auth/credentials", admin, nil); r.status != http.StatusCreated {
			t.Fatalf("%d %s", r.status, r.body)
		}
		problem(t, a.do("GET", "/balance", admin, nil), http.StatusForbidden, "insufficient_scope")
	})
}

// TestCredentialListShowsNewestFirstWithLastUseAndNoSecret runs on a stopped clock: a use is
// recorded at most once a minute, and the clock moves past the second of the first one
// without waiting.
func TestCredentialListShowsNewestFirstWithLastUseAndNoSecret(t *testing.T) {
	t.Parallel()
	clock := tkClock()
	a := newAPI(t, apiSettings{Clock: clock})
	acc := a.newAccount()
	_, admin := a.account() // an account of its own: its token must not see acc's credentials
	first := acc.Credential

	type item struct {
		ClientID   string  `json:"client_id"`
		CreatedAt  string  `json:"createdAt"`
		LastUsedAt *string `json:"lastUsedAt"`
		RevokedAt  *string `json:"revokedAt"`
	}
	list := func(t *testing.T, token string) []item {
		t.Helper()
		r := a.do("GET", "/auth/credentials", token, nil)
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

	before := clock.Now().Add(-time.Second)
	tok, _ := tkAccessToken(t, a.postForm("/auth/token", tkCreds(first)))
	got := list(t, tok)
	if len(got) != 1 || got[0].ClientID != first.ClientID || !tkTimestamp.MatchString(got[0].CreatedAt) ||
		got[0].LastUsedAt == nil || !tkTimestamp.MatchString(*got[0].LastUsedAt) || got[0].RevokedAt != nil {
		t.Fatalf("after one token: %+v, want the credential with its last use", got)
	}
	used, _ := time.Parse(time.RFC3339, *got[0].LastUsedAt)
	if used.Before(before) || used.After(clock.Now().Add(time.Second)) {
		t.Fatalf("lastUsedAt %v is not the token's time", used)
	}

	t.Run("more tokens within the minute record nothing new", func(t *testing.T) {
		clock.Advance(1100 * time.Millisecond) // past the second the first use was recorded in
		for range 3 {
			tkAccessToken(t, a.postForm("/auth/token", tkCreds(first)))
		}
		if again := list(t, tok); *again[0].LastUsedAt != *got[0].LastUsedAt {
			t.Fatalf("lastUsedAt moved from %s to %s within the minute", *got[0].LastUsedAt, *again[0].LastUsedAt)
		}
	})

	r := a.do("POST", "/auth/credentials", tok, nil)
	if r.status != http.StatusCreated {
		t.Fatalf("create: %d %s", r.status, r.body)
	}
	second := application.NewCredential{ClientID: r.json(t)["client_id"].(string), Secret: r.json(t)["client_secret"].(string)}
	secondTok, _ := tkAccessToken(t, a.postForm("/auth/token", tkCreds(second)))
	if r := a.do("DELETE", "/auth/credentials/"+first.ClientID, secondTok, nil); r.status != http.StatusNoContent {
		t.Fatalf("revoke: %d %s", r.status, r.body)
	}
	got = list(t, secondTok)
	if len(got) != 2 || got[0].ClientID != second.ClientID || got[1].ClientID != first.ClientID {
		t.Fatalf("list %+v, want the new credential first", got)
	}
	if got[0].RevokedAt != nil || got[1].RevokedAt == nil || !tkTimestamp.MatchString(*got[1].RevokedAt) || got[0].LastUsedAt == nil {
		t.Fatalf("list %+v, want the first revoked and the second used", got)
	}
	if others := list(t, admin); len(others) != 1 || others[0].ClientID == first.ClientID || others[0].ClientID == second.ClientID {
		t.Fatalf("another account's token lists %+v", others)
	}
}

func TestAnAccountHoldsAtMostTenActiveCredentials(t *testing.T) {
	t.Parallel()
	a := newAPI(t)

	t.Run("the eleventh answers 422 limit_exceeded until one is revoked", func(t *testing.T) {
		t.Parallel()
		_, tok := a.account()
		var made []string
		for range domain.MaxActiveCredentials - 1 {
			r := a.do("POST", "/auth/credentials", tok, nil)
			if r.status != http.StatusCreated {
				t.Fatalf("%d %s", r.status, r.body)
			}
			made = append(made, r.json(t)["client_id"].(string))
		}
		problem(t, a.do("POST", "/auth/credentials", tok, nil), http.StatusUnprocessableEntity, "limit_exceeded")
		if r := a.do("DELETE", "/auth/credentials/"+made[0], tok, nil); r.status != http.StatusNoContent {
			t.Fatalf("%d %s", r.status, r.body)
		}
		if r := a.do("POST", "/auth/credentials", tok, nil); r.status != http.StatusCreated {
			t.Fatalf("after a revocation: %d %s", r.status, r.body)
		}
		problem(t, a.do("POST", "/auth/credentials", tok, nil), http.StatusUnprocessableEntity, "limit_exceeded")
	})

	t.Run("thirty concurrent creations leave exactly ten active", func(t *testing.T) {
		t.Parallel()
		_, tok := a.account()
		var created, refused atomic.Int32
		var wg sync.WaitGroup
		for range 30 {
			wg.Go(func() {
				switch r := a.do("POST", "/auth/credentials", tok, nil); r.status {
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
		r := a.do("GET", "/auth/credentials", tok, nil)
		if n := strings.Count(string(r.body), `"client_id"`); n != domain.MaxActiveCredentials {
			t.Fatalf("%d credentials listed, want %d", n, domain.MaxActiveCredentials)
		}
	})
}

func TestTokenRequestsNameTheirScopes(t *testing.T) {
	t.Parallel()
	a := newAPI(t)
	acc := a.newAccount()
	narrow := a.newAccount(domain.ScopeTransactionRead)

	for _, c := range []struct {
		name, path, scope, want string
	}{
		{"comma-separated on /auth/token: exactly those, comma-separated", "/auth/token", "balance:read,transaction:read", "transaction:read,balance:read"},
		{"space-separated on /auth/token", "/auth/token", "balance:read transaction:read", "transaction:read,balance:read"},
		{"comma-separated on /oauth/token: space-separated back", "/oauth/token", "balance:read,transaction:read", "transaction:read balance:read"},
		{"space-separated on /oauth/token", "/oauth/token", "account:admin", "account:admin"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			tok, scope := tkAccessToken(t, a.postForm(c.path, tkCreds(acc.Credential, "scope", c.scope)))
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
		t.Parallel()
		tok, scope := tkAccessToken(t, a.do("GET", "/auth/token?scope=balance:read", "", nil, "Authorization", basicAuth(acc.Credential.ClientID, acc.Credential.Secret)))
		if scope != "balance:read" {
			t.Fatalf("scope = %q", scope)
		}
		problem(t, a.do("GET", "/transaction", tok, nil), http.StatusForbidden, "insufficient_scope")
		if r := a.do("GET", "/balance", tok, nil); r.status != http.StatusOK {
			t.Fatalf("%d %s", r.status, r.body)
		}
	})
	t.Run("without scope the token carries every scope of the account", func(t *testing.T) {
		t.Parallel()
		if _, scope := tkAccessToken(t, a.postForm("/oauth/token", tkCreds(narrow.Credential))); scope != "transaction:read" {
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
				t.Parallel()
				tkTokenError(t, a.postForm(path, c.form), c.state, c.code)
			})
		}
	}
}

func TestOAuthTokenEndpointAnswersAsRFC6749Says(t *testing.T) {
	t.Parallel()
	a := newAPI(t, apiSettings{TokenTTL: 900 * time.Second})
	acc := a.newAccount(domain.ScopeTransactionRead, domain.ScopeBalanceRead)

	for name, r := range map[string]response{
		"form":  a.postForm("/oauth/token", tkCreds(acc.Credential, "grant_type", "client_credentials")),
		"basic": a.postForm("/oauth/token", url.Values{"grant_type": {"client_credentials"}}, "Authorization", basicAuth(acc.Credential.ClientID, acc.Credential.Secret)),
	} {
		t.Run("client_secret_"+name+" gets a lifetime in expires_in and a space-separated scope", func(t *testing.T) {
			t.Parallel()
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
			if g := a.do("GET", "/transaction", body["access_token"].(string), nil); g.status != http.StatusOK {
				t.Fatalf("the token: %d %s", g.status, g.body)
			}
		})
	}
	t.Run("/auth/token keeps the Unix time of docs/API.md, Token endpoints", func(t *testing.T) {
		t.Parallel()
		m := a.postForm("/auth/token", tkCreds(acc.Credential)).json(t)
		if exp := m["expires_in"].(float64); exp < float64(time.Now().Unix()) || m["expires_in_sec"] != float64(900) {
			t.Fatalf("body %v", m)
		}
	})
	t.Run("the same refusals as /auth/token", func(t *testing.T) {
		t.Parallel()
		r := a.postForm("/oauth/token", url.Values{"grant_type": {"client_credentials"}}, "Authorization",
			basicAuth(acc.Credential.ClientID, "wrong"))
		tkTokenError(t, r, http.StatusUnauthorized, "invalid_client")
		if !strings.HasPrefix(r.header.Get("WWW-Authenticate"), "Basic") {
			t.Fatalf("WWW-Authenticate = %q", r.header.Get("WWW-Authenticate"))
		}
		tkTokenError(t, a.postForm("/oauth/token", tkCreds(acc.Credential, "grant_type", "password")), http.StatusBadRequest, "unsupported_grant_type")
		tkTokenError(t, a.postForm("/oauth/token", url.Values{"client_secret": {"x"}}), http.StatusBadRequest, "invalid_request")
		tkTokenError(t, a.do("POST", "/oauth/token?client_secret=x", "", tkCreds(acc.Credential).Encode(), "Content-Type", "application/x-www-form-urlencoded"), http.StatusBadRequest, "invalid_request")
		// POST only, as RFC 6749 section 3.2 says.
		if r := a.do("GET", "/oauth/token", "", nil, "Authorization", basicAuth(acc.Credential.ClientID, acc.Credential.Secret)); r.status == http.StatusOK {
			t.Fatalf("GET /oauth/token issued a token: %s", r.body)
		}
	})
}

func TestAuthorizationServerMetadata(t *testing.T) {
	t.Parallel()
	t.Run("under the address the request came to", func(t *testing.T) {
		t.Parallel()
		a := newAPI(t)
		r := a.do("GET", "/.well-known/oauth-authorization-server", "", nil, "Authorization", "Bearer garbage")
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
		if md.Issuer != "pixgate" || md.TokenEndpoint != a.srv.URL+"/oauth/token" || md.JWKSURI != a.srv.URL+"/.well-known/jwks.json" ||
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
		t.Parallel()
		a := newAPI(t, apiSettings{JWTIssuer: "https://api.pixgate.example/"})
		m := a.do("GET", "/.well-known/oauth-authorization-server", "", nil).json(t)
		if m["issuer"] != "https://api.pixgate.example/" || m["token_endpoint"] != "https://api.pixgate.example/oauth/token" ||
			m["jwks_uri"] != "https://api.pixgate.example/.well-known/jwks.json" {
			t.Fatalf("metadata %v", m)
		}
	})
}

// tkRoundTrip is an http.RoundTripper of a function.
type tkRoundTrip func(*http.Request) (*http.Response, error)

func (f tkRoundTrip) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// tkCountingClient is the API's client with each request to /oauth/token counted.
func (a *api) tkCountingClient() (*http.Client, func() int) {
	var fetched atomic.Int32
	copied := *a.srv.Client()
	inner := copied.Transport
	copied.Transport = tkRoundTrip(func(r *http.Request) (*http.Response, error) {
		if r.URL.Path == "/oauth/token" {
			fetched.Add(1)
		}
		return inner.RoundTrip(r)
	})
	return &copied, func() int { return int(fetched.Load()) }
}

// TestClientCredentialsRenewsOnTime points golang.org/x/oauth2's clientcredentials, unchanged,
// at the metadata's token endpoint. The library renews a token 10 s before its expiry, which
// it reads from expires_in as a lifetime (its own wall clock, which a test cannot move):
//   - with a 12 s lifetime its token's expiry is 12 s after the request, so that it renews
//     the token 2 s later (a client that read expires_in as a Unix time, as from /auth/token,
//     would keep its first token for decades and meet 401 once it expired);
//   - with a 10 s lifetime every token is due at once: each request renews it, with a new
//     token each time, and each renewed token works.
func TestClientCredentialsRenewsOnTime(t *testing.T) {
	t.Parallel()
	config := func(a *api, acc application.CreatedAccount) clientcredentials.Config {
		md := a.do("GET", "/.well-known/oauth-authorization-server", "", nil).json(t)
		return clientcredentials.Config{ClientID: acc.Credential.ClientID, ClientSecret: acc.Credential.Secret,
			TokenURL: md["token_endpoint"].(string), Scopes: []string{"transaction:read", "balance:read"}}
	}

	t.Run("a 12 s lifetime is read as an expiry 12 s away", func(t *testing.T) {
		t.Parallel()
		a := newAPI(t, apiSettings{TokenTTL: 12 * time.Second})
		acc := a.newAccount()
		counting, fetched := a.tkCountingClient()
		ctx := context.WithValue(context.Background(), oauth2.HTTPClient, counting)
		cfg := config(a, acc)
		before := time.Now()
		tok, err := cfg.Token(ctx)
		after := time.Now()
		if err != nil {
			t.Fatal(err)
		}
		if tok.Expiry.Before(before.Add(12*time.Second)) || tok.Expiry.After(after.Add(12*time.Second)) {
			t.Fatalf("expiry %v, want 12 s after the request (%v to %v): the client would not renew after about 2 s (12 s less its 10 s margin)",
				tok.Expiry, before.Add(12*time.Second), after.Add(12*time.Second))
		}
		if fetched() != 1 {
			t.Fatalf("%d token requests, want 1", fetched())
		}

		t.Run("the same library reads /auth/token's expires_in as decades", func(t *testing.T) {
			legacy := clientcredentials.Config{ClientID: acc.Credential.ClientID, ClientSecret: acc.Credential.Secret,
				TokenURL: a.srv.URL + "/auth/token"}
			tok, err := legacy.Token(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if tok.Expiry.Before(time.Now().AddDate(10, 0, 0)) {
				t.Fatalf("expiry %v: the comparison no longer shows why /oauth/token exists", tok.Expiry)
			}
		})
	})

	t.Run("a token within the margin of its expiry is renewed before each request", func(t *testing.T) {
		t.Parallel()
		a := newAPI(t, apiSettings{TokenTTL: 10 * time.Second})
		acc := a.newAccount()
		counting, fetched := a.tkCountingClient()
		ctx := context.WithValue(context.Background(), oauth2.HTTPClient, counting)
		cfg := config(a, acc)
		client := cfg.Client(ctx)
		tokens := map[string]bool{}
		const requests = 4
		for i := range requests {
			res, err := client.Get(a.srv.URL + "/balance")
			if err != nil {
				t.Fatal(err)
			}
			tokens[res.Request.Header.Get("Authorization")] = true
			_ = res.Body.Close()
			if res.StatusCode != http.StatusOK {
				t.Fatalf("request %d: %d", i, res.StatusCode)
			}
		}
		if fetched() != requests || len(tokens) != requests {
			t.Fatalf("%d token requests and %d distinct tokens for %d requests, want one new token for each", fetched(), len(tokens), requests)
		}
	})
}

// TestTokenRequestsAreLimited runs on stopped clocks: the buckets refill only when the test
// says.
func TestTokenRequestsAreLimited(t *testing.T) {
	t.Parallel()
	t.Run("per client_id: 429 slow_down with Retry-After, other clients unaffected", func(t *testing.T) {
		t.Parallel()
		a := newAPI(t, apiSettings{Clock: tkClock(), TokenRPS: 0.5, TokenBurst: 2})
		busy, calm := a.newAccount(), a.newAccount()
		tkAccessToken(t, a.postForm("/auth/token", tkCreds(busy.Credential)))
		tkAccessToken(t, a.postForm("/oauth/token", tkCreds(busy.Credential)))
		for _, path := range []string{"/auth/token", "/oauth/token"} {
			r := a.postForm(path, tkCreds(busy.Credential))
			tkTokenError(t, r, http.StatusTooManyRequests, "slow_down")
			if s, err := strconv.Atoi(r.header.Get("Retry-After")); err != nil || s < 1 || s > 2 {
				t.Fatalf("Retry-After = %q, want 1 or 2 s (one token every 2 s)", r.header.Get("Retry-After"))
			}
		}
		tkTokenError(t, a.do("GET", "/auth/token", "", nil, "Authorization", basicAuth(busy.Credential.ClientID, busy.Credential.Secret)), http.StatusTooManyRequests, "slow_down")
		tkAccessToken(t, a.postForm("/auth/token", tkCreds(calm.Credential)))
	})
	t.Run("per address: failures spend the budget, successes do not", func(t *testing.T) {
		t.Parallel()
		a := newAPI(t, apiSettings{Clock: tkClock(), TokenFailures: 3})
		acc := a.newAccount()
		for range 10 {
			tkAccessToken(t, a.postForm("/auth/token", tkCreds(acc.Credential)))
		}
		tkTokenError(t, a.postForm("/auth/token", url.Values{"client_id": {acc.Credential.ClientID}, "client_secret": {"guess-1"}}), http.StatusUnauthorized, "invalid_client")
		tkTokenError(t, a.postForm("/oauth/token", url.Values{"client_id": {"nobody"}, "client_secret": {"guess-2"}}), http.StatusUnauthorized, "invalid_client")
		tkTokenError(t, a.postForm("/auth/token", tkCreds(acc.Credential, "scope", "root")), http.StatusBadRequest, "invalid_scope")
		// The budget is spent: even the right secret waits, since a guess cannot be told apart
		// before the secret is checked.
		r := a.postForm("/auth/token", tkCreds(acc.Credential))
		tkTokenError(t, r, http.StatusTooManyRequests, "slow_down")
		if s, err := strconv.Atoi(r.header.Get("Retry-After")); err != nil || s < 1 || s > 20 {
			t.Fatalf("Retry-After = %q, want at most 20 s (3 failures a minute)", r.header.Get("Retry-After"))
		}
		tkTokenError(t, a.postForm("/oauth/token", url.Values{"client_id": {"nobody"}, "client_secret": {"guess-3"}}), http.StatusTooManyRequests, "slow_down")
		if r := a.do("GET", "/.well-known/oauth-authorization-server", "", nil); r.status != http.StatusOK {
			t.Fatalf("the metadata is not a token request and is not limited: %d", r.status)
		}
	})
}

// tkFormFrom posts form to a token endpoint from the loopback address 127.0.0.host. The token
// limits count the TCP peer's address (forwarding headers are not trusted), and on Linux all of
// 127.0.0.0/8 reaches the loopback interface: each host is another client address, over real
// HTTP.
func (a *api) tkFormFrom(t *testing.T, host byte, path string, form url.Values) response {
	t.Helper()
	dialer := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, host)}, Timeout: 10 * time.Second}
	transport := &http.Transport{DialContext: dialer.DialContext, DisableKeepAlives: true}
	defer transport.CloseIdleConnections()
	req, err := http.NewRequest("POST", a.srv.URL+path, strings.NewReader(form.Encode()))
	must(t, err)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	res, err := (&http.Client{Transport: transport, Timeout: time.Minute}).Do(req)
	if err != nil {
		if runtime.GOOS != "linux" {
			t.Skipf("sending from 127.0.0.%d: %v (only Linux routes all of 127.0.0.0/8 to loopback)", host, err)
		}
		t.Fatalf("POST %s from 127.0.0.%d: %v", path, host, err)
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	must(t, err)
	return response{status: res.StatusCode, header: res.Header, body: raw}
}

// TestTokenLimitsCannotBeTurnedAgainstAClient: a client_id is no secret (it is in every token),
// so whoever knows one can send wrong secrets for it from many addresses, each within its own
// failure budget. Those guesses must neither keep the right secret from its token nor be
// checked faster than the client_id's failure budget allows. Each API runs on a stopped clock
// the test moves.
func TestTokenLimitsCannotBeTurnedAgainstAClient(t *testing.T) {
	t.Parallel()
	wrong := func(clientID string, n int) url.Values {
		return url.Values{"client_id": {clientID}, "client_secret": {fmt.Sprintf("guess-%d", n)}}
	}

	t.Run("ten addresses guessing once a second each do not lock the right secret out", func(t *testing.T) {
		t.Parallel()
		// The defaults: 10 token requests a second per client_id with bursts of 20, 60 failures
		// a minute per address and per client_id.
		clock := tkClock()
		a := newAPI(t, apiSettings{Clock: clock, TokenRPS: 10, TokenBurst: 20, TokenFailures: 60})
		victim := a.newAccount()
		answers := map[string]int{}
		guess := func(host byte, n int) {
			r := a.tkFormFrom(t, host, "/oauth/token", wrong(victim.Credential.ClientID, n))
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
				clock.Advance(100 * time.Millisecond)
				guess(host, guesses)
				guesses++
			}
			if r := a.tkFormFrom(t, 2, "/oauth/token", tkCreds(victim.Credential)); r.status != http.StatusOK {
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
		a := newAPI(t, apiSettings{Clock: tkClock(), TokenRPS: 0.001, TokenBurst: 2, TokenFailures: 60})
		victim := a.newAccount()
		for host := byte(10); host < 15; host++ {
			if r := a.tkFormFrom(t, host, "/auth/token", wrong(victim.Credential.ClientID, int(host))); r.status != http.StatusUnauthorized {
				t.Fatalf("guess from 127.0.0.%d: %d %s, want 401", host, r.status, r.body)
			}
		}
		tkAccessToken(t, a.tkFormFrom(t, 2, "/oauth/token", tkCreds(victim.Credential)))
		tkAccessToken(t, a.tkFormFrom(t, 3, "/auth/token", tkCreds(victim.Credential)))
		r := a.tkFormFrom(t, 2, "/oauth/token", tkCreds(victim.Credential))
		tkTokenError(t, r, http.StatusTooManyRequests, "slow_down")
		if !strings.Contains(r.json(t)["error_description"].(string), "reuse the token") {
			t.Fatalf("the client's own rate answered %s", r.body)
		}
	})

	t.Run("past the client_id's failure budget guesses answer 429 slow_down, unknown or known, and the right secret 200", func(t *testing.T) {
		t.Parallel()
		clock := tkClock()
		a := newAPI(t, apiSettings{Clock: clock, TokenFailures: 3}) // one failure every 20 s
		victim := a.newAccount()
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
				out = append(out, read(a.tkFormFrom(t, host, "/oauth/token", wrong(clientID, int(host)))))
			}
			// An address that guessed gets no further guess checked, not even one that happens
			// to be right: it could not tell the right secret from the others.
			out = append(out, read(a.tkFormFrom(t, first, "/oauth/token", wrong(clientID, 99))))
			return out
		}
		known := run(victim.Credential.ClientID, 10)
		unknown := run("c0ffee00-0000-4000-8000-000000000000", 30)
		want := []answer{{401, "invalid_client", ""}, {401, "invalid_client", ""}, {401, "invalid_client", ""},
			{429, "slow_down", "20"}, {429, "slow_down", "20"}, {429, "slow_down", "20"}}
		if !slices.Equal(known, want) || !slices.Equal(unknown, want) {
			t.Fatalf("guesses answered\n%v for the client\n%v for an unknown client_id\nwant %v", known, unknown, want)
		}
		tkTokenError(t, a.tkFormFrom(t, 10, "/oauth/token", tkCreds(victim.Credential)), http.StatusTooManyRequests, "slow_down")

		tkAccessToken(t, a.tkFormFrom(t, 2, "/oauth/token", tkCreds(victim.Credential)))
		tkAccessToken(t, a.tkFormFrom(t, 3, "/auth/token", tkCreds(victim.Credential)))

		// 20 s later the budget holds one failure again: one more guess is checked.
		clock.Advance(20 * time.Second)
		if got := read(a.tkFormFrom(t, 11, "/oauth/token", wrong(victim.Credential.ClientID, 100))); got != (answer{401, "invalid_client", ""}) {
			t.Fatalf("a guess once the budget refilled: %v, want it checked (401)", got)
		}
		if got := read(a.tkFormFrom(t, 15, "/oauth/token", wrong(victim.Credential.ClientID, 101))); got.status != http.StatusTooManyRequests {
			t.Fatalf("the guess after it: %v, want 429", got)
		}
	})
}
