package httpapi

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/gorilla/mux"

	"github.com/pixgate/pixgate/application"
	"github.com/pixgate/pixgate/domain"
	"github.com/pixgate/pixgate/ports"
)

// Authenticator turns a bearer token into the calling principal; application.Authenticate is
// the one cmd wires. Errors: ports.ErrInvalidToken (401), domain.ErrAccountDisabled (403),
// ports.ErrUnavailable (503).
type Authenticator interface {
	Execute(ctx context.Context, token string) (domain.Principal, error)
}

// RequestObserver records one answered request (metrics). Optional.
type RequestObserver interface {
	ObserveRequest(route, method string, status int, elapsed time.Duration)
}

// Config holds the adapter's settings.
type Config struct {
	// MaxBodyBytes bounds request bodies; larger ones answer 413 (1 MiB when unset).
	MaxBodyBytes int64
	// Sandbox adds the /sandbox routes; they do not exist otherwise.
	Sandbox bool
	// PublicURL is the base address of the hosted payment pages (scheme and host, no trailing
	// slash): each transaction's paymentUrl is PublicURL + "/pay/" + its token.
	PublicURL string
	// PaymentPage tunes the hosted payment page's limits (zero values take the defaults).
	PaymentPage PaymentPageConfig
}

// Deps are the use cases and ports the handlers call. Authenticator and the transaction use
// cases are required; route groups whose use cases are nil are not registered.
type Deps struct {
	Authenticator     Authenticator
	CreateTransaction *application.CreateTransaction
	GetTransaction    *application.GetTransaction
	ListTransactions  *application.ListTransactions
	RefundTransaction *application.RefundTransaction
	RateLimiter       *RateLimiter // nil: POST /transaction is not limited
	Ready             ports.Pinger
	// Clock tells the time of the request rules that depend on it (a birthdate may not be in
	// the future); nil: the wall clock, in UTC.
	Clock    ports.Clock
	Observer RequestObserver
	// Metrics serves GET /metrics with the API; nil when metrics have their own address.
	Metrics http.Handler
	Logger  *slog.Logger

	// Each route group's use cases, declared beside its routes.
	Auth        AuthDeps        // auth_routes.go
	Withdrawals WithdrawalDeps  // withdrawal_routes.go
	Sandbox     SandboxDeps     // sandbox_routes.go; registered only with Config.Sandbox
	Acquirer    AcquirerDeps    // acquirer_routes.go
	Webhooks    WebhookDeps     // webhook_routes.go
	Ledger      LedgerDeps      // ledger_routes.go
	PaymentPage PaymentPageDeps // payment_page.go; registered when its use cases are set
}

// Server is the REST adapter. Build it with New and serve Handler().
type Server struct {
	cfg    Config
	deps   Deps
	log    *slog.Logger
	router *mux.Router

	payPage    *payPage      // the payment page's template and policy
	payStreams *streamLimits // the payment page's open live channels
}

// New builds the server and its routes.
func New(cfg Config, deps Deps) *Server {
	if deps.Authenticator == nil || deps.CreateTransaction == nil || deps.GetTransaction == nil ||
		deps.ListTransactions == nil || deps.RefundTransaction == nil {
		panic("httpapi.New: the authenticator and the transaction use cases are required")
	}
	if cfg.MaxBodyBytes <= 0 {
		cfg.MaxBodyBytes = 1 << 20
	}
	log := deps.Logger
	if log == nil {
		log = slog.New(slog.NewJSONHandler(io.Discard, nil))
	}
	if deps.Clock == nil {
		deps.Clock = wallClock{}
	}
	cfg.PublicURL = strings.TrimRight(cfg.PublicURL, "/")
	cfg.PaymentPage = cfg.PaymentPage.withDefaults()
	s := &Server{cfg: cfg, deps: deps, log: log, payPage: loadPayPage(), payStreams: newStreamLimits(cfg.PaymentPage)}
	s.router = s.routes()
	return s
}

// wallClock is the clock of a server built without one.
type wallClock struct{}

func (wallClock) Now() time.Time { return time.Now().UTC() }

// Handler is the whole API with its middleware.
func (s *Server) Handler() http.Handler { return s.observe(headAsGet(s.router)) }

// RouteNames lists the names RequestObserver may be given as a route: every route's name (its
// template when unnamed) and "unmatched".
func (s *Server) RouteNames() []string {
	names := []string{"unmatched"}
	_ = s.router.Walk(func(route *mux.Route, _ *mux.Router, _ []*mux.Route) error {
		if n := route.GetName(); n != "" {
			names = append(names, n)
		} else if tpl, err := route.GetPathTemplate(); err == nil {
			names = append(names, tpl)
		}
		return nil
	})
	return names
}

// Router exposes the routes, for tests that walk them (the OpenAPI check).
func (s *Server) Router() *mux.Router { return s.router }

func (s *Server) routes() *mux.Router {
	r := mux.NewRouter()
	r.Use(nameRoute)
	r.NotFoundHandler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeProblem(w, r, http.StatusNotFound, "not_found", "no such route", nil)
	})
	r.MethodNotAllowedHandler = http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if allowed := allowedMethods(r, req); allowed != "" {
			w.Header().Set("Allow", allowed) // RFC 9110 requires it on a 405
		}
		writeProblem(w, req, http.StatusMethodNotAllowed, "method_not_allowed", "the route does not accept "+requestMethod(req), nil)
	})
	s.operationalRoutes(r)
	s.authRoutes(r)
	s.transactionRoutes(r)
	s.withdrawalRoutes(r)
	s.ledgerRoutes(r)
	s.acquirerRoutes(r)
	s.webhookRoutes(r)
	s.paymentPageRoutes(r)
	if s.cfg.Sandbox {
		s.sandboxRoutes(r)
	}
	return r
}

func (s *Server) operationalRoutes(r *mux.Router) {
	r.Name("health.live").Methods(http.MethodGet).Path("/healthz").HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})
	r.Name("health.ready").Methods(http.MethodGet).Path("/readyz").HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.deps.Ready != nil {
			ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
			defer cancel()
			if err := s.deps.Ready.Ping(ctx); err != nil {
				writeJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "unavailable"})
				return
			}
		}
		writeJSON(w, http.StatusOK, map[string]string{"status": "ready"})
	})
	s.openAPIRoute(r)
	if s.deps.Metrics != nil {
		r.Name("metrics").Methods(http.MethodGet).Path("/metrics").Handler(s.deps.Metrics)
	}
}

// allowedMethods lists the methods some route accepts for req's path, for the Allow header.
func allowedMethods(router *mux.Router, req *http.Request) string {
	var allowed []string
	for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete} {
		probe := req.Clone(req.Context())
		probe.Method = m
		var match mux.RouteMatch
		if router.Match(probe, &match) && match.MatchErr == nil {
			allowed = append(allowed, m)
			if m == http.MethodGet {
				allowed = append(allowed, http.MethodHead) // headAsGet answers it
			}
		}
	}
	return strings.Join(allowed, ", ")
}
