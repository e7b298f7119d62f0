package httpapi

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/base64"
	"encoding/json"
	"errors"
	"html/template"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/mux"

	"github.com/pixgate/pixgate/application"
	"github.com/pixgate/pixgate/domain"
)

// The hosted payment page (README, "The payment page"): GET /pay/{token} answers one
// server-rendered HTML page of a charge, GET /pay/{token}/status its state as JSON, and
// GET /pay/{token}/events the same state as server-sent events while it can still change.
// The token is a capability: whoever holds the link may look, so the routes need no bearer
// token, and show nothing but what a payer needs (the merchant's name, the amount, the QR code
// and its code, the expiry and the status): never payer data, never the transaction id.
//
// The page loads nothing from anywhere: its style and script are inline, allowed by their
// SHA-256 in a Content-Security-Policy that allows nothing else (default-src 'none'), the QR
// code is a data: image, and the script talks only to its own origin.

//go:embed paypage/page.html paypage/page.css paypage/page.js
var payPageFiles embed.FS

// PaymentPageDeps are the use cases of the payment page; the routes exist when both are set.
type PaymentPageDeps struct {
	Show   *application.ShowPaymentPage
	Follow *application.FollowPayment
	// Limiter limits requests to the /pay routes per client address; nil: not limited.
	Limiter *RateLimiter
}

