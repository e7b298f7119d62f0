package paypage

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/pixgate/pixgate/application"
)

// Config bounds the live channel of the payment page. Zero values take the defaults in
// brackets.
type Config struct {
	// MaxStreamsPerCharge and MaxStreamsPerAddress bound the live channels open at once to one
	// charge and from one client address [5, 20]; one more answers 429 and the page polls the
	// status route instead.
	MaxStreamsPerCharge  int
	MaxStreamsPerAddress int
	// PollEvery is how often a live channel reads the charge's state [1s]: a payment shows on
	// the page at most this long after it is stored.
	PollEvery time.Duration
	// Heartbeat is how often an idle live channel sends a comment, so that proxies keep it [15s].
	Heartbeat time.Duration
	// Margin is how long after the charge's expirationDate a live channel stays open [5m]; it
	// closes earlier when the charge reaches a final status.
	Margin time.Duration
}

func (c Config) withDefaults() Config {
	if c.MaxStreamsPerCharge <= 0 {
		c.MaxStreamsPerCharge = 5
	}
	if c.MaxStreamsPerAddress <= 0 {
		c.MaxStreamsPerAddress = 20
	}
	if c.PollEvery <= 0 {
		c.PollEvery = time.Second
	}
	if c.Heartbeat <= 0 {
		c.Heartbeat = 15 * time.Second
	}
	if c.Margin <= 0 {
		c.Margin = 5 * time.Minute
	}
	return c
}

// Problems answers failures of the JSON routes as the merchant API answers its own (RFC 9457
// problems carrying the request id), so that the API's one error table decides every status;
// httpapi.Problems is the one cmd wires.
type Problems interface {
	// WriteError answers err as a problem, with the status Status gives it.
	WriteError(w http.ResponseWriter, r *http.Request, err error)
	// Status is the status err answers with (500 for an error the table does not know).
	Status(err error) int
	// WriteProblem answers status with a problem of code and detail.
	WriteProblem(w http.ResponseWriter, r *http.Request, status int, code, detail string)
	// RequestID is the id of the request ctx belongs to, for log lines.
	RequestID(ctx context.Context) string
}

// Limiter spends one request of a key's budget, or says how long until one is free;
// httpapi.RateLimiter is the one cmd wires.
type Limiter interface {
	Allow(key string) (ok bool, retryAfter time.Duration)
}

// Deps are what the page calls.
type Deps struct {
	Show     *application.ShowPaymentPage
	Follow   *application.FollowPayment
	Problems Problems
	// Optional: limits requests to the /pay routes per client address; nil, not limited.
	Limiter Limiter
	// Optional: nil, logs are discarded.
	Logger *slog.Logger
}

// Handler serves the page's three routes. The merchant API routes GET /pay/{token}, its
// /status and its /events to Page, Status and Events with the token of the path; HEAD reaches
// them with its own method, and the server sends no body to it.
type Handler struct {
	cfg     Config
	deps    Deps
	log     *slog.Logger
	page    *page         // the template and its policy
	streams *streamLimits // the open live channels
}

// New builds the page; it panics naming each required dependency that is missing.
func New(cfg Config, deps Deps) *Handler {
	var missing []string
	need := func(name string, set bool) {
		if !set {
			missing = append(missing, name)
		}
	}
	need("Show", deps.Show != nil)
	need("Follow", deps.Follow != nil)
	need("Problems", deps.Problems != nil)
	if len(missing) > 0 {
		panic("paypage.New: missing required dependencies: " + strings.Join(missing, ", "))
	}
	log := deps.Logger
	if log == nil {
		log = slog.New(slog.NewJSONHandler(io.Discard, nil))
	}
	cfg = cfg.withDefaults()
	return &Handler{cfg: cfg, deps: deps, log: log, page: loadPage(), streams: newStreamLimits(cfg)}
}

// OpenStreams is how many live channels are open now (tests and the memory measurement watch it).
func (h *Handler) OpenStreams() int { return h.streams.open() }

