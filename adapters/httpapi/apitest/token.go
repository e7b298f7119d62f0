package apitest

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// The token endpoints, POST /auth/token and /oauth/token (docs/API.md, Token endpoints): their
// requests are forms (Client.PostForm), their answers RFC 6749's.

// Credentials is the form of a client_credentials request with the client id and secret in
// the body, and more fields set from name, value pairs.
func Credentials(clientID, secret string, more ...string) url.Values {
	v := url.Values{"client_id": {clientID}, "client_secret": {secret}}
	for i := 0; i+1 < len(more); i += 2 {
		v.Set(more[i], more[i+1])
	}
	return v
}

// TokenError checks that r is an RFC 6749 error answer (section 5.2) of status and code:
// JSON, not to be stored, holding exactly error and a non-empty error_description.
func TokenError(t testing.TB, r Response, status int, code string) {
	t.Helper()
	if r.Status != status || !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") || r.Header.Get("Cache-Control") != "no-store" {
		t.Fatalf("%d %v %s; want %d %s", r.Status, r.Header, r.Body, status, code)
	}
	m := r.JSON(t)
	if m["error"] != code || m["error_description"] == "" || len(m) != 2 {
		t.Fatalf("body %s, want error %s", r.Body, code)
	}
}

// AccessToken wants r to be a successful token answer and returns its access token and scope.
func AccessToken(t testing.TB, r Response) (token, scope string) {
	t.Helper()
	if r.Status != http.StatusOK {
		t.Fatalf("token: %d %s", r.Status, r.Body)
	}
	m := r.JSON(t)
	token, _ = m["access_token"].(string)
	scope, _ = m["scope"].(string)
	if token == "" {
		t.Fatalf("no access_token in %s", r.Body)
	}
	return token, scope
}
