package httpapi

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"net/http"
	"net/url"
	"runtime/debug"
	"strings"
	"time"

	"github.com/gorilla/mux"

	"github.com/pixgate/pixgate/domain"
)

type ctxKey int

const stateKey ctxKey = 0

// requestState is what the middleware learns about a request as it goes in, kept in one
// context value that observe puts there (one allocation and one request copy per request,
// not one per fact): the request id, the matched route's name (which the router knows and
// observe logs: mux records the match only on the request it hands inwards), whether the
// request came as HEAD, and the authenticated principal. Only the request's own goroutine
// writes it, before the handler that reads it runs.
type requestState struct {
	id        string
	route     string
	head      bool // the request came as HEAD and is served as GET
	principal domain.Principal
}

func stateOf(ctx context.Context) *requestState {
	s, _ := ctx.Value(stateKey).(*requestState)
	if s == nil {
		return &requestState{} // a request that did not go through observe (some tests)
	}
	return s
}

// requestMethod is the method the client sent (HEAD, where headAsGet made it GET).
func requestMethod(r *http.Request) string {
	if stateOf(r.Context()).head {
		return http.MethodHead
	}
	return r.Method
}

// nameRoute is a mux middleware: it runs after matching and records the route's name.
func nameRoute(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s, ok := r.Context().Value(stateKey).(*requestState); ok {
			s.route = routeName(r)
		}
		next.ServeHTTP(w, r)
	})
}

// namedRoute is nameRoute for a handler whose route's name is known: it records name.
func namedRoute(name string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s, ok := r.Context().Value(stateKey).(*requestState); ok {
			s.route = name
		}
		next.ServeHTTP(w, r)
	})
}

func requestIDFrom(ctx context.Context) string { return stateOf(ctx).id }

func principalFrom(ctx context.Context) domain.Principal { return stateOf(ctx).principal }

// validRequestID accepts a client's X-Request-Id of 1 to 128 printable ASCII characters.
func validRequestID(s string) bool {
	if s == "" || len(s) > 128 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

func newRequestID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// observed is what observe allocates once per request.
type observed struct {
	state   requestState
	rec     statusRecorder
	headers [3]string // X-Request-Id, X-Content-Type-Options, Cache-Control
}

// statusRecorder remembers the status a handler answered, for the access log and metrics.
type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (s *statusRecorder) WriteHeader(code int) {
	if s.status == 0 {
		s.status = code
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusRecorder) Write(b []byte) (int, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	return s.ResponseWriter.Write(b)
}

func (s *statusRecorder) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// routeName is the name of the matched route (its template when unnamed): the label of logs
// and metrics, so that ids in paths never multiply label values or reach a log.
func routeName(r *http.Request) string {
	route := mux.CurrentRoute(r)
	if route == nil {
		return "unmatched"
	}
	if n := route.GetName(); n != "" {
		return n
	}
	tpl, _ := route.GetPathTemplate()
	return tpl
}

// observe is the outermost middleware: request id, body limit, panic recovery, access log
// and the request observer (metrics). It logs the route, never the path or the query string,
// which may hold documents or e-mail addresses.
func (s *Server) observe(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		id := r.Header.Get("X-Request-Id")
		if !validRequestID(id) {
			id = newRequestID()
		}
		// One allocation for what every request keeps: its state, the status recorder and
		// the values of the three headers every answer carries. Each header's slice is full
		// (cap 1), so that a handler's Add copies instead of writing into the next one's.
		o := &observed{state: requestState{id: id, route: "unmatched"}, rec: statusRecorder{ResponseWriter: w},
			headers: [3]string{id, "nosniff", "no-store"}}
		h := w.Header()
		h["X-Request-Id"] = o.headers[0:1:1]
		h["X-Content-Type-Options"] = o.headers[1:2:2]
		h["Cache-Control"] = o.headers[2:3:3] // answers carry account data; a handler may relax it (JWKS)
		state, rec := &o.state, &o.rec
		ctx := context.WithValue(r.Context(), stateKey, state)
		r = r.WithContext(ctx)
		if r.Body != http.NoBody { // the server's body of a request without one: nothing to limit
			r.Body = http.MaxBytesReader(w, r.Body, s.cfg.MaxBodyBytes)
		}
		defer func() {
			route := state.route
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				s.log.ErrorContext(ctx, "panic serving request", slog.String("requestId", id),
					slog.Any("panic", v), slog.String("stack", string(debug.Stack())))
				if rec.status == 0 {
					writeProblem(rec, r, http.StatusInternalServerError, "internal_error", "an internal error occurred; quote the request id to support", nil)
				}
			}
			end := time.Now()
			elapsed := end.Sub(start)
			s.access.request(ctx, end, id, r.Method, route, rec.status, elapsed)
			if s.deps.Observer != nil {
				s.deps.Observer.ObserveRequest(route, r.Method, rec.status, elapsed)
			}
		}()
		next.ServeHTTP(rec, r)
	})
}

