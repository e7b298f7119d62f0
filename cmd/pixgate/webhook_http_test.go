package main

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

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

func TestWebhookOfCreationIsSignedAndCarriesTheResourceAsGETShowsIt(t *testing.T) {
	rc := newReceiver(t)
	e := newWebhookEnv(t, rc)
	accountID, tok := e.account()
	body := fullTransaction()
	body["webhookUrl"] = rc.url("/hooks/pix?shop=1")
	created := e.do("POST", "/transaction", tok, body)
	if created.status != http.StatusCreated {
		t.Fatalf("%d %s", created.status, created.body)
	}
	id := created.json(t)["id"].(string)
	afterCreation := e.do("GET", "/transaction/"+id, tok, nil)

	if n, err := e.app.dispatcher.DeliverDue(context.Background()); err != nil || n != 1 {
		t.Fatalf("DeliverDue = %d, %v; want 1 delivery", n, err)
	}
	got := rc.deliveries()
	if len(got) != 1 {
		t.Fatalf("%d deliveries, want 1", len(got))
	}
	d := got[0]

	account, err := e.app.stores.accounts.GetAccount(context.Background(), accountID)
	if err != nil {
		t.Fatal(err)
	}
	wh, err := standardwebhooks.NewWebhook(account.Webhook().Current)
	if err != nil {
		t.Fatal(err)
	}
	if err := wh.Verify(d.body, d.header); err != nil {
		t.Fatalf("the official Standard Webhooks library rejects the signature: %v", err)
	}
	if ct := d.header.Get("Content-Type"); ct != "application/json" {
		t.Fatalf("Content-Type = %q", ct)
	}
	var event struct {
		ID        string          `json:"id"`
		Type      string          `json:"type"`
		CreatedAt string          `json:"createdAt"`
		Data      json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(d.body, &event); err != nil {
		t.Fatal(err)
	}
	if event.Type != "transaction.pix_qrcode_generated" || event.ID != d.header.Get("webhook-id") || event.CreatedAt == "" {
		t.Fatalf("event = %+v, webhook-id %q", event, d.header.Get("webhook-id"))
	}
	var data, get map[string]any
	_ = json.Unmarshal(event.Data, &data)
	_ = json.Unmarshal(afterCreation.body, &get)
	if a, b := mustJSON(t, data), mustJSON(t, get); a != b {
		t.Fatalf("data differs from GET:\n%s\n%s", a, b)
	}
	if u, _ := data["paymentUrl"].(string); !strings.HasPrefix(u, e.srv.URL+"/pay/") {
		t.Fatalf("data.paymentUrl = %q, want the charge's payment page on this server", u)
	}

	t.Run("the events route shows the delivery and its attempt", func(t *testing.T) {
		r := e.do("GET", "/transaction/"+id+"/events", tok, nil)
		if r.status != http.StatusOK {
			t.Fatalf("%d %s", r.status, r.body)
		}
		list := r.json(t)["data"].([]any)
		if len(list) != 1 {
			t.Fatalf("%d events", len(list))
		}
		ev := list[0].(map[string]any)
		attempts := ev["attempts"].([]any)
		if ev["id"] != event.ID || ev["status"] != "delivered" || len(attempts) != 1 || attempts[0].(map[string]any)["statusCode"] != float64(204) {
			t.Fatalf("event = %v", ev)
		}
	})
	t.Run("another account sees 404 for the events", func(t *testing.T) {
		_, other := e.account()
		problemOf(t, e.do("GET", "/transaction/"+id+"/events", other, nil), http.StatusNotFound, "not_found")
	})
	t.Run("nothing is delivered twice", func(t *testing.T) {
		if n, _ := e.app.dispatcher.DeliverDue(context.Background()); n != 0 || len(rc.deliveries()) != 1 {
			t.Fatalf("a second pass delivered %d", n)
		}
	})
}

func TestNoWebhookWithoutAURL(t *testing.T) {
	rc := newReceiver(t)
	e := newWebhookEnv(t, rc)
	_, tok := e.account()
	e.do("POST", "/transaction", tok, minimalTransaction())
	if n, _ := e.app.dispatcher.DeliverDue(context.Background()); n != 0 {
		t.Fatalf("delivered %d events for a transaction without webhookUrl", n)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
