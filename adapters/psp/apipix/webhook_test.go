package apipix_test

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/pixgate/pixgate/adapters/psp"
	"github.com/pixgate/pixgate/adapters/psp/psptest"
)

func TestTheWebhookIsReadAndRegisteredForPixgatesKey(t *testing.T) {
	t.Parallel()
	p := psptest.New(t, psptest.Config{Chave: "pix@pixgate.example"}) // an e-mail key: '@' in the path
	c := newClient(t, p, nil)
	ctx := context.Background()

	got, err := c.RegisteredWebhook(ctx)
	if err != nil || got != "" {
		t.Fatalf("before any registration: %q, %v; want none", got, err)
	}
	const url = "https://callbacks.pixgate.example/acquirer"
	if err := c.RegisterWebhook(ctx, url); err != nil {
		t.Fatal(err)
	}
	if hook, ok := p.Webhook(p.Chave); !ok || hook.WebhookURL != url {
		t.Fatalf("the PSP holds %+v, want %s", hook, url)
	}
	if got, err := c.RegisteredWebhook(ctx); err != nil || got != url {
		t.Fatalf("after the registration: %q, %v; want %s", got, err, url)
	}
}

func TestWebhookCallsThatFailSayWhy(t *testing.T) {
	t.Parallel()
	p := psptest.New(t, psptest.Config{})
	c := newClient(t, p, nil)
	ctx := context.Background()

	t.Run("a refused registration is refused", func(t *testing.T) {
		// The fake refuses a URL that is not https, as the specification's schema does.
		err := c.RegisterWebhook(ctx, "http://callbacks.pixgate.example/acquirer")
		if !errors.Is(err, psp.ErrRefused) {
			t.Fatalf("err = %v, want a refusal", err)
		}
	})
	t.Run("a PSP that stays down leaves the outcome unknown", func(t *testing.T) {
		p.Inject(psptest.Fault{Op: psptest.OpWebhookGet, Status: http.StatusServiceUnavailable, RetryAfter: "0"}, -1)
		defer p.ClearFaults()
		if _, err := c.RegisteredWebhook(ctx); !errors.Is(err, psp.ErrOutcomeUnknown) {
			t.Fatalf("err = %v, want an unknown outcome", err)
		}
	})
}