// queryErrors judges a query string before any handler reads it: one that does not parse (a
// ";" separator, bad percent-encoding) would otherwise lose the parameters that did not
// parse, and a filter silently dropped lists everything; a parameter holding U+0000 is
// invalid_format, like a string of a body.
func queryErrors(rawQuery string) []FieldError {
	if rawQuery == "" {
		return nil
	}
	q, err := url.ParseQuery(rawQuery)
	if err != nil {
		return []FieldError{{Field: "query", Code: "invalid_format",
			Message: "the query string does not parse: separate parameters with & and percent-encode reserved characters"}}
	}
	var fields []FieldError
	for name, values := range q {
		for _, v := range values {
			if strings.IndexByte(name, 0) >= 0 || strings.IndexByte(v, 0) >= 0 {
				fields = append(fields, FieldError{Field: name, Code: "invalid_format", Message: nulMessage})
				break
			}
		}
		if len(fields) >= maxFieldErrors {
			break
		}
	}
	return fields
}

// jsonBodyOrNone answers 415 to a POST whose body is not JSON, and false; every business POST
// reads JSON or nothing (a route that ignores its body still refuses one of another media
// type, so that no client learns to send anything else). Other methods take no body.
func jsonBodyOrNone(w http.ResponseWriter, r *http.Request) bool {
	if r.Method != http.MethodPost || !hasBody(r) || isJSONMediaType(r.Header.Get("Content-Type")) {
		return true
	}
	writeProblem(w, r, http.StatusUnsupportedMediaType, "unsupported_media_type",
		"the body must be sent as Content-Type: application/json", nil)
	return false
}

// headAsGet answers HEAD wherever GET is answered: the GET route runs, with the same status
// and headers. net/http's server, which still knows the request as HEAD, counts the body for
// Content-Length and sends none of it. The request keeps its method for the access log and
// metrics, which run outside.
func headAsGet(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodHead {
			next.ServeHTTP(w, r)
			return
		}
		stateOf(r.Context()).head = true
		get := r.Clone(r.Context())
		get.Method = http.MethodGet
		next.ServeHTTP(w, get)
	})
}

// bearerToken extracts the token of an "Authorization: Bearer <token>" header. The scheme is
// case-insensitive (RFC 9110); exactly one token must follow it.
func bearerToken(r *http.Request) (token string, present bool) {
	h := r.Header.Get("Authorization")
	if h == "" {
		return "", false
	}
	scheme, rest, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", true
	}
	rest = strings.Trim(rest, " ")
	// Two IndexByte scans: ContainsAny walks a 700-byte token a byte at a time.
	if rest == "" || strings.IndexByte(rest, ' ') >= 0 || strings.IndexByte(rest, '\t') >= 0 {
		return "", true
	}
	return rest, true
}

// authed wraps a handler that needs a bearer token with scope (none: any valid token of the
// account). The principal reaches the handler through the request context.
func (s *Server) authed(scope domain.Scope, h http.HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		token, present := bearerToken(r)
		if token == "" {
			if present {
				w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token"`)
			} else {
				w.Header().Set("WWW-Authenticate", `Bearer`)
			}
			writeProblem(w, r, http.StatusUnauthorized, "unauthorized", "a valid bearer token is required", nil)
			return
		}
		p, err := s.deps.Authenticator.Execute(r.Context(), token)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		if scope != "" && !p.HasScope(scope) {
			w.Header().Set("WWW-Authenticate", `Bearer error="insufficient_scope", scope="`+string(scope)+`"`)
			writeProblem(w, r, http.StatusForbidden, "insufficient_scope", "the token lacks the scope "+string(scope), nil)
			return
		}
		if fields := queryErrors(r.URL.RawQuery); len(fields) > 0 {
			validationFailed(w, r, fields)
			return
		}
		if !jsonBodyOrNone(w, r) {
			return
		}
		state, ok := r.Context().Value(stateKey).(*requestState)
		if !ok { // a request that did not go through observe (some tests)
			state = &requestState{}
			r = r.WithContext(context.WithValue(r.Context(), stateKey, state))
		}
		state.principal = p
		h(w, r)
	})
}
