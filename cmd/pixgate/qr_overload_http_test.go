package main

import (
	"context"
	"fmt"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/pixgate/pixgate/adapters/qr"
	"github.com/pixgate/pixgate/ports"
)

// fullQueue is the real QR renderer, except that while full is set it answers as the real one
// does when its queue of waiting creations is full (its own test, in adapters/qr, fills the
// queue for real; here the point is what the merchant sees).
type fullQueue struct {
	real *qr.Renderer
	full atomic.Bool
}

func (f *fullQueue) RenderPNG(ctx context.Context, content string) ([]byte, error) {
	if f.full.Load() {
		return nil, fmt.Errorf("%w: 64 QR drawings are already waiting", ports.ErrOverloaded)
	}
	return f.real.RenderPNG(ctx, content)
}

func TestCreateTransaction503WhenTheQRQueueIsFull(t *testing.T) {
	renderer := &fullQueue{real: qr.NewRenderer(1)}
	e := newEnv(t, nil, func(a *app) { a.renderer = renderer })
	_, tok := e.account()
	body := fullTransaction()
	body["idempotencyKey"] = "queue-full-0001"

	renderer.full.Store(true)
	refused := e.do("POST", "/transaction", tok, body)
	problemOf(t, refused, http.StatusServiceUnavailable, "unavailable")
	if got := refused.header.Get("Retry-After"); got != "1" {
		t.Errorf("Retry-After = %q, want 1", got)
	}
	if refused.header.Get("Location") != "" {
		t.Errorf("a refused creation names a Location: %q", refused.header.Get("Location"))
	}

	t.Run("nothing was stored", func(t *testing.T) {
		list := e.do("GET", "/transaction", tok, nil)
		if list.status != http.StatusOK || list.json(t)["total"] != float64(0) {
			t.Fatalf("the list after a refused creation: %d %s", list.status, list.body)
		}
	})
	t.Run("a retry with the same key creates the transaction, and the next one replays it", func(t *testing.T) {
		renderer.full.Store(false)
		created := e.do("POST", "/transaction", tok, body)
		if created.status != http.StatusCreated || created.header.Get("Idempotent-Replayed") != "" {
			t.Fatalf("the retry: %d (replayed %q) %s", created.status, created.header.Get("Idempotent-Replayed"), created.body)
		}
		if created.json(t)["status"] != "PIX_QRCODE_GENERATED" {
			t.Fatalf("the retry created %s", created.body)
		}
		again := e.do("POST", "/transaction", tok, body)
		if again.status != http.StatusCreated || again.header.Get("Idempotent-Replayed") != "true" {
			t.Fatalf("the second retry: %d (replayed %q)", again.status, again.header.Get("Idempotent-Replayed"))
		}
		if list := e.do("GET", "/transaction", tok, nil); list.json(t)["total"] != float64(1) {
			t.Fatalf("the list: %s", list.body)
		}
	})
}
