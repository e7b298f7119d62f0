package httpapi_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/pixgate/pixgate/application"
)

// FuzzHTTPToken sends arbitrary form bodies, query strings and Authorization headers to the
// token endpoints through the whole API, in process: every answer is 200 (only for the right
// secret, with scopes the account holds), 400, 401 or 413 with an RFC 6749 body of a
// documented error, never 5xx and never a problem document.
func FuzzHTTPToken(f *testing.F) {
	a, _ := fuzzAPI(f, apiSettings{})
	created, err := application.NewCreateAccount(a.accounts, a.ids, a.clock, a.hasher).Execute(context.Background(), "Loja Fuzz Token", nil)
	must(f, err)
	id, secret := created.Credential.ClientID, created.Credential.Secret
	basic := "Basic " + base64.StdEncoding.EncodeToString([]byte(url.QueryEscape(id)+":"+url.QueryEscape(secret)))
	form := func(kv ...string) string {
		v := url.Values{}
		for i := 0; i+1 < len(kv); i += 2 {
			v.Add(kv[i], kv[i+1])
		}
		return v.Encode()
	}
	for _, s := range []struct{ body, query, auth string }{
		{form("client_id", id, "client_secret", secret), "", ""},
		{form("grant_type", "client_credentials", "client_id", id, "client_secret", secret, "scope", "transaction:read balance:read"), "", ""},
		{form("client_id", id, "client_secret", secret, "scope", "balance:read,account:admin"), "", ""},
		{form("scope", "transaction:read"), "", basic},
		{"", "scope=balance:read", basic},
		{form("client_id", id, "client_secret", secret, "scope", ""), "", ""},
		{form("client_id", id, "client_secret", secret, "scope", "root"), "", ""},
		{form("client_id", id, "client_secret", secret, "scope", "a", "scope", "b"), "", ""},
		{form("client_id", id, "client_secret", "wrong"), "", ""},
		{"client_id=%zz", "", ""},
		{"", "client_secret=x", ""},
		{"", "", "Basic !!!"},
		{"", "", "Bearer x"},
		{"scope=" + strings.Repeat(",", 1000), "", basic},
	} {
		f.Add([]byte(s.body), s.query, s.auth)
	}
	documented := []string{"invalid_request", "invalid_client", "invalid_scope", "unsupported_grant_type", "slow_down"}
	f.Fuzz(func(t *testing.T, body []byte, query, auth string) {
		for _, ep := range []struct{ method, path string }{{"POST", "/auth/token"}, {"POST", "/oauth/token"}, {"GET", "/auth/token"}} {
			target := ep.path
			if q := strings.Map(func(r rune) rune {
				if r <= ' ' || r == '#' || r >= 0x7f {
					return -1
				}
				return r
			}, query); q != "" {
				target += "?" + q
			}
			req := httptest.NewRequest(ep.method, "/", bytes.NewReader(body))
			u, err := url.ParseRequestURI(target)
			if err != nil {
				return
			}
			req.URL, req.RequestURI = u, target
			if ep.method == "POST" {
				req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			}
			if auth != "" && !strings.ContainsAny(auth, "\r\n\x00") {
				req.Header.Set("Authorization", auth)
			}
			rec := httptest.NewRecorder()
			a.srv.Config.Handler.ServeHTTP(rec, req)
			if !slices.Contains([]int{200, 400, 401, 413}, rec.Code) {
				t.Fatalf("%s %s with %q, %q answered %d: %s", ep.method, target, body, auth, rec.Code, rec.Body)
			}
			if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
				t.Fatalf("%s %s answered %d as %q: %s", ep.method, target, rec.Code, ct, rec.Body)
			}
			var answer struct {
				AccessToken string `json:"access_token"`
				Scope       string `json:"scope"`
				Error       string `json:"error"`
			}
			if err := json.Unmarshal(rec.Body.Bytes(), &answer); err != nil {
				t.Fatalf("not JSON: %s", rec.Body)
			}
			if rec.Code == http.StatusOK {
				if answer.AccessToken == "" || !fuzzCarriesSecret(string(body)+query, auth, secret) {
					t.Fatalf("a token for a request without the secret: %q %q %q", body, query, auth)
				}
				continue
			}
			if !slices.Contains(documented, answer.Error) {
				t.Fatalf("%s %s answered %d with error %q", ep.method, target, rec.Code, answer.Error)
			}
		}
	})
}

// fuzzCarriesSecret tells whether a request could hold secret: in its form or query, plain or
// form-encoded, or in its Basic header.
func fuzzCarriesSecret(formAndQuery, auth, secret string) bool {
	if strings.Contains(formAndQuery, secret) || strings.Contains(formAndQuery, url.QueryEscape(secret)) {
		return true
	}
	_, payload, _ := strings.Cut(auth, " ")
	raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(payload))
	return err == nil && strings.Contains(string(raw), url.QueryEscape(secret))
}
