package main

// The webhook tests through the API are in adapters/httpapi (webhook_test.go); the receiver and
// the environment here serve the security tests that need serve's configuration
// (security_http_test.go).

import (
	"encoding/json"
	"encoding/pem"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/pixgate/pixgate/adapters/webhook"
)

// receiver is a merchant's HTTPS webhook endpoint, reached by the name example.com (which the
// test resolves to loopback) and trusted through PIXGATE_WEBHOOK_CA_FILE, as a deployment would
// configure a private CA.
type receiver struct {
	srv    *httptest.Server
	caFile string
	mu     sync.Mutex
	got    []delivered
	status int
}

type delivered struct {
	header http.Header
	body   []byte
}

func newReceiver(t *testing.T) *receiver {
	rc := &receiver{status: http.StatusNoContent}
	rc.srv = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		rc.got = append(rc.got, delivered{header: r.Header.Clone(), body: body})
		status := rc.status
		rc.mu.Unlock()
		w.WriteHeader(status)
	}))
	t.Cleanup(rc.srv.Close)
	rc.caFile = filepath.Join(t.TempDir(), "ca.pem")
	pemBytes := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: rc.srv.Certificate().Raw})
	if err := os.WriteFile(rc.caFile, pemBytes, 0o600); err != nil {
		t.Fatal(err)
	}
	return rc
}

func (rc *receiver) url(path string) string {
	return "https://example.com:" + rc.srv.URL[len("https://127.0.0.1:"):] + path
}

func (rc *receiver) deliveries() []delivered {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]delivered(nil), rc.got...)
}

func newWebhookEnv(t *testing.T, rc *receiver) *env {
	return newEnv(t, map[string]string{"PIXGATE_WEBHOOK_ALLOW_PRIVATE": "true", "PIXGATE_WEBHOOK_CA_FILE": rc.caFile},
		func(a *app) { a.webhookOptions = webhook.Options{Resolver: loopbackResolver()} })
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