// Page answers the HTML page of token's charge: 404 for an unknown or malformed token, an
// error page with the status the error table gives any other failure.
func (h *Handler) Page(w http.ResponseWriter, r *http.Request, token string) {
	if !h.allow(w, r, true) {
		return
	}
	lang := pageLanguage(r.Header.Get("Accept-Language"))
	t := languages[lang]
	p, err := h.deps.Show.Execute(r.Context(), token)
	if err != nil {
		status := h.deps.Problems.Status(err)
		switch {
		case status == http.StatusNotFound:
			h.render(w, r, status, view{Lang: lang, T: t})
		default:
			h.logError(r, err, status)
			if status == http.StatusServiceUnavailable {
				w.Header().Set("Retry-After", "1")
			}
			h.render(w, r, status, view{Lang: lang, T: withNotFound(t, t.ErrorTitle, t.ErrorText)})
		}
		return
	}
	state := pageState(p.PaymentState)
	v := view{
		Lang: lang, T: t, Found: true, Merchant: p.MerchantName, Amount: formatReais(p.Amount, lang),
		Status: string(p.Status), StateKey: state, StateText: t.state(state), Awaiting: state == "awaiting",
		HasPix: p.PixURI != "", Code: p.PixURI,
		// Relative to /pay/{token}, so that a base URL with a path prefix works too.
		StatusURL: token + "/status", EventsURL: token + "/events",
	}
	if v.HasPix {
		v.QR = dataURI(p.QRCodePNG)
		v.ExpiresAt = isoString(p.ExpiresAt)
		left := p.ExpiresAt.Sub(p.Now)
		v.ExpiresInMs, v.Countdown = max(0, left.Milliseconds()), formatCountdown(left)
	}
	h.render(w, r, http.StatusOK, v)
}

// Status answers the state of token's charge as JSON.
func (h *Handler) Status(w http.ResponseWriter, r *http.Request, token string) {
	if !h.allow(w, r, false) {
		return
	}
	st, err := h.deps.Follow.Execute(r.Context(), token)
	if err != nil {
		h.deps.Problems.WriteError(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_ = json.NewEncoder(w).Encode(viewState(st))
}

// securityHeaders are the headers of every /pay answer.
func (h *Handler) securityHeaders(w http.ResponseWriter) {
	hd := w.Header()
	hd.Set("Content-Security-Policy", h.page.csp)
	hd.Set("Referrer-Policy", "no-referrer")
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("X-Frame-Options", "DENY")
	hd.Set("Cache-Control", "no-store")
	hd.Set("Vary", "Accept-Language")
}

// peerAddress is the client address a request came from: the TCP peer's IP. Behind a reverse
// proxy every request shares the proxy's; limit there (docs/API.md, Payment page).
func peerAddress(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// allow sets the security headers and spends a token of the client address's bucket; over the
// limit it answers 429 with Retry-After, as an HTML page for the page and as a problem for the
// JSON routes, and reports false.
func (h *Handler) allow(w http.ResponseWriter, r *http.Request, html bool) bool {
	h.securityHeaders(w)
	if h.deps.Limiter == nil {
		return true
	}
	ok, retryAfter := h.deps.Limiter.Allow("pay/" + peerAddress(r))
	if ok {
		return true
	}
	w.Header().Set("Retry-After", strconv.Itoa(max(1, int(math.Ceil(retryAfter.Seconds()))))) // whole seconds, at least 1
	if html {
		lang := pageLanguage(r.Header.Get("Accept-Language"))
		t := languages[lang]
		h.render(w, r, http.StatusTooManyRequests, view{Lang: lang, T: withNotFound(t, t.TooManyTitle, t.TooManyText)})
		return false
	}
	h.deps.Problems.WriteProblem(w, r, http.StatusTooManyRequests, "rate_limited", "too many requests; retry after the time in Retry-After")
	return false
}

func (h *Handler) logError(r *http.Request, err error, status int) {
	if status >= 500 {
		h.log.ErrorContext(r.Context(), "payment page", slog.String("requestId", h.deps.Problems.RequestID(r.Context())),
			slog.String("error", err.Error()))
	}
}
