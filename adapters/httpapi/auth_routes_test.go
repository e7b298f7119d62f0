package httpapi_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"

	"github.com/pixgate/pixgate/adapters/httpapi"
	"github.com/pixgate/pixgate/adapters/memory"
	"github.com/pixgate/pixgate/adapters/system"
	"github.com/pixgate/pixgate/application"
	"github.com/pixgate/pixgate/domain"
	"github.com/pixgate/pixgate/ports"
)

// The authentication routes run here against the real use cases and the package's fakes
// (fakes_test.go): an account store, and a token issuer and verifier that share a table.

const authTestJWKS = `{"keys":[{"kty":"RSA","kid":"k1","n":"AQAB","e":"AQAB"}]}`

type authServer struct {
	t        *testing.T
	srv      *httptest.Server
	clock    *fakeClock
	accounts *memory.Accounts
	create   *application.CreateAccount
	disable  *application.DisableAccount
}

func newAuthServer(t *testing.T, granter httpapi.TokenGranter) *authServer {
	t.Helper()
	clock := newFakeClock(time.Date(2031, 9, 10, 11, 12, 13, 0, time.UTC))
	accounts := memory.NewAccounts()
	tokens := newFakeTokens(clock)
	hasher, err := system.NewClientSecrets([]byte("http-test-key-http-test-key-0123"))
	if err != nil {
		t.Fatal(err)
	}
	if granter == nil {
		granter = application.NewIssueToken(accounts, tokens, hasher, time.Hour)
	}
	ids := fakeIDs{}
	deps := httpapi.Deps{
		Authenticator:     application.NewAuthenticate(tokens, accounts),
		CreateTransaction: application.NewCreateTransaction(unusedTransactions{}, unusedEmitter{}, unusedRenderer{}, ids, unusedCapabilities{}, clock),
		GetTransaction:    application.NewGetTransaction(unusedTransactions{}),
		ListTransactions:  application.NewListTransactions(unusedTransactions{}),
		RefundTransaction: application.NewRefundTransaction(unusedTransactions{}, application.NewSendDevolutions(unusedTransactions{}, unusedLedger{}, unusedAcquirer{}, clock,
			application.DevolutionSettings{CheckEvery: time.Minute, Claim: time.Minute}, func(application.DevolutionReport) {}), ids, clock, func(error) {}),
		Withdrawals: httpapi.WithdrawalDeps{
			Create:  application.NewCreateWithdrawal(unusedWithdrawals{}, ids, clock, application.WithdrawalSettings{Acquirer: "SANDBOX"}),
			Get:     application.NewGetWithdrawal(unusedWithdrawals{}),
			Cancel:  application.NewCancelWithdrawal(unusedWithdrawals{}, clock),
			Balance: application.NewGetBalance(unusedLedger{}),
		},
		Webhooks: httpapi.WebhookDeps{ListEvents: application.NewListEvents(unusedTransactions{}, unusedWithdrawals{}, unusedOutbox{})},
		Ledger:   httpapi.LedgerDeps{Entries: application.NewListEntries(unusedLedger{})},
		Auth: httpapi.AuthDeps{
			Token:               granter,
			JWKS:                []byte(authTestJWKS),
			CreateCredential:    application.NewCreateCredential(accounts, ids, clock, hasher),
			ListCredentials:     application.NewListCredentials(accounts),
			RevokeCredential:    application.NewRevokeCredential(accounts, clock),
			GetWebhookSecret:    application.NewGetWebhookSecret(accounts, clock),
			RotateWebhookSecret: application.NewRotateWebhookSecret(accounts, clock, hasher),
		},
	}
	srv := httptest.NewServer(httpapi.New(httpapi.Config{}, deps).Handler())
	t.Cleanup(srv.Close)
	return &authServer{t: t, srv: srv, clock: clock, accounts: accounts,
		create: application.NewCreateAccount(accounts, ids, clock, hasher), disable: application.NewDisableAccount(accounts)}
}

func (s *authServer) account(scopes ...domain.Scope) application.CreatedAccount {
	s.t.Helper()
	created, err := s.create.Execute(context.Background(), "Loja HTTP", scopes)
	if err != nil {
		s.t.Fatal(err)
	}
	return created
}

func (s *authServer) do(method, path string, header map[string]string, body string) response {
	s.t.Helper()
	req, err := http.NewRequest(method, s.srv.URL+path, strings.NewReader(body))
	if err != nil {
		s.t.Fatal(err)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		s.t.Fatal(err)
	}
	return response{status: resp.StatusCode, header: resp.Header, body: b}
}

