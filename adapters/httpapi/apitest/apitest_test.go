package apitest_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"testing"

	"github.com/pixgate/pixgate/adapters/httpapi/apitest"
)

// echo answers every request with its method, path, headers and body as JSON.
func echo(t *testing.T) *apitest.Client {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{
			"method": r.Method, "path": r.URL.Path, "contentType": r.Header.Get("Content-Type"),
			"authorization": r.Header.Get("Authorization"), "x": r.Header.Get("X-Test"), "body": string(body),
		})
	}))
	t.Cleanup(srv.Close)
	return apitest.NewClient(srv.URL, srv.Client())
}

func TestDoSendsTheBodyTokenAndHeaders(t *testing.T) {
	c := echo(t)
	got := c.Do(t, "POST", "/transaction", "tok", apitest.MinimalTransaction(), "X-Test", "1").JSON(t)
	want := map[string]any{"method": "POST", "path": "/transaction", "contentType": "application/json",
		"authorization": "Bearer tok", "x": "1", "body": `{"amount":1000,"paymentMethod":"PIX","pix":{}}`}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %v, want %v", k, got[k], v)
		}
	}
	if got := c.Do(t, "GET", "/balance", "", nil).JSON(t); got["contentType"] != "" || got["authorization"] != "" || got["body"] != "" {
		t.Errorf("a request without body or token sent %v", got)
	}
	got = c.PostForm(t, "/auth/token", url.Values{"grant_type": {"client_credentials"}}).JSON(t)
	if got["contentType"] != "application/x-www-form-urlencoded" || got["body"] != "grant_type=client_credentials" {
		t.Errorf("form sent as %v", got)
	}
}

func TestProblemReturnsTheFieldErrors(t *testing.T) {
	r := apitest.Response{Status: 422, Header: http.Header{"Content-Type": {"application/problem+json"}},
		Body: []byte(`{"type":"about:blank","status":422,"code":"validation_failed","requestId":"r1",` +
			`"errors":[{"field":"amount","code":"required"},{"field":"pix","code":"invalid"}]}`)}
	if got := apitest.Problem(t, r, 422, "validation_failed"); !slices.Equal(got, []string{"amount required", "pix invalid"}) {
		t.Fatalf("errors = %v", got)
	}
}
