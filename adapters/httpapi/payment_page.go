package httpapi

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"

	"github.com/gorilla/mux"
)

// PaymentPage is the payer-facing page (adapters/paypage, README "The payment page"): the
// server routes GET /pay/{token}, /pay/{token}/status and /pay/{token}/events to it, with no
// bearer token (the token in the path is the capability), and names them for metrics. HEAD
// reaches it with its own method.
type PaymentPage interface {
	Page(w http.ResponseWriter, r *http.Request, token string)
	Status(w http.ResponseWriter, r *http.Request, token string)
	Events(w http.ResponseWriter, r *http.Request, token string)
}

func (s *Server) paymentPageRoutes(r *mux.Router) {
	p := s.deps.PaymentPage
	if p == nil {
		return
	}
	mount := func(serve func(http.ResponseWriter, *http.Request, string)) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			if requestMethod(r) == http.MethodHead {
				// headAsGet matched it as a GET; the page holds no stream open for a HEAD.
				r = r.Clone(r.Context())
				r.Method = http.MethodHead
			}
			serve(w, r, mux.Vars(r)["token"])
		}
	}
	route(r, "payment.page", http.MethodGet, "/pay/{token}").HandlerFunc(mount(p.Page))
	route(r, "payment.status", http.MethodGet, "/pay/{token}/status").HandlerFunc(mount(p.Status))
	route(r, "payment.events", http.MethodGet, "/pay/{token}/events").HandlerFunc(mount(p.Events))
}

// Problems answers errors as this API answers its own, through the one error table, for the
// routes of another adapter mounted on it (the payment page's). The zero value discards the
// log lines of internal errors.
type Problems struct{ log *slog.Logger }

// NewProblems logs internal errors to log (nil: discarded).
func NewProblems(log *slog.Logger) Problems {
	if log == nil {
		log = slog.New(slog.NewJSONHandler(io.Discard, nil))
	}
	return Problems{log: log}
}

// Status is the status errorTable gives err (500 when it is not there).
func (Problems) Status(err error) int {
	for _, e := range errorTable {
		if errors.Is(err, e.err) {
			return e.status
		}
	}
	return http.StatusInternalServerError
}

// WriteProblem answers status with a problem of code and detail.
func (Problems) WriteProblem(w http.ResponseWriter, r *http.Request, status int, code, detail string) {
	writeProblem(w, r, status, code, detail, nil)
}

// RequestID is the id the middleware gave the request ctx belongs to.
func (Problems) RequestID(ctx context.Context) string { return requestIDFrom(ctx) }