var authFormHeader = map[string]string{"Content-Type": "application/x-www-form-urlencoded"}

func authForm(kv ...string) string {
	v := url.Values{}
	for i := 0; i+1 < len(kv); i += 2 {
		v.Add(kv[i], kv[i+1])
	}
	return v.Encode()
}

func (s *authServer) token(c application.NewCredential) string {
	s.t.Helper()
	r := s.do(http.MethodPost, "/auth/token", authFormHeader, authForm("grant_type", "client_credentials", "client_id", c.ClientID, "client_secret", c.Secret))
	if r.status != http.StatusOK {
		s.t.Fatalf("token: %d %s", r.status, r.body)
	}
	return r.json(s.t)["access_token"].(string)
}

func authBearer(token string) map[string]string {
	return map[string]string{"Authorization": "Bearer " + token}
}

func TestTokenEndpoint(t *testing.T) {
	s := newAuthServer(t, nil)
	acc := s.account(domain.ScopeTransactionRead, domain.ScopeTransactionWrite)
	id, secret := acc.Credential.ClientID, acc.Credential.Secret
	now := s.clock.Now()

	assertToken := func(t *testing.T, r response) {
		t.Helper()
		if r.status != http.StatusOK {
			t.Fatalf("status %d: %s", r.status, r.body)
		}
		if r.header.Get("Cache-Control") != "no-store" || r.header.Get("Pragma") != "no-cache" || !strings.HasPrefix(r.header.Get("Content-Type"), "application/json") {
			t.Errorf("headers %v", r.header)
		}
		m := r.json(t)
		want := map[string]any{
			"expires_in": float64(now.Add(time.Hour).Unix()), "refresh_expires_in": float64(0), "token_type": "Bearer",
			"not-before-policy": float64(0), "scope": "transaction:read,transaction:write", "expires_in_sec": float64(3600),
		}
		for k, v := range want {
			if m[k] != v {
				t.Errorf("%s = %v, want %v", k, m[k], v)
			}
		}
		if tok, _ := m["access_token"].(string); tok == "" {
			t.Error("no access_token")
		}
		if len(m) != 7 {
			t.Errorf("response has %d fields: %v", len(m), m)
		}
	}

	ok := []struct {
		name   string
		method string
		header map[string]string
		body   string
	}{
		{"token200 with the credentials in the form", http.MethodPost, authFormHeader, authForm("grant_type", "client_credentials", "client_id", id, "client_secret", secret)},
		{"token200 without grant_type", http.MethodPost, authFormHeader, authForm("client_id", id, "client_secret", secret)},
		{"token200 with a charset in the content type", http.MethodPost, map[string]string{"Content-Type": "application/x-www-form-urlencoded; charset=UTF-8"}, authForm("client_id", id, "client_secret", secret)},
		{"token200 with HTTP Basic", http.MethodPost, map[string]string{"Content-Type": "application/x-www-form-urlencoded", "Authorization": basicAuth(id, secret)}, authForm("grant_type", "client_credentials")},
		{"token200 with HTTP Basic and the same client_id in the form", http.MethodPost, map[string]string{"Content-Type": "application/x-www-form-urlencoded", "Authorization": basicAuth(id, secret)}, authForm("client_id", id)},
		{"token200 with HTTP Basic and no body at all", http.MethodPost, map[string]string{"Authorization": basicAuth(id, secret)}, ""},
		{"token200 on GET with HTTP Basic", http.MethodGet, map[string]string{"Authorization": basicAuth(id, secret)}, ""},
	}
	for _, tc := range ok {
		t.Run(tc.name, func(t *testing.T) { assertToken(t, s.do(tc.method, "/auth/token", tc.header, tc.body)) })
	}
	t.Run("token200 on GET with grant_type in the query", func(t *testing.T) {
		assertToken(t, s.do(http.MethodGet, "/auth/token?grant_type=client_credentials", map[string]string{"Authorization": basicAuth(id, secret)}, ""))
	})

	bad := []struct {
		name   string
		method string
		path   string
		header map[string]string
		body   string
		status int
		code   string
	}{
		{"token400 unsupported_grant_type for the password grant", http.MethodPost, "/auth/token", authFormHeader, authForm("grant_type", "password", "client_id", id, "client_secret", secret), 400, "unsupported_grant_type"},
		{"token400 for an empty grant_type", http.MethodPost, "/auth/token", authFormHeader, authForm("grant_type", "", "client_id", id, "client_secret", secret), 400, "invalid_request"},
		{"token400 for a missing client_secret", http.MethodPost, "/auth/token", authFormHeader, authForm("client_id", id), 400, "invalid_request"},
		{"token400 for an empty client_id", http.MethodPost, "/auth/token", authFormHeader, authForm("client_id", "", "client_secret", secret), 400, "invalid_request"},
		{"token400 for no credentials at all", http.MethodPost, "/auth/token", authFormHeader, authForm("grant_type", "client_credentials"), 400, "invalid_request"},
		{"token400 for a repeated client_id", http.MethodPost, "/auth/token", authFormHeader, authForm("client_id", id, "client_id", id, "client_secret", secret), 400, "invalid_request"},
		{"token400 for a repeated grant_type", http.MethodPost, "/auth/token", authFormHeader, authForm("grant_type", "client_credentials", "grant_type", "client_credentials", "client_id", id, "client_secret", secret), 400, "invalid_request"},
		{"token400 for a JSON body", http.MethodPost, "/auth/token", map[string]string{"Content-Type": "application/json"}, `{"client_id":"` + id + `","client_secret":"` + secret + `"}`, 400, "invalid_request"},
		{"token400 for a authForm body without content type", http.MethodPost, "/auth/token", nil, authForm("client_id", id, "client_secret", secret), 400, "invalid_request"},
		{"token400 for a secret in the query string of a POST", http.MethodPost, "/auth/token?client_secret=" + url.QueryEscape(secret), authFormHeader, authForm("client_id", id), 400, "invalid_request"},
		{"token400 for Basic and a authForm secret together", http.MethodPost, "/auth/token", map[string]string{"Content-Type": "application/x-www-form-urlencoded", "Authorization": basicAuth(id, secret)}, authForm("client_secret", secret), 400, "invalid_request"},
		{"token400 for Basic and another authForm client_id", http.MethodPost, "/auth/token", map[string]string{"Content-Type": "application/x-www-form-urlencoded", "Authorization": basicAuth(id, secret)}, authForm("client_id", "someone-else"), 400, "invalid_request"},
		{"token400 for a Basic header that is not base64", http.MethodPost, "/auth/token", map[string]string{"Authorization": "Basic !!!"}, "", 400, "invalid_request"},
		{"token400 for a Basic header without colon", http.MethodPost, "/auth/token", map[string]string{"Authorization": "Basic " + base64.StdEncoding.EncodeToString([]byte(id))}, "", 400, "invalid_request"},
		{"token400 on GET without Basic", http.MethodGet, "/auth/token?client_id=" + id, nil, "", 400, "invalid_request"},
		{"token400 on GET with the secret in the query string", http.MethodGet, "/auth/token?client_secret=" + url.QueryEscape(secret), map[string]string{"Authorization": basicAuth(id, secret)}, "", 400, "invalid_request"},
		{"token400 on GET with an unsupported grant type", http.MethodGet, "/auth/token?grant_type=refresh_token", map[string]string{"Authorization": basicAuth(id, secret)}, "", 400, "unsupported_grant_type"},
		{"token401 for a wrong secret", http.MethodPost, "/auth/token", authFormHeader, authForm("client_id", id, "client_secret", secret+"x"), 401, "invalid_client"},
		{"token401 for an unknown client", http.MethodPost, "/auth/token", authFormHeader, authForm("client_id", "nobody", "client_secret", secret), 401, "invalid_client"},
		{"token401 for a wrong secret in Basic", http.MethodPost, "/auth/token", map[string]string{"Authorization": basicAuth(id, "wrong")}, "", 401, "invalid_client"},
		{"token401 for a Bearer header on the token endpoint", http.MethodPost, "/auth/token", map[string]string{"Content-Type": "application/x-www-form-urlencoded", "Authorization": "Bearer abc"}, authForm("client_id", id, "client_secret", secret), 401, "invalid_client"},
	}
	var unauthorizedBodies []string
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			r := s.do(tc.method, tc.path, tc.header, tc.body)
			if r.status != tc.status {
				t.Fatalf("status %d, want %d: %s", r.status, tc.status, r.body)
			}
			m := r.json(t)
			if m["error"] != tc.code || m["error_description"] == "" || len(m) != 2 {
				t.Errorf("body %s, want error %s with a description", r.body, tc.code)
			}
			if r.header.Get("Cache-Control") != "no-store" || !strings.HasPrefix(r.header.Get("Content-Type"), "application/json") {
				t.Errorf("headers %v", r.header)
			}
			if bytes.Contains(r.body, []byte(secret)) {
				t.Error("the answer echoes the secret")
			}
			_, usedBasic := tc.header["Authorization"]
			if challenge := r.header.Get("WWW-Authenticate"); tc.status == 401 && usedBasic && !strings.HasPrefix(challenge, "Basic") {
				t.Errorf("401 to a Basic client without a Basic challenge: %q", challenge)
			}
			if tc.status == 401 && tc.header["Authorization"] == "" {
				unauthorizedBodies = append(unauthorizedBodies, string(r.body))
			}
		})
	}
	t.Run("unknown client and wrong secret answer the same body", func(t *testing.T) {
		if len(unauthorizedBodies) != 2 || unauthorizedBodies[0] != unauthorizedBodies[1] {
			t.Fatalf("bodies differ: %q", unauthorizedBodies)
		}
	})

	t.Run("token401 for a disabled account's right credentials", func(t *testing.T) {
		other := s.account()
		if err := s.disable.Execute(context.Background(), other.Account.ID()); err != nil {
			t.Fatal(err)
		}
		r := s.do(http.MethodPost, "/auth/token", authFormHeader, authForm("client_id", other.Credential.ClientID, "client_secret", other.Credential.Secret))
		if r.status != 401 || r.json(t)["error"] != "invalid_client" {
			t.Fatalf("%d %s", r.status, r.body)
		}
	})
}