// PaymentPageConfig bounds the live channel of the payment page. Zero values take the
// defaults in brackets.
type PaymentPageConfig struct {
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

func (c PaymentPageConfig) withDefaults() PaymentPageConfig {
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

// payPage is the parsed template and the Content-Security-Policy that allows exactly its
// inline style and script.
type payPage struct {
	tmpl   *template.Template
	style  template.CSS
	script template.JS
	csp    string
}

func loadPayPage() *payPage {
	read := func(name string) string {
		b, err := payPageFiles.ReadFile("paypage/" + name)
		if err != nil {
			panic("httpapi: the embedded payment page lacks " + name)
		}
		return string(b)
	}
	hash := func(s string) string {
		sum := sha256.Sum256([]byte(s))
		return "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
	}
	style, script := read("page.css"), read("page.js")
	return &payPage{
		tmpl:   template.Must(template.New("page").Parse(read("page.html"))),
		style:  template.CSS(style),
		script: template.JS(script),
		csp: "default-src 'none'; script-src " + hash(script) + "; style-src " + hash(style) +
			"; img-src data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
	}
}

// payLabels are the page's words in one language.
type payLabels struct {
	Title, PayTo, Amount, HowTo, QRAlt, CodeLabel, Copy, Copied, CopyFailed, ExpiresIn, Footer string
	Awaiting, Paid, Expired, Failed, Pending, Refunding, Refunded, Review, Returning, Returned string
	NotFoundTitle, NotFoundText, TooManyTitle, TooManyText, ErrorTitle, ErrorText              string
}

var payLanguages = map[string]payLabels{
	"pt-BR": {
		Title: "Pagamento PIX", PayTo: "Pagar a", Amount: "Valor", HowTo: "Pague com o app do seu banco",
		QRAlt: "QR code PIX desta cobrança", CodeLabel: "Código PIX copia e cola", Copy: "Copiar código",
		Copied: "Código copiado. Cole-o no app do seu banco.", CopyFailed: "Não foi possível copiar: o código está selecionado, copie-o manualmente.",
		ExpiresIn: "Expira em", Footer: "Esta página se atualiza sozinha quando o pagamento é confirmado.",
		Awaiting: "Aguardando pagamento", Paid: "Pago", Expired: "Expirado", Failed: "Cobrança indisponível",
		Pending: "Gerando a cobrança", Refunding: "Reembolso em andamento", Refunded: "Reembolsado",
		Review: "Pagamento em análise", Returning: "Devolução em andamento", Returned: "Devolvido",
		NotFoundTitle: "Cobrança não encontrada", NotFoundText: "Confira o link que você recebeu.",
		TooManyTitle: "Muitas tentativas", TooManyText: "Aguarde alguns segundos e recarregue a página.",
		ErrorTitle: "Serviço indisponível", ErrorText: "Tente novamente em alguns instantes.",
	},
	"en": {
		Title: "PIX payment", PayTo: "Pay to", Amount: "Amount", HowTo: "Pay with your bank's app",
		QRAlt: "PIX QR code of this charge", CodeLabel: "PIX copy and paste code", Copy: "Copy code",
		Copied: "Code copied. Paste it in your bank's app.", CopyFailed: "Could not copy: the code is selected, copy it by hand.",
		ExpiresIn: "Expires in", Footer: "This page updates itself when the payment is confirmed.",
		Awaiting: "Awaiting payment", Paid: "Paid", Expired: "Expired", Failed: "Charge unavailable",
		Pending: "Preparing the charge", Refunding: "Refund in progress", Refunded: "Refunded",
		Review: "Payment under review", Returning: "Return in progress", Returned: "Returned",
		NotFoundTitle: "Charge not found", NotFoundText: "Check the link you received.",
		TooManyTitle: "Too many requests", TooManyText: "Wait a few seconds and reload the page.",
		ErrorTitle: "Service unavailable", ErrorText: "Try again in a moment.",
	},
}

// pageLanguage picks pt-BR or en from Accept-Language: the supported language with the highest
// weight, pt-BR when neither is asked for.
func pageLanguage(accept string) string {
	lang, best := "pt-BR", 0.0
	for _, part := range strings.Split(accept, ",") {
		tag, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		q := 1.0
		if v, ok := strings.CutPrefix(strings.TrimSpace(params), "q="); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil || f < 0 || f > 1 {
				continue
			}
			q = f
		}
		primary, _, _ := strings.Cut(strings.ToLower(strings.TrimSpace(tag)), "-")
		var candidate string
		switch primary {
		case "pt":
			candidate = "pt-BR"
		case "en":
			candidate = "en"
		default:
			continue
		}
		if q > best {
			lang, best = candidate, q
		}
	}
	return lang
}

// pageState names what the page shows for a charge's state (the same names as page.js).
func pageState(st application.PaymentState) string {
	switch st.Status {
	case domain.TxPixQRCodeGenerated:
		if st.Expired {
			return "expired"
		}
		return "awaiting"
	case domain.TxPaid:
		return "paid"
	case domain.TxFailed:
		if st.Expired {
			return "expired"
		}
		return "failed"
	case domain.TxProcessingRefund:
		return "refunding"
	case domain.TxRefunded:
		return "refunded"
	case domain.TxBlocked:
		return "review"
	case domain.TxProcessingInfraction:
		return "returning"
	case domain.TxInfraction:
		return "returned"
	}
	return "pending"
}

func (l payLabels) state(name string) string {
	return map[string]string{
		"awaiting": l.Awaiting, "paid": l.Paid, "expired": l.Expired, "failed": l.Failed, "pending": l.Pending,
		"refunding": l.Refunding, "refunded": l.Refunded, "review": l.Review, "returning": l.Returning, "returned": l.Returned,
	}[name]
}

// formatReais writes an amount as Brazilian money: R$ 1.234,56 (en: R$ 1,234.56).
func formatReais(c domain.Cents, lang string) string {
	thousands, decimal := ".", ","
	if lang == "en" {
		thousands, decimal = ",", "."
	}
	n := int64(c)
	sign := ""
	if n < 0 {
		sign, n = "-", -n
	}
	units := strconv.FormatInt(n/100, 10)
	var grouped strings.Builder
	for i, d := range units {
		if i > 0 && (len(units)-i)%3 == 0 {
			grouped.WriteString(thousands)
		}
		grouped.WriteRune(d)
	}
	cents := n % 100
	return "R$ " + sign + grouped.String() + decimal + string(rune('0'+cents/10)) + string(rune('0'+cents%10))
}

// formatCountdown writes a duration as m:ss or h:mm:ss, as page.js does.
func formatCountdown(d time.Duration) string {
	s := int64(max(0, (d+time.Second-1)/time.Second))
	h, m, sec := s/3600, (s%3600)/60, s%60
	pad := func(n int64) string {
		if n < 10 {
			return "0" + strconv.FormatInt(n, 10)
		}
		return strconv.FormatInt(n, 10)
	}
	if h > 0 {
		return strconv.FormatInt(h, 10) + ":" + pad(m) + ":" + pad(sec)
	}
	return pad(m) + ":" + pad(sec)
}

// payPageView is the template's data.
type payPageView struct {
	Lang      string
	T         payLabels
	Style     template.CSS
	Script    template.JS
	Found     bool
	Merchant  string
	Amount    string
	Status    string
	StateKey  string
	StateText string
	Awaiting  bool
	HasPix    bool
	QR        template.URL // our own PNG as a data: URI
	Code      string
	ExpiresAt string
	// ExpiresInMs counts down from the server's clock, so that a payer's wrong clock does
	// not move the expiry.
	ExpiresInMs int64
	Countdown   string
	StatusURL   string
	EventsURL   string
}

func (s *Server) paymentPageRoutes(r *mux.Router) {
	// HEAD reaches them as GET (headAsGet), as every route's.
	r.Name("payment.page").Methods(http.MethodGet).Path("/pay/{token}").HandlerFunc(s.payLimited(true, s.paymentPage))
	r.Name("payment.status").Methods(http.MethodGet).Path("/pay/{token}/status").HandlerFunc(s.payLimited(false, s.paymentStatus))
	r.Name("payment.events").Methods(http.MethodGet).Path("/pay/{token}/events").HandlerFunc(s.payLimited(false, s.paymentEvents))
}

// payHeaders are the security headers of every /pay answer.
func (s *Server) payHeaders(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Content-Security-Policy", s.payPage.csp)
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Cache-Control", "no-store")
	h.Set("Vary", "Accept-Language")
}

// peerAddress is the client address a request came from: the TCP peer's IP. Behind a reverse
// proxy every request shares the proxy's; limit there (README, "The payment page").
func peerAddress(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// payLimited spends a token of the client address's bucket; over the limit it answers 429
// with Retry-After, as an HTML page for the page and as a problem for the JSON routes.
func (s *Server) payLimited(html bool, h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		s.payHeaders(w)
		l := s.deps.PaymentPage.Limiter
		if l == nil {
			h(w, r)
			return
		}
		if d := l.take("pay/" + peerAddress(r)); !d.allowed {
			w.Header().Set("Retry-After", strconv.Itoa(max(1, ceilSeconds(d.retryAfter))))
			if html {
				lang := pageLanguage(r.Header.Get("Accept-Language"))
				t := payLanguages[lang]
				s.renderPayPage(w, r, http.StatusTooManyRequests, payPageView{Lang: lang, T: withNotFound(t, t.TooManyTitle, t.TooManyText)})
				return
			}
			writeProblem(w, r, http.StatusTooManyRequests, "rate_limited", "too many requests; retry after the time in Retry-After", nil)
			return
		}
		h(w, r)
	}
}

// withNotFound puts another title and text in the place of the not-found page's.
func withNotFound(t payLabels, title, text string) payLabels {
	t.NotFoundTitle, t.NotFoundText = title, text
	return t
}

func (s *Server) paymentPage(w http.ResponseWriter, r *http.Request) {
	lang := pageLanguage(r.Header.Get("Accept-Language"))
	t := payLanguages[lang]
	token := mux.Vars(r)["token"]
	page, err := s.deps.PaymentPage.Show.Execute(r.Context(), token)
	if err != nil {
		status := errorStatus(err)
		switch {
		case status == http.StatusNotFound:
			s.renderPayPage(w, r, status, payPageView{Lang: lang, T: t})
		default:
			s.logPayError(r, err, status)
			if status == http.StatusServiceUnavailable {
				w.Header().Set("Retry-After", "1")
			}
			s.renderPayPage(w, r, status, payPageView{Lang: lang, T: withNotFound(t, t.ErrorTitle, t.ErrorText)})
		}
		return
	}
	state := pageState(page.PaymentState)
	v := payPageView{
		Lang: lang, T: t, Found: true, Merchant: page.MerchantName, Amount: formatReais(page.Amount, lang),
		Status: string(page.Status), StateKey: state, StateText: t.state(state), Awaiting: state == "awaiting",
		HasPix: page.PixURI != "", Code: page.PixURI,
		// Relative to /pay/{token}, so that a base URL with a path prefix works too.
		StatusURL: token + "/status", EventsURL: token + "/events",
	}
	if v.HasPix {
		v.QR = template.URL(dataURI(page.QRCodePNG))
		v.ExpiresAt = isoString(page.ExpiresAt)
		left := page.ExpiresAt.Sub(page.Now)
		v.ExpiresInMs, v.Countdown = max(0, left.Milliseconds()), formatCountdown(left)
	}
	s.renderPayPage(w, r, http.StatusOK, v)
}

func (s *Server) renderPayPage(w http.ResponseWriter, r *http.Request, status int, v payPageView) {
	v.Style, v.Script = s.payPage.style, s.payPage.script
	var body bytes.Buffer
	if err := s.payPage.tmpl.Execute(&body, v); err != nil {
		s.logPayError(r, err, http.StatusInternalServerError)
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Length", strconv.Itoa(body.Len()))
	w.WriteHeader(status)
	_, _ = w.Write(body.Bytes())
}

func (s *Server) logPayError(r *http.Request, err error, status int) {
	if status >= 500 {
		s.log.ErrorContext(r.Context(), "payment page", slog.String("requestId", requestIDFrom(r.Context())),
			slog.String("error", err.Error()))
	}
}

// errorStatus is the status errorTable gives err (500 when it is not there).
func errorStatus(err error) int {
	for _, e := range errorTable {
		if errors.Is(err, e.err) {
			return e.status
		}
	}
	return http.StatusInternalServerError
}

// paymentStateView is the answer of GET /pay/{token}/status and each live message: the
// transaction's status and its QR code's expirationDate (null without one).
type paymentStateView struct {
	Status         string   `json:"status"`
	ExpirationDate *isoTime `json:"expirationDate"`
}

func viewPaymentState(st application.PaymentState) paymentStateView {
	v := paymentStateView{Status: string(st.Status)}
	if !st.ExpiresAt.IsZero() {
		e := isoTime(st.ExpiresAt)
		v.ExpirationDate = &e
	}
	return v
}

func isoString(t time.Time) string {
	b, _ := isoTime(t).MarshalText()
	return string(b)
}

func (s *Server) paymentStatus(w http.ResponseWriter, r *http.Request) {
	st, err := s.deps.PaymentPage.Follow.Execute(r.Context(), mux.Vars(r)["token"])
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, viewPaymentState(st))
}

// paymentEvents is the live channel: a server-sent event with the state at once, then one at
// each change (the store is read every PollEvery), a comment every Heartbeat, and an "end"
// event before it closes: when the charge reaches a final status, or Margin after its
// expirationDate. At most MaxStreamsPerCharge channels per charge and MaxStreamsPerAddress per
// client address are open at once; one more answers 429.
func (s *Server) paymentEvents(w http.ResponseWriter, r *http.Request) {
	token := mux.Vars(r)["token"]
	follow := s.deps.PaymentPage.Follow
	st, err := follow.Execute(r.Context(), token)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	release, ok := s.payStreams.acquire(token, peerAddress(r))
	if !ok {
		w.Header().Set("Retry-After", "5")
		writeProblem(w, r, http.StatusTooManyRequests, "rate_limited", "too many live channels open; poll the status route", nil)
		return
	}
	defer release()
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("X-Accel-Buffering", "no") // nginx: do not hold the events back
	if requestMethod(r) == http.MethodHead {
		// The headers, and no stream to hold open.
		w.WriteHeader(http.StatusOK)
		return
	}
	cfg := s.cfg.PaymentPage
	rc := http.NewResponseController(w)
	// The server's ReadTimeout would fire on the idle connection and cancel the request (its
	// background read fails): the request is read whole, so the read deadline goes.
	_ = rc.SetReadDeadline(time.Time{})
	send := func(chunk string) bool {
		// The server's WriteTimeout would cut a live channel: each write gets its own deadline.
		_ = rc.SetWriteDeadline(time.Now().Add(10 * time.Second))
		if _, err := w.Write([]byte(chunk)); err != nil {
			return false
		}
		return rc.Flush() == nil
	}
	sendState := func(st application.PaymentState) bool {
		body, _ := json.Marshal(viewPaymentState(st))
		return send("data: " + string(body) + "\n\n")
	}
	w.WriteHeader(http.StatusOK)
	if !send("retry: 3000\n\n") || !sendState(st) {
		return
	}
	closeAt := st.ExpiresAt
	if closeAt.IsZero() {
		closeAt = time.Now()
	}
	closing := time.NewTimer(time.Until(closeAt.Add(cfg.Margin)))
	defer closing.Stop()
	poll := time.NewTicker(cfg.PollEvery)
	defer poll.Stop()
	lastWrite := time.Now()
	for !st.Final() {
		select {
		case <-r.Context().Done():
			return
		case <-closing.C:
			send("event: end\ndata: {}\n\n")
			return
		case <-poll.C:
			next, err := follow.Execute(r.Context(), token)
			if err != nil {
				if errors.Is(err, domain.ErrNotFound) {
					return
				}
				continue // the store hiccuped: try again at the next tick
			}
			if next.Status != st.Status {
				st = next
				if !sendState(st) {
					return
				}
				lastWrite = time.Now()
			} else if time.Since(lastWrite) >= cfg.Heartbeat {
				if !send(": keep-alive\n\n") {
					return
				}
				lastWrite = time.Now()
			}
		}
	}
	send("event: end\ndata: {}\n\n")
}

// streamLimits counts the open live channels per charge and per client address. Entries are
// removed when their count drops to zero, so memory follows the open channels only.
type streamLimits struct {
	perCharge, perAddress int

	mu        sync.Mutex
	byCharge  map[string]int
	byAddress map[string]int
}

func newStreamLimits(cfg PaymentPageConfig) *streamLimits {
	return &streamLimits{perCharge: cfg.MaxStreamsPerCharge, perAddress: cfg.MaxStreamsPerAddress,
		byCharge: map[string]int{}, byAddress: map[string]int{}}
}

// acquire takes a place for one channel, or reports that a limit is reached.
func (l *streamLimits) acquire(charge, address string) (release func(), ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.byCharge[charge] >= l.perCharge || l.byAddress[address] >= l.perAddress {
		return nil, false
	}
	l.byCharge[charge]++
	l.byAddress[address]++
	var once sync.Once
	return func() {
		once.Do(func() {
			l.mu.Lock()
			defer l.mu.Unlock()
			if l.byCharge[charge]--; l.byCharge[charge] <= 0 {
				delete(l.byCharge, charge)
			}
			if l.byAddress[address]--; l.byAddress[address] <= 0 {
				delete(l.byAddress, address)
			}
		})
	}, true
}

// open reports the channels open now (tests and the memory measurement read it).
func (l *streamLimits) open() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, c := range l.byCharge {
		n += c
	}
	return n
}

// OpenPaymentStreams is how many live channels of payment pages are open now (tests and the
// memory measurement watch it).
func (s *Server) OpenPaymentStreams() int { return s.payStreams.open() }
