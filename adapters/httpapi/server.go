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
}

// Deps are the use cases and ports the handlers call. Every use case is required, and New
// panics naming each one missing, except the ones marked optional: an optional dependency
// that is nil leaves out what it serves (said beside it).
type Deps struct {
	Authenticator     Authenticator
	CreateTransaction *application.CreateTransaction
	GetTransaction    *application.GetTransaction
	ListTransactions  *application.ListTransactions
	RefundTransaction *application.RefundTransaction
	// Optional: nil, POST /transaction is not limited.
	RateLimiter *RateLimiter
	// Optional: nil, GET /readyz answers ready without checking the store.
	Ready ports.Pinger
	// Optional: the time of the request rules that depend on it (a birthdate may not be in the
	// future); nil, the wall clock, in UTC.
	Clock ports.Clock
	// Optional: nil, requests are not observed.
	Observer RequestObserver
	// Optional: serves GET /metrics with the API; nil when metrics have their own address.
	Metrics http.Handler
	// Optional: nil, logs are discarded.
	Logger *slog.Logger
	// Optional: Logger's output, when Logger is slog's JSON handler over it with no options but
	// the level (as cmd builds it): the access log's lines are then written to it by hand, the
	// same bytes at a fraction of the cost (accesslog.go). It must take concurrent Writes, one
	// line each. Nil, they go through Logger.
	AccessLog io.Writer

	// Each route group's use cases, declared beside its routes.
	Auth        AuthDeps       // auth_routes.go
	Withdrawals WithdrawalDeps // withdrawal_routes.go
	Sandbox     SandboxDeps    // sandbox_routes.go; registered only with Config.Sandbox
	Webhooks    WebhookDeps    // webhook_routes.go
	Ledger      LedgerDeps     // ledger_routes.go
	// Optional: nil, POST /acquirer/pix does not exist (no acquirer secret is configured).
	Acquirer *AcquirerDeps // acquirer_routes.go
	// Optional: nil, the payload locations of dynamic charges do not exist (no public URL).
	PixLocation *PixLocationDeps // pix_location_routes.go
	// Optional: nil, the /pay routes do not exist (an API tested alone).
	PaymentPage PaymentPage // payment_page.go
}

// missing names the required dependencies that are nil; the sandbox's are required with
// Config.Sandbox.
func (d Deps) missing(sandbox bool) []string {
	var names []string
	need := func(name string, set bool) {
		if !set {
			names = append(names, name)
		}
	}
	need("Authenticator", d.Authenticator != nil)
	need("CreateTransaction", d.CreateTransaction != nil)
	need("GetTransaction", d.GetTransaction != nil)
	need("ListTransactions", d.ListTransactions != nil)
	need("RefundTransaction", d.RefundTransaction != nil)
	need("Auth.Token", d.Auth.Token != nil)
	need("Auth.JWKS", d.Auth.JWKS != nil)
	need("Auth.CreateCredential", d.Auth.CreateCredential != nil)
	need("Auth.ListCredentials", d.Auth.ListCredentials != nil)
	need("Auth.RevokeCredential", d.Auth.RevokeCredential != nil)
	need("Auth.GetWebhookSecret", d.Auth.GetWebhookSecret != nil)
	need("Auth.RotateWebhookSecret", d.Auth.RotateWebhookSecret != nil)
	need("Withdrawals.Create", d.Withdrawals.Create != nil)
	need("Withdrawals.Get", d.Withdrawals.Get != nil)
	need("Withdrawals.Cancel", d.Withdrawals.Cancel != nil)
	need("Withdrawals.Balance", d.Withdrawals.Balance != nil)
	need("Webhooks.ListEvents", d.Webhooks.ListEvents != nil)
	need("Ledger.Entries", d.Ledger.Entries != nil)
	need("Sandbox (every use case)", !sandbox || d.Sandbox.complete())
	if d.Acquirer != nil {
		need("Acquirer.Notifications", d.Acquirer.Notifications != nil)
		need("Acquirer.Secret", d.Acquirer.Secret != "")
	}
	if d.PixLocation != nil {
		need("PixLocation.Show", d.PixLocation.Show != nil)
		need("PixLocation.KeySet", len(d.PixLocation.KeySet) > 0)
	}
	return names
}

// Server is the REST adapter. Build it with New and serve Handler().
type Server struct {
	cfg    Config
	deps   Deps
	log    *slog.Logger
	access *accessLog
	router *mux.Router

	jsonBufs jsonBuffers // the buffers of GET /transaction/{id}'s answers (transaction_json.go)

	// templates holds the path templates of the routes routeLastSegment registers, which mux
	// does not know (they have no path matcher of its own).
	templates map[*mux.Route]string
}

