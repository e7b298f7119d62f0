// Package apitest provides what tests need to talk to pixgate's HTTP API over real HTTP, in the
// spirit of net/http/httptest: a client bound to the API's address that reads each answer
// whole, the check of a problem+json answer, the sample request bodies, and the bodies of the
// acquirer's callback (POST /acquirer/pix). Both the HTTP adapter's behaviour tests and the
// tests of serve's wiring use it. It imports the standard library only.
package apitest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// Client sends requests to the API at BaseURL (scheme and host, no trailing slash) through
// HTTP, the client that reaches it (for an httptest.Server, its Client()).
type Client struct {
	BaseURL string
	HTTP    *http.Client
}

// NewClient is a Client of the API at baseURL, reached through c.
func NewClient(baseURL string, c *http.Client) *Client {
	return &Client{BaseURL: baseURL, HTTP: c}
}

// Response is an answer, read whole.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// JSON is the answer's body as a JSON object; t fails if it is not one.
func (r Response) JSON(t testing.TB) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.Body, &m); err != nil {
		t.Fatalf("response is not a JSON object: %v\n%s", err, r.Body)
	}
	return m
}

// Do sends a request to path with token as its bearer token ("" for none) and returns the
// answer. body is sent as is (a string), marshalled (anything else but nil) or not at all
// (nil); a body is sent as application/json unless headers say otherwise. headers are name,
// value pairs, set after the others. t fails if the request cannot be sent or its answer read.
func (c *Client) Do(t testing.TB, method, path, token string, body any, headers ...string) Response {
	t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	default:
		raw, err := json.Marshal(b)
		if err != nil {
			t.Fatalf("%s %s: marshalling the body: %v", method, path, err)
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, c.BaseURL+path, rd)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	res, err := c.HTTP.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatalf("%s %s: reading the answer: %v", method, path, err)
	}
	return Response{Status: res.StatusCode, Header: res.Header, Body: raw}
}

// PostForm posts form, URL-encoded, to path (a token endpoint such as /auth/token), with
// headers as Do takes them.
func (c *Client) PostForm(t testing.TB, path string, form url.Values, headers ...string) Response {
	t.Helper()
	return c.Do(t, "POST", path, "", form.Encode(), append([]string{"Content-Type", "application/x-www-form-urlencoded"}, headers...)...)
}

// Problem checks that r is an RFC 9457 problem+json answer of status and code (type
// about:blank, the status repeated in the body, a request id), and returns its field errors
// as "field code" strings (docs/API.md, Errors).
func Problem(t testing.TB, r Response, status int, code string) []string {
	t.Helper()
	if r.Status != status {
		t.Fatalf("status = %d, want %d\n%s", r.Status, status, r.Body)
	}
	if ct := r.Header.Get("Content-Type"); ct != "application/problem+json" {
		t.Fatalf("Content-Type = %q, want application/problem+json", ct)
	}
	p := r.JSON(t)
	if p["code"] != code || p["status"] != float64(status) || p["type"] != "about:blank" || p["requestId"] == "" {
		t.Fatalf("problem = %v, want code %q status %d", p, code, status)
	}
	var out []string
	errs, _ := p["errors"].([]any)
	for _, e := range errs {
		m := e.(map[string]any)
		out = append(out, fmt.Sprint(m["field"], " ", m["code"]))
	}
	return out
}
