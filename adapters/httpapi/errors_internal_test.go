package httpapi

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/pixgate/pixgate/domain"
	"github.com/pixgate/pixgate/ports"
)

// TestDomainErrorsAnswerTheirProblem holds the error table to its rows for the errors the
// request mapping should catch first: should a rule and a domain constructor drift apart, the
// merchant gets a 4xx problem naming what the domain refused, never a 500. It holds the rows
// of the creations refused for want of a QR code too: 503 with Retry-After.
func TestDomainErrorsAnswerTheirProblem(t *testing.T) {
	s := &Server{log: slog.New(slog.NewJSONHandler(io.Discard, nil))}
	_, pixErr := domain.NewPixKey(domain.PixKeyCPF, "not a cpf")
	_, typeErr := domain.NewPixKey("BANK", "x")
	for _, c := range []struct {
		name   string
		err    error
		status int
		code   string
	}{
		{"an order the domain refuses answers 422 validation_failed", fmt.Errorf("%w: a physical product needs an address", domain.ErrInvalidOrder), 422, "validation_failed"},
		{"a PIX key that does not match its type answers 422 validation_failed", pixErr, 422, "validation_failed"},
		{"an unknown PIX key type answers 422 validation_failed", typeErr, 422, "validation_failed"},
		{"a withdrawal refused for its key answers 422 validation_failed", fmt.Errorf("%w: %w", domain.ErrInvalidOrder, domain.ErrInvalidPixKey), 422, "validation_failed"},
		{"a duplicate creation answers 409 conflict", fmt.Errorf("memory: transaction payment token: %w", ports.ErrDuplicate), 409, "conflict"},
		{"a full QR queue answers 503 unavailable with Retry-After", fmt.Errorf("%w: 64 QR drawings are already waiting", ports.ErrOverloaded), 503, "unavailable"},
		{"a QR code not drawn in time answers 503 unavailable with Retry-After", fmt.Errorf("%w: the QR code was not drawn within 10s", ports.ErrTimedOut), 503, "unavailable"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.err == nil {
				t.Fatal("the case builds no error")
			}
			rec := httptest.NewRecorder()
			s.writeError(rec, httptest.NewRequest(http.MethodPost, "/transaction", nil), c.err)
			var p problem
			if err := json.Unmarshal(rec.Body.Bytes(), &p); err != nil {
				t.Fatalf("body %q: %v", rec.Body, err)
			}
			if rec.Code != c.status || p.Code != c.code || p.Status != c.status || p.Detail == "" {
				t.Fatalf("answered %d %q (%q), want %d %q", rec.Code, p.Code, p.Detail, c.status, c.code)
			}
			if got := rec.Header().Get("Retry-After"); (c.status == http.StatusServiceUnavailable) != (got == "1") {
				t.Fatalf("answered %d with Retry-After %q; a 503, and only a 503, says 1", rec.Code, got)
			}
		})
	}
}