// New builds the server and its routes.
func New(cfg Config, deps Deps) *Server {
	if missing := deps.missing(cfg.Sandbox); len(missing) > 0 {
		panic("httpapi.New: missing required dependencies: " + strings.Join(missing, ", "))
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
	s := &Server{cfg: cfg, deps: deps, log: log, access: &accessLog{log: log, w: deps.AccessLog}}
	s.router = s.routes()
	return s
}

// wallClock is the clock of a server built without one.
type wallClock struct{}

func (wallClock) Now() time.Time { return time.Now().UTC() }

// Handler is the whole API with its middleware.
func (s *Server) Handler() http.Handler { return s.observe(headAsGet(s.router)) }

// Route is one route the server serves.
type Route struct {
	// Name is what RequestObserver is given for it: the route's name, or its path template
	// when it has none.
	Name string
	// Methods it accepts; empty when it accepts any.
	Methods []string
	// Path is its path template ("/transaction/{id}").
	Path string
}

// Routes lists every route the server serves, in the order they are matched.
func (s *Server) Routes() []Route {
	var out []Route
	_ = s.router.Walk(func(route *mux.Route, _ *mux.Router, _ []*mux.Route) error {
		tpl, err := route.GetPathTemplate()
		if err != nil {
			if tpl = s.templates[route]; tpl == "" {
				return nil // a route without a path: none is registered
			}
		}
		methods, _ := route.GetMethods()
		out = append(out, Route{Name: s.routeLabel(route), Methods: methods, Path: tpl})
		return nil
	})
	return out
}

// RouteNames lists the names RequestObserver may be given as a route: every route's name (its
// template when unnamed) and "unmatched".
func (s *Server) RouteNames() []string {
	names := []string{"unmatched"}
	for _, r := range s.Routes() {
		names = append(names, r.Name)
	}
	return names
}

func (s *Server) routes() *mux.Router {
	r := mux.NewRouter()
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
	s.pixLocationRoutes(r)
	if s.cfg.Sandbox {
		s.sandboxRoutes(r)
	}
	// Each route's handler records the route's name (nameRoute's work). As a mux middleware
	// (Router.Use) it was wrapped around the handler again on every request, and looked the
	// route up in the request's context; the name is known here.
	_ = r.Walk(func(route *mux.Route, _ *mux.Router, _ []*mux.Route) error {
		if h := route.GetHandler(); h != nil {
			route.Handler(namedRoute(s.routeLabel(route), h))
		}
		return nil
	})
	return r
}

// routeLabel is route's name, or its path template when it has none (routeName).
func (s *Server) routeLabel(route *mux.Route) string {
	if n := route.GetName(); n != "" {
		return n
	}
	if tpl, err := route.GetPathTemplate(); err == nil {
		return tpl
	}
	return s.templates[route]
}

// route registers the route name for method and the path template tpl on r.
//
// gorilla/mux tries the routes in the order they were registered and runs each one's path
// regexp, even where the method differs (to tell a 405 from a 404): a lookup ran a dozen
// regexps before reaching its own route. So each route's first matcher is a string test of the
// literal start of its template (up to its first variable), which every path the route's
// regexp matches starts with, or, for a template without variables, the whole template, which
// is the only path it matches: a route whose path cannot match is passed over without a regexp.
//
// The test must leave every answer as it was, and in mux v1.8.1 a matcher that succeeds has a
// side effect: it clears an ErrMethodMismatch an earlier route recorded (why a POST to a path
// only a GET route serves answers 404 when a later route accepts POST). While such an error is
// recorded, the test therefore succeeds exactly when one of the route's own matchers would (its
// method, or its path as mux matches it), so that the error is cleared as often as without it.
// The routers of this package keep mux's defaults, which the path matcher below has too.
func route(r *mux.Router, name, method, tpl string) *mux.Route {
	prefix, _, variables := strings.Cut(tpl, "{")
	path := mux.NewRouter().NewRoute().Path(tpl) // the route's path matcher alone
	return r.Name(name).MatcherFunc(func(req *http.Request, m *mux.RouteMatch) bool {
		if m.MatchErr == mux.ErrMethodMismatch {
			return req.Method == method || path.Match(req, &mux.RouteMatch{})
		}
		if !variables {
			return req.URL.Path == tpl // mux matches req.URL.Path, not its encoded form
		}
		return strings.HasPrefix(req.URL.Path, prefix)
	}).Methods(method).Path(tpl)
}

// routeLastSegment is route for a template whose only variable is its last segment, with mux's
// default pattern ("/transaction/{id}"), matched without a regexp. mux matches such a template
// with ^prefix([^/]+)$ and runs that regexp twice on a match (to match, then to extract the
// variable into a map it allocates); here a string test of the same language (the prefix, then
// at least one byte and no slash) takes its place, in the same position among the route's
// matchers, so that every 404 and 405 stays as route's. mux then knows no variable: the handler
// reads the segment with lastSegment. The template is kept for Routes.
func (s *Server) routeLastSegment(r *mux.Router, name, method, tpl string) *mux.Route {
	prefix, variable, _ := strings.Cut(tpl, "{")
	if prefix == "" || !strings.HasSuffix(prefix, "/") || strings.ContainsAny(variable, "{/:") || !strings.HasSuffix(variable, "}") {
		panic("routeLastSegment: " + tpl + " is not a template whose last segment is its only variable")
	}
	matches := func(req *http.Request) bool {
		rest, ok := strings.CutPrefix(req.URL.Path, prefix) // mux matches req.URL.Path, not its encoded form
		return ok && rest != "" && strings.IndexByte(rest, '/') < 0
	}
	rt := r.Name(name).MatcherFunc(func(req *http.Request, m *mux.RouteMatch) bool {
		if m.MatchErr == mux.ErrMethodMismatch { // as route's guard: see there
			return req.Method == method || matches(req)
		}
		return matches(req)
	}).Methods(method).MatcherFunc(func(req *http.Request, _ *mux.RouteMatch) bool { return matches(req) })
	if s.templates == nil {
		s.templates = make(map[*mux.Route]string)
	}
	s.templates[rt] = tpl
	return rt
}

// lastSegment is the last segment of a path that a routeLastSegment route matched.
func lastSegment(path string) string { return path[strings.LastIndexByte(path, '/')+1:] }

func (s *Server) operationalRoutes(r *mux.Router) {
	route(r, "health.live", http.MethodGet, "/healthz").HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})
	route(r, "health.ready", http.MethodGet, "/readyz").HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
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
		route(r, "metrics", http.MethodGet, "/metrics").Handler(s.deps.Metrics)
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
