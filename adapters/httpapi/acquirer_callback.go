package httpapi

import (
	"io"
	"log/slog"
	"net/http"

	"github.com/gorilla/mux"
)

// CallbackDeps are what the acquirer's callback listener needs besides the notifications
// themselves. Every field is optional.
type CallbackDeps struct {
	// Observer records each answered request (metrics) under the routes' names below; nil,
	// requests are not observed.
	Observer RequestObserver
	// Logger, nil: logs are discarded.
	Logger *slog.Logger
}

// The route names of the callback listener, as RequestObserver is given them.
const (
	CallbackPixRoute   = "acquirer.callback.pix"
	CallbackProbeRoute = "acquirer.callback.probe"
)

// NewAcquirerCallback builds the server of the acquirer's callback listener: the address a PSP
// posts its notifications to, behind mutual TLS. The caller serves its Handler on a TLS
// listener that requires a client certificate chained to the PSP's CA: the handshake is the
// authentication, so these routes ask for no Authorization header (acq.Secret is not used).
//
//   - POST /acquirer/pix applies a callback exactly as the bearer-authenticated route of the
//     main server does: the same parsing, answers and logs;
//   - POST /acquirer answers 200 and applies nothing: the notification some PSPs send to a
//     URL being registered as their webhook, whatever its body;
//   - any other path answers 404 (and another method on those paths 405).
//
// Requests pass the same middleware as the main server's: request id, body limit
// (cfg.MaxBodyBytes), panic recovery, access log and observer. cfg's other fields are unused.
func NewAcquirerCallback(cfg Config, acq AcquirerDeps, deps CallbackDeps) *Server {
	if acq.Notifications == nil {
		panic("httpapi.NewAcquirerCallback: missing required dependency Notifications")
	}
	if cfg.MaxBodyBytes <= 0 {
		cfg.MaxBodyBytes = 1 << 20
	}
	log := deps.Logger
	if log == nil {
		log = slog.New(slog.NewJSONHandler(io.Discard, nil))
	}
	s := &Server{
		cfg:  Config{MaxBodyBytes: cfg.MaxBodyBytes},
		deps: Deps{Acquirer: &acq, Observer: deps.Observer, Logger: log},
		log:  log,
		// Its lines go through slog: the callback listener's traffic is the acquirer's alone.
		access: &accessLog{log: log},
	}
	r := mux.NewRouter()
	r.Use(nameRoute)
	r.NotFoundHandler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeProblem(w, r, http.StatusNotFound, "not_found", "no such route", nil)
	})
	r.MethodNotAllowedHandler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Allow", http.MethodPost)
		writeProblem(w, r, http.StatusMethodNotAllowed, "method_not_allowed", "the route does not accept "+requestMethod(r), nil)
	})
	route(r, CallbackPixRoute, http.MethodPost, "/acquirer/pix").Handler(callbackChecked(s.acquirerPix))
	route(r, CallbackProbeRoute, http.MethodPost, "/acquirer").HandlerFunc(callbackProbe)
	s.router = r
	return s
}

// callbackChecked runs the checks of the main server's acquirer route but the secret: a
// query string that does not parse and a body that is not JSON are refused before the
// handler reads anything.
func callbackChecked(h http.HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if fields := queryErrors(r.URL.RawQuery); len(fields) > 0 {
			validationFailed(w, r, fields)
			return
		}
		if !jsonBodyOrNone(w, r) {
			return
		}
		h(w, r)
	})
}

// callbackProbe answers a PSP's test notification: 200, whatever the body (read within the
// body limit and dropped), nothing applied.
func callbackProbe(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}
