package httpapi_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
)

func TestWebhookOfCreationIsSignedAndCarriesTheResourceAsGETShowsIt(t *testing.T) {
	t.Parallel()
	rc := newWebhookReceiver(t)
	a := newWebhookAPI(t, rc)
	accountID, tok := a.account()
	body := fullTransaction()
	body["webhookUrl"] = rc.url("/hooks/pix?shop=1")
	created := a.do("POST", "/transaction", tok, body)
	if created.status != http.StatusCreated {
		t.Fatalf("%d %s", created.status, created.body)
	}
	id := created.json(t)["id"].(string)
	afterCreation := a.do("GET", "/transaction/"+id, tok, nil)

	if n := a.deliver(); n != 1 {
		t.Fatalf("DeliverDue = %d; want 1 delivery", n)
	}
	got := rc.deliveries()
	if len(got) != 1 {
		t.Fatalf("%d deliveries, want 1", len(got))
	}
	d := got[0]

	account, err := a.accounts.GetAccount(context.Background(), accountID)
	must(t, err)
	wh, err := standardwebhooks.NewWebhook(account.Webhook().Current)
	must(t, err)
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
	must(t, json.Unmarshal(d.body, &event))
	if event.Type != "transaction.pix_qrcode_generated" || event.ID != d.header.Get("webhook-id") || event.CreatedAt == "" {
		t.Fatalf("event = %+v, webhook-id %q", event, d.header.Get("webhook-id"))
	}
	var data, get map[string]any
	_ = json.Unmarshal(event.Data, &data)
	_ = json.Unmarshal(afterCreation.body, &get)
	if x, y := jsonText(t, data), jsonText(t, get); x != y {
		t.Fatalf("data differs from GET:\n%s\n%s", x, y)
	}
	if u, _ := data["paymentUrl"].(string); !strings.HasPrefix(u, a.srv.URL+"/pay/") {
		t.Fatalf("data.paymentUrl = %q, want the charge's payment page on this server", u)
	}

	t.Run("the events route shows the delivery and its attempt", func(t *testing.T) {
		t.Parallel()
		r := a.do("GET", "/transaction/"+id+"/events", tok, nil)
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
		t.Parallel()
		_, other := a.account()
		problem(t, a.do("GET", "/transaction/"+id+"/events", other, nil), http.StatusNotFound, "not_found")
	})
	t.Run("nothing is delivered twice", func(t *testing.T) {
		t.Parallel()
		if n, _ := a.dispatcher.DeliverDue(context.Background()); n != 0 || len(rc.deliveries()) != 1 {
			t.Fatalf("a second pass delivered %d", n)
		}
	})
}

func TestNoWebhookWithoutAURL(t *testing.T) {
	t.Parallel()
	rc := newWebhookReceiver(t)
	a := newWebhookAPI(t, rc)
	_, tok := a.account()
	a.do("POST", "/transaction", tok, minimalTransaction())
	if n, _ := a.dispatcher.DeliverDue(context.Background()); n != 0 {
		t.Fatalf("delivered %d events for a transaction without webhookUrl", n)
	}
}