func TestTokenEndpointWhenTheBackendFails(t *testing.T) {
	for _, tc := range []struct {
		name   string
		err    error
		status int
		code   string
	}{
		{"token502 when the upstream provider cannot be reached", ports.ErrUpstreamUnavailable, 502, "temporarily_unavailable"},
		{"token503 when the store cannot be reached", ports.ErrUnavailable, 503, "temporarily_unavailable"},
		{"token500 without internals for anything else", errors.New("driver exploded: mongodb://user:pw@host"), 500, "server_error"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newAuthServer(t, failingGranter{err: tc.err})
			r := s.do(http.MethodPost, "/auth/token", authFormHeader, authForm("client_id", "c", "client_secret", "s"))
			if r.status != tc.status || r.json(t)["error"] != tc.code {
				t.Fatalf("%d %s", r.status, r.body)
			}
			if bytes.Contains(r.body, []byte("mongodb")) {
				t.Fatal("internals leaked")
			}
		})
	}
}

func TestJWKSNeedsNoToken(t *testing.T) {
	s := newAuthServer(t, nil)
	for _, h := range []map[string]string{nil, authBearer("garbage")} {
		r := s.do(http.MethodGet, "/.well-known/jwks.json", h, "")
		if r.status != 200 || strings.TrimSpace(string(r.body)) != authTestJWKS || !strings.HasPrefix(r.header.Get("Content-Type"), "application/json") {
			t.Fatalf("%d %q %v", r.status, r.body, r.header)
		}
	}
}

