package httpapi_test

// Helpers of the security and OAuth behaviour tests (security_http_test.go,
// security_flows_http_test.go, oauth_http_test.go, auth_cache_http_test.go): they start with
// "sec".

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/pixgate/pixgate/application"
	"github.com/pixgate/pixgate/domain"
)

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

// secBalance is the body of GET /balance.
func (a *api) secBalance(t *testing.T, tok string) string {
	t.Helper()
	return string(a.want(t, http.StatusOK, "GET", "/balance", tok, nil).body)
}
