package httpapi_test

// Helpers of the security and OAuth behaviour tests alone (security_http_test.go,
// security_flows_http_test.go, oauth_http_test.go, auth_cache_http_test.go): they start with
// "sec". The helpers every behaviour test shares are in api_helpers_test.go.

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
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

// secBalance is the body of GET /balance.
func (a *api) secBalance(t *testing.T, tok string) string {
	t.Helper()
	return string(a.want(t, http.StatusOK, "GET", "/balance", tok, nil).body)
}