var authCreatedAtFormat = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$`)

func TestCredentialRoutes(t *testing.T) {
	s := newAuthServer(t, nil)
	acc := s.account(domain.ScopeWithdrawalRead, domain.ScopeAccountAdmin)
	tok := s.token(acc.Credential)
	reader := s.account(domain.ScopeWithdrawalRead, domain.ScopeTransactionRead, domain.ScopeBalanceRead)
	readerTok := s.token(reader.Credential)

	t.Run("create401 without a token", func(t *testing.T) {
		r := s.do(http.MethodPost, "/auth/credentials", nil, "")
		if r.status != 401 || r.header.Get("WWW-Authenticate") == "" {
			t.Fatalf("%d %v", r.status, r.header)
		}
	})
	for _, route := range []struct{ method, path string }{
		{http.MethodPost, "/auth/credentials"}, {http.MethodGet, "/auth/credentials"},
		{http.MethodDelete, "/auth/credentials/" + reader.Credential.ClientID},
		{http.MethodGet, "/webhook/secret"}, {http.MethodPost, "/webhook/secret/rotate"},
	} {
		t.Run(route.method+" "+route.path+" 403 insufficient_scope for a token without account:admin", func(t *testing.T) {
			r := s.do(route.method, route.path, authBearer(readerTok), "")
			if r.status != 403 || r.json(t)["code"] != "insufficient_scope" ||
				r.header.Get("WWW-Authenticate") != `Bearer error="insufficient_scope", scope="account:admin"` {
				t.Fatalf("%d %s %v", r.status, r.body, r.header)
			}
		})
	}
	if c, err := s.accounts.GetCredential(context.Background(), reader.Credential.ClientID); err != nil || c.Revoked() {
		t.Fatalf("the refused revocation changed the credential: %+v, %v", c, err)
	}

	var created application.NewCredential
	t.Run("create201 shows the new secret once", func(t *testing.T) {
		s.clock.Advance(time.Second)
		r := s.do(http.MethodPost, "/auth/credentials", authBearer(tok), "")
		if r.status != 201 || r.header.Get("Cache-Control") != "no-store" {
			t.Fatalf("%d %s %v", r.status, r.body, r.header)
		}
		m := r.json(t)
		created.ClientID, _ = m["client_id"].(string)
		created.Secret, _ = m["client_secret"].(string)
		if created.ClientID == "" || len(created.Secret) < 43 || !authCreatedAtFormat.MatchString(m["createdAt"].(string)) || len(m) != 3 {
			t.Fatalf("body %s", r.body)
		}
		stored, err := s.accounts.GetCredential(context.Background(), created.ClientID)
		if err != nil || stored.AccountID != acc.Account.ID() {
			t.Fatalf("stored %+v, %v", stored, err)
		}
	})

	t.Run("the new credential obtains tokens beside the first", func(t *testing.T) {
		_ = s.token(created)
		_ = s.token(acc.Credential)
	})

	t.Run("list200 shows both credentials newest first, without secrets", func(t *testing.T) {
		r := s.do(http.MethodGet, "/auth/credentials", authBearer(tok), "")
		if r.status != 200 {
			t.Fatalf("%d %s", r.status, r.body)
		}
		var body struct {
			Data []map[string]any `json:"data"`
		}
		if err := json.Unmarshal(r.body, &body); err != nil || len(body.Data) != 2 {
			t.Fatalf("%v: %s", err, r.body)
		}
		if strings.Contains(string(r.body), created.Secret) || strings.Contains(string(r.body), "secret") {
			t.Fatalf("the list shows a secret: %s", r.body)
		}
		ids := []any{body.Data[0]["client_id"], body.Data[1]["client_id"]}
		if ids[0] != created.ClientID || ids[1] != acc.Credential.ClientID {
			t.Fatalf("client ids %v, want the newest (%s) first", ids, created.ClientID)
		}
		for _, item := range body.Data {
			if len(item) != 4 || item["revokedAt"] != nil || !authCreatedAtFormat.MatchString(item["createdAt"].(string)) ||
				!authCreatedAtFormat.MatchString(item["lastUsedAt"].(string)) {
				t.Fatalf("item %v: want client_id, createdAt, lastUsedAt (tokens were issued) and revokedAt null", item)
			}
		}
	})

	other := s.account()
	t.Run("revoke404 for another account's client id", func(t *testing.T) {
		r := s.do(http.MethodDelete, "/auth/credentials/"+other.Credential.ClientID, authBearer(tok), "")
		if r.status != 404 || r.json(t)["code"] != "not_found" {
			t.Fatalf("%d %s", r.status, r.body)
		}
	})
	t.Run("revoke404 for an unknown client id", func(t *testing.T) {
		r := s.do(http.MethodDelete, "/auth/credentials/nobody", authBearer(tok), "")
		if r.status != 404 {
			t.Fatalf("%d %s", r.status, r.body)
		}
	})
	t.Run("revoke204, and the revoked credential's tokens stop at once", func(t *testing.T) {
		newTok := s.token(created)
		r := s.do(http.MethodDelete, "/auth/credentials/"+created.ClientID, authBearer(tok), "")
		if r.status != 204 || len(r.body) != 0 {
			t.Fatalf("%d %s", r.status, r.body)
		}
		if r := s.do(http.MethodGet, "/webhook/secret", authBearer(newTok), ""); r.status != 401 {
			t.Fatalf("a revoked credential's token answered %d", r.status)
		}
		if r := s.do(http.MethodPost, "/auth/token", authFormHeader, authForm("client_id", created.ClientID, "client_secret", created.Secret)); r.status != 401 {
			t.Fatalf("a revoked credential obtained a token: %d", r.status)
		}
		if r := s.do(http.MethodGet, "/webhook/secret", authBearer(tok), ""); r.status != 200 {
			t.Fatalf("the other credential's token stopped: %d", r.status)
		}
	})
}

func TestWebhookSecretRoutes(t *testing.T) {
	s := newAuthServer(t, nil)
	acc := s.account()
	tok := s.token(acc.Credential)

	r := s.do(http.MethodGet, "/webhook/secret", authBearer(tok), "")
	if r.status != 200 || r.header.Get("Cache-Control") != "no-store" {
		t.Fatalf("get200: %d %s", r.status, r.body)
	}
	first := r.json(t)
	if first["secret"] != acc.Account.Webhook().Current || first["previousSecret"] != nil || first["previousExpiresAt"] != nil || len(first) != 3 {
		t.Fatalf("get200 before rotation: %s", r.body)
	}
	if !strings.Contains(string(r.body), `"previousSecret":null`) {
		t.Fatalf("previousSecret is not an explicit null: %s", r.body)
	}

	r = s.do(http.MethodPost, "/webhook/secret/rotate", authBearer(tok), "")
	if r.status != 200 {
		t.Fatalf("rotate200: %d %s", r.status, r.body)
	}
	rotated := r.json(t)
	wantUntil := s.clock.Now().Add(24 * time.Hour).UTC().Format("2006-01-02T15:04:05.000Z")
	if rotated["secret"] == first["secret"] || !strings.HasPrefix(rotated["secret"].(string), "whsec_") ||
		rotated["previousSecret"] != first["secret"] || rotated["previousExpiresAt"] != wantUntil {
		t.Fatalf("rotate200: %s", r.body)
	}
	if r := s.do(http.MethodGet, "/webhook/secret", authBearer(tok), ""); string(r.body) != string(s.do(http.MethodGet, "/webhook/secret", authBearer(tok), "").body) || r.json(t)["previousSecret"] != first["secret"] {
		t.Fatalf("get200 after rotation: %s", r.body)
	}

	t.Run("get401 without a token", func(t *testing.T) {
		if r := s.do(http.MethodGet, "/webhook/secret", nil, ""); r.status != 401 {
			t.Fatalf("%d", r.status)
		}
	})
	t.Run("get403 for a disabled account", func(t *testing.T) {
		if err := s.disable.Execute(context.Background(), acc.Account.ID()); err != nil {
			t.Fatal(err)
		}
		r := s.do(http.MethodGet, "/webhook/secret", authBearer(tok), "")
		if r.status != 403 || r.json(t)["code"] != "forbidden" {
			t.Fatalf("%d %s", r.status, r.body)
		}
	})
}

func TestAnOAuth2ClientCredentialsClientObtainsAndUsesAToken(t *testing.T) {
	s := newAuthServer(t, nil)
	acc := s.account()
	ctx := context.Background()

	for _, style := range []struct {
		name  string
		style oauth2.AuthStyle
	}{{"Basic header", oauth2.AuthStyleInHeader}, {"form parameters", oauth2.AuthStyleInParams}, {"auto-detection", oauth2.AuthStyleAutoDetect}} {
		t.Run("with "+style.name, func(t *testing.T) {
			cfg := clientcredentials.Config{ClientID: acc.Credential.ClientID, ClientSecret: acc.Credential.Secret,
				TokenURL: s.srv.URL + "/auth/token", AuthStyle: style.style}
			tok, err := cfg.Token(ctx)
			if err != nil {
				t.Fatalf("Token: %v", err)
			}
			if tok.AccessToken == "" || tok.TokenType != "Bearer" {
				t.Fatalf("token %+v", tok)
			}
			resp, err := cfg.Client(ctx).Get(s.srv.URL + "/webhook/secret")
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("GET /webhook/secret with the library's token: %d", resp.StatusCode)
			}
		})
	}

	t.Run("a wrong secret reaches the library as invalid_client", func(t *testing.T) {
		cfg := clientcredentials.Config{ClientID: acc.Credential.ClientID, ClientSecret: "wrong", TokenURL: s.srv.URL + "/auth/token", AuthStyle: oauth2.AuthStyleInHeader}
		_, err := cfg.Token(ctx)
		var re *oauth2.RetrieveError
		if !errors.As(err, &re) || re.ErrorCode != "invalid_client" || re.Response.StatusCode != 401 {
			t.Fatalf("Token = %v", err)
		}
	})
}
