package paypage_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/pixgate/pixgate/adapters/paypage"
	"github.com/pixgate/pixgate/application"
	"github.com/pixgate/pixgate/domain"
	"github.com/pixgate/pixgate/ports"
)

// The charges behind real tokens, the live channel and the merchant API's mount are tested
// through the API (adapters/httpapi, payment_page_test.go) and in Chromium (test/browser);
// these cases need no store: a malformed token is not found before any look-up.

// noStore panics in a test that reaches it.
type noStore struct {
	ports.TransactionRepository
	ports.AccountRepository
}

type fixedClock struct{}

func (fixedClock) Now() time.Time { return time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC) }

// problems answers like the merchant API would, and records what it was asked.
type problems struct{ errs []error }

func (p *problems) WriteError(w http.ResponseWriter, r *http.Request, err error) {
	p.errs = append(p.errs, err)
	p.WriteProblem(w, r, p.Status(err), "from_the_table", err.Error())
}

func (p *problems) Status(err error) int {
	if errors.Is(err, domain.ErrNotFound) {
		return http.StatusNotFound
	}
	return http.StatusInternalServerError
}

func (p *problems) WriteProblem(w http.ResponseWriter, _ *http.Request, status int, code, _ string) {
	w.Header().Set("Content-Type", "application/problem+json")
	w.WriteHeader(status)
	_, _ = w.Write([]byte(`{"code":"` + code + `"}`))
}

func (p *problems) RequestID(context.Context) string { return "req-1" }

// refuse is a limiter over its limit.
type refuse struct{ keys []string }

func (l *refuse) Allow(key string) (bool, time.Duration) {
	l.keys = append(l.keys, key)
	return false, 1500 * time.Millisecond
}

func newPage(t *testing.T, limiter paypage.Limiter) (*paypage.Handler, *problems) {
	t.Helper()
	store := noStore{}
	p := &problems{}
	deps := paypage.Deps{
		Show:     application.NewShowPaymentPage(store, store, fixedClock{}),
		Follow:   application.NewFollowPayment(store, fixedClock{}),
		Problems: p,
	}
	if limiter != nil {
		deps.Limiter = limiter
	}
	return paypage.New(paypage.Config{}, deps), p
}

func get(serve func(http.ResponseWriter, *http.Request, string), token, lang string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(http.MethodGet, "/pay/"+token, nil)
	r.RemoteAddr = "198.51.100.7:40000"
	if lang != "" {
		r.Header.Set("Accept-Language", lang)
	}
	w := httptest.NewRecorder()
	serve(w, r, token)
	return w
}

func TestHandler(t *testing.T) {
	t.Parallel()
	const malformed = "not-a-token!"

	t.Run("page404 is the not-found page in the payer's language, under the page's policy", func(t *testing.T) {
		t.Parallel()
		h, _ := newPage(t, nil)
		w := get(h.Page, malformed, "en")
		body := w.Body.String()
		if w.Code != http.StatusNotFound || !strings.Contains(body, `lang="en"`) || !strings.Contains(body, "Charge not found") {
			t.Fatalf("%d %s", w.Code, body)
		}
		for hd, want := range map[string]string{"Content-Type": "text/html; charset=utf-8", "X-Frame-Options": "DENY",
			"Cache-Control": "no-store", "Vary": "Accept-Language", "Referrer-Policy": "no-referrer"} {
			if got := w.Header().Get(hd); got != want {
				t.Errorf("%s = %q, want %q", hd, got, want)
			}
		}
		if csp := w.Header().Get("Content-Security-Policy"); !strings.HasPrefix(csp, "default-src 'none'; script-src 'sha256-") {
			t.Errorf("CSP %q", csp)
		}
	})

	t.Run("status404 and events404 are the merchant API's problems for the error", func(t *testing.T) {
		t.Parallel()
		h, p := newPage(t, nil)
		for name, serve := range map[string]func(http.ResponseWriter, *http.Request, string){"status": h.Status, "events": h.Events} {
			w := get(serve, malformed, "")
			if w.Code != http.StatusNotFound || w.Body.String() != `{"code":"from_the_table"}` || w.Header().Get("Content-Security-Policy") == "" {
				t.Errorf("%s: %d %s", name, w.Code, w.Body)
			}
		}
		if len(p.errs) != 2 || !errors.Is(p.errs[0], domain.ErrNotFound) || !errors.Is(p.errs[1], domain.ErrNotFound) {
			t.Fatalf("errors handed to the API: %v", p.errs)
		}
		if n := h.OpenStreams(); n != 0 {
			t.Fatalf("%d streams open", n)
		}
	})

	t.Run("page429 is the too-many page, status429 a rate_limited problem, both with whole seconds to wait", func(t *testing.T) {
		t.Parallel()
		l := &refuse{}
		h, _ := newPage(t, l)
		page := get(h.Page, malformed, "pt-BR")
		if page.Code != http.StatusTooManyRequests || !strings.Contains(page.Body.String(), "Muitas tentativas") ||
			page.Header().Get("Retry-After") != "2" {
			t.Fatalf("page: %d Retry-After %q", page.Code, page.Header().Get("Retry-After"))
		}
		status := get(h.Status, malformed, "")
		if status.Code != http.StatusTooManyRequests || status.Body.String() != `{"code":"rate_limited"}` || status.Header().Get("Retry-After") != "2" {
			t.Fatalf("status: %d %s", status.Code, status.Body)
		}
		if len(l.keys) != 2 || l.keys[0] != "pay/198.51.100.7" {
			t.Fatalf("limited by %q; want the client address", l.keys)
		}
	})

	t.Run("New names every missing dependency", func(t *testing.T) {
		t.Parallel()
		defer func() {
			if msg, _ := recover().(string); !strings.Contains(msg, "Show, Follow, Problems") {
				t.Fatalf("panic %q", msg)
			}
		}()
		paypage.New(paypage.Config{}, paypage.Deps{})
	})
}
