package psptest

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// The operations the fake counts and faults target: the token endpoint and the API Pix
// endpoints it serves. An API mounted with HandleAPI names its own.
const (
	OpToken         = "token"
	OpCobPut        = "cob_put"
	OpCobGet        = "cob_get"
	OpCobPatch      = "cob_patch"
	OpWebhookGet    = "webhook_get"
	OpWebhookPut    = "webhook_put"
	OpWebhookDelete = "webhook_delete"
	OpPixList       = "pix_list"
	OpPixGet        = "pix_get"
	OpDevolutionPut = "devolution_put"
	OpDevolutionGet = "devolution_get"
	// OpUnknown is a request to a path the fake does not serve.
	OpUnknown = "unknown"
)

// TokenStyle is a shape of token request the token endpoint accepts.
type TokenStyle int

const (
	// TokenForm is RFC 6749's form body.
	TokenForm TokenStyle = 1 << iota
	// TokenJSON is the JSON body {"grant_type":"client_credentials"}.
	TokenJSON
)

// Config tunes the fake; its zero value is a PSP that accepts both token styles and issues
// tokens that live 5 s.
type Config struct {
	// ClientID and ClientSecret are the credentials the token endpoint accepts; empty means
	// "pixgate" and a random secret (read them back from the PSP).
	ClientID, ClientSecret string
	// Chave is the PIX key the receiving account owns; cobs and webhooks name it. Empty means
	// a random EVP key.
	Chave string
	// TokenLifetime is how long an access token is accepted; 0 means 5 s. expires_in says
	// it in whole seconds, at least 1.
	TokenLifetime time.Duration
	// TokenStyles are the token requests accepted; 0 means both.
	TokenStyles TokenStyle
	// OmitPixCopiaECola leaves pixCopiaECola out of cobs (the specification makes it optional).
	OmitPixCopiaECola bool
	// ProbeWebhook makes PUT /webhook/{chave} first POST {} to the URL being registered, over
	// mutual TLS, and refuse the registration unless it answers 2xx, as some PSPs do.
	ProbeWebhook bool
	// CallbackRoots are trusted, besides the fake's own CA, when the fake posts callbacks.
	CallbackRoots []*x509.Certificate
	// Clock dates cobs, PIX and devolutions; nil means time.Now. Tokens always live in real
	// time.
	Clock func() time.Time
	// MerchantName and MerchantCity go into the BR Codes (ASCII, at most 25 and 15
	// characters); empty means "PSPTEST RECEBEDOR" and "SAO PAULO".
	MerchantName, MerchantCity string
	// Listen is the address the server listens on; empty means a free port on loopback. A
	// test whose client runs elsewhere (a container) listens on every interface, and names
	// the host that client reaches it by in Hosts.
	Listen string
	// Hosts are names and addresses the server's certificate is valid for, besides loopback's.
	Hosts []string
}

// PSP is a fake PSP: an HTTPS server that requires a client certificate issued by its CA,
// issues OAuth 2.0 tokens, and serves API Pix's cob, pix, devolution and webhook endpoints
// with state, by the specification's shapes, plus whatever a test mounts with HandleAPI.
// Tests steer it (Pay, SettleDevolution, Inject, SetCallbacks) and read its counters. Safe
// for concurrent use.
type PSP struct {
	// URL is the server's root (https://127.0.0.1:port); APIURL is API Pix's base (URL/v2);
	// TokenURL is the token endpoint (URL/oauth/token).
	URL, APIURL, TokenURL string
	// CA issued the server's certificate and every client certificate the server accepts.
	CA *CA
	// Client is a client certificate the server accepts, for pixgate.
	Client *Certificate
	// CallbackClient is the certificate the fake presents when it posts callbacks.
	CallbackClient *Certificate
	// ClientID, ClientSecret and Chave are the settings in force (Config's or the defaults).
	ClientID, ClientSecret, Chave string

	cfg       Config
	srv       *httptest.Server
	mux       *http.ServeMux
	callbacks *http.Client
	closing   chan struct{}
	// ctx ends with the fake: callbacks in flight give up.
	ctx     context.Context
	cancel  context.CancelFunc
	pending sync.WaitGroup

	mu         sync.Mutex
	tokens     map[string]issued
	scopes     map[string]bool
	requests   map[string]int
	answers    map[answerKey]int
	faults     []*queued
	cobs       map[string]*Cob
	pix        []*pixRecord
	byE2E      map[string]*pixRecord
	webhooks   map[string]Webhook
	lastLoc    int64
	devStatus  string
	devMotivo  string
	cbMode     Callbacks
	deliveries []Delivery
}

type answerKey struct {
	op     string
	status int
}

// New starts a fake PSP for the test t and stops it when t ends.
func New(t testing.TB, cfg Config) *PSP {
	t.Helper()
	if cfg.ClientID == "" {
		cfg.ClientID = "pixgate"
	}
	if cfg.ClientSecret == "" {
		cfg.ClientSecret = "secret-" + rand.Text()
	}
	if cfg.Chave == "" {
		cfg.Chave = evp()
	}
	if cfg.TokenLifetime <= 0 {
		cfg.TokenLifetime = 5 * time.Second
	}
	if cfg.TokenStyles == 0 {
		cfg.TokenStyles = TokenForm | TokenJSON
	}
	if cfg.Clock == nil {
		cfg.Clock = time.Now
	}
	if cfg.MerchantName == "" {
		cfg.MerchantName = "PSPTEST RECEBEDOR"
	}
	if cfg.MerchantCity == "" {
		cfg.MerchantCity = "SAO PAULO"
	}
	ca := NewCA(t, "psptest CA")
	p := &PSP{
		CA:             ca,
		Client:         ca.IssueClient(t, "pixgate"),
		CallbackClient: ca.IssueClient(t, "psptest callbacks"),
		ClientID:       cfg.ClientID,
		ClientSecret:   cfg.ClientSecret,
		Chave:          cfg.Chave,
		cfg:            cfg,
		mux:            http.NewServeMux(),
		closing:        make(chan struct{}),
		tokens:         map[string]issued{},
		scopes:         map[string]bool{},
		requests:       map[string]int{},
		answers:        map[answerKey]int{},
		cobs:           map[string]*Cob{},
		byE2E:          map[string]*pixRecord{},
		webhooks:       map[string]Webhook{},
		devStatus:      DevolutionInProgress,
	}
	p.ctx, p.cancel = context.WithCancel(context.Background())
	p.routes() // and the scopes of API Pix with them
	srv := httptest.NewUnstartedServer(p.mux)
	if cfg.Listen != "" {
		l, err := net.Listen("tcp", cfg.Listen)
		if err != nil {
			t.Fatalf("psptest: listening on %s: %v", cfg.Listen, err)
		}
		srv.Listener.Close()
		srv.Listener = l
	}
	srv.TLS = &tls.Config{
		MinVersion:   tls.VersionTLS12,
		Certificates: []tls.Certificate{ca.IssueServer(t, append([]string{"127.0.0.1", "localhost", "::1"}, cfg.Hosts...)...).TLS},
		ClientAuth:   tls.RequireAndVerifyClientCert,
		ClientCAs:    ca.Pool(),
	}
	// Handshakes refused on purpose would fill the test's output.
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	srv.StartTLS()
	p.srv = srv
	p.URL = srv.URL
	p.APIURL = srv.URL + "/v2"
	p.TokenURL = srv.URL + "/oauth/token"
	roots := ca.Pool()
	for _, c := range cfg.CallbackRoots {
		roots.AddCert(c)
	}
	p.callbacks = &http.Client{
		Timeout: 10 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{
			MinVersion:   tls.VersionTLS12,
			Certificates: []tls.Certificate{p.CallbackClient.TLS},
			RootCAs:      roots,
		}},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	t.Cleanup(p.close)
	return p
}

func (p *PSP) close() {
	close(p.closing) // wakes the handlers that are made to wait
	p.cancel()
	p.srv.Close()
	p.pending.Wait()
	p.callbacks.CloseIdleConnections()
}

// routes mounts the token endpoint and API Pix.
func (p *PSP) routes() {
	p.mux.Handle("POST /oauth/token", p.guard(OpToken, "", false, p.token))
	p.HandleAPI(OpCobPut, "cob.write", "PUT /v2/cob/{txid}", p.putCob)
	p.HandleAPI(OpCobGet, "cob.read", "GET /v2/cob/{txid}", p.getCob)
	p.HandleAPI(OpCobPatch, "cob.write", "PATCH /v2/cob/{txid}", p.patchCob)
	p.HandleAPI(OpPixList, "pix.read", "GET /v2/pix", p.listPix)
	p.HandleAPI(OpPixGet, "pix.read", "GET /v2/pix/{e2eid}", p.getPix)
	p.HandleAPI(OpDevolutionPut, "pix.write", "PUT /v2/pix/{e2eid}/devolucao/{id}", p.putDevolution)
	p.HandleAPI(OpDevolutionGet, "pix.read", "GET /v2/pix/{e2eid}/devolucao/{id}", p.getDevolution)
	p.HandleAPI(OpWebhookPut, "webhook.write", "PUT /v2/webhook/{chave}", p.putWebhook)
	p.HandleAPI(OpWebhookGet, "webhook.read", "GET /v2/webhook/{chave}", p.getWebhook)
	p.HandleAPI(OpWebhookDelete, "webhook.write", "DELETE /v2/webhook/{chave}", p.deleteWebhook)
	p.mux.Handle("/", p.guard(OpUnknown, "", false, func(w http.ResponseWriter, _ *http.Request) {
		WriteProblem(w, http.StatusNotFound, "NaoEncontrado", "Não Encontrado", "Entidade não encontrada.")
	}))
}

// HandleAPI mounts h at pattern (a net/http ServeMux pattern, such as "PUT /v3/gn/pix/{id}")
// behind what every API endpoint of the fake has: the count under op, the faults aimed at op,
// and a valid bearer token, granted scope when scope is not empty (scope joins the scopes the
// token endpoint grants). It is how a second API, a PSP's payout API for one, mounts on the
// same server, sharing its TLS, its tokens and its switches.
func (p *PSP) HandleAPI(op, scope, pattern string, h http.HandlerFunc) {
	if scope != "" {
		p.mu.Lock()
		p.scopes[scope] = true
		p.mu.Unlock()
	}
	p.mux.Handle(pattern, p.guard(op, scope, true, h))
}

// Handle mounts h at pattern like HandleAPI, without the token check: for endpoints a client
// reaches before it has a token (a second token endpoint, a probe).
func (p *PSP) Handle(op, pattern string, h http.HandlerFunc) {
	p.mux.Handle(pattern, p.guard(op, "", false, h))
}

// guard counts a request, plays the fault aimed at it and checks its token.
func (p *PSP) guard(op, scope string, bearer bool, h http.HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sw := &statusWriter{ResponseWriter: w}
		defer func() { p.answered(op, sw.status) }()
		r.Body = http.MaxBytesReader(sw, r.Body, maxRequest)
		p.mu.Lock()
		p.requests[op]++
		p.mu.Unlock()
		f, faulty := p.takeFault(op)
		if faulty && !f.Applied {
			if !p.wait(r, f.Delay) {
				return
			}
			if f.answers() {
				p.play(sw, f)
				return
			}
		}
		if bearer && !p.authorize(sw, r, scope) {
			return
		}
		if faulty && f.Applied {
			rec := httptest.NewRecorder()
			h(rec, r)
			if !p.wait(r, f.Delay) {
				return
			}
			if f.answers() {
				p.play(sw, f)
				return
			}
			replay(sw, rec)
			return
		}
		h(sw, r)
	})
}

// maxRequest bounds a request's body.
const maxRequest = 64 << 10

// Requests is how many requests op received, whatever was answered; "" counts every
// operation.
func (p *PSP) Requests(op string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if op != "" {
		return p.requests[op]
	}
	n := 0
	for _, v := range p.requests {
		n += v
	}
	return n
}

// Answered is how many requests of op were answered status (0: no answer, the connection was
// dropped or the client left); "" counts every operation.
func (p *PSP) Answered(op string, status int) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for k, v := range p.answers {
		if (op == "" || k.op == op) && k.status == status {
			n += v
		}
	}
	return n
}

func (p *PSP) answered(op string, status int) {
	p.mu.Lock()
	p.answers[answerKey{op, status}]++
	p.mu.Unlock()
}

// wait holds a request d long; false when the client left or the fake is closing first.
func (p *PSP) wait(r *http.Request, d time.Duration) bool {
	if d <= 0 {
		return true
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return true
	case <-r.Context().Done():
		return false
	case <-p.closing:
		return false
	}
}

// now is the fake's business clock, in UTC.
func (p *PSP) now() time.Time { return p.cfg.Clock().UTC() }

// problemBase is where API Pix's problem types live.
const problemBase = "https://pix.bcb.gov.br/api/v2/error/"

// WriteProblem answers an RFC 7807 problem of API Pix: kind is the error's name (CobNaoEncontrado,
// ServicoIndisponivel...), which becomes its type URI.
func WriteProblem(w http.ResponseWriter, status int, kind, title, detail string, violations ...Violacao) {
	WriteJSONAs(w, status, "application/problem+json", Problem{
		Type: problemBase + kind, Title: title, Status: status, Detail: detail, Violacoes: violations,
	})
}

// WriteJSON answers v as application/json.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	WriteJSONAs(w, status, "application/json", v)
}

// WriteJSONAs answers v as JSON labelled contentType.
func WriteJSONAs(w http.ResponseWriter, status int, contentType string, v any) {
	raw, err := json.Marshal(v)
	if err != nil {
		http.Error(w, "psptest: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", contentType)
	w.WriteHeader(status)
	_, _ = w.Write(raw)
}

// DecodeJSON reads r's JSON body into v, answering the problem kind (400) when it is not JSON;
// members v does not know are ignored.
func DecodeJSON(w http.ResponseWriter, r *http.Request, v any, kind, title string) bool {
	raw, err := io.ReadAll(r.Body)
	if err == nil {
		err = json.Unmarshal(raw, v)
	}
	if err != nil {
		WriteProblem(w, http.StatusBadRequest, kind, title, "O corpo da requisição não é um JSON válido.")
		return false
	}
	return true
}

// statusWriter keeps the status written.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

// Unwrap lets http.ResponseController reach the connection's writer.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// replay writes a recorded answer.
func replay(w http.ResponseWriter, rec *httptest.ResponseRecorder) {
	for k, v := range rec.Header() {
		w.Header()[k] = v
	}
	w.WriteHeader(rec.Code)
	_, _ = w.Write(rec.Body.Bytes())
}

// evp is a random EVP key (a UUID v4), the kind of PIX key a PSP hands out.
func evp() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	const hexdigits = "0123456789abcdef"
	var s strings.Builder
	for i, c := range b {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			s.WriteByte('-')
		}
		s.WriteByte(hexdigits[c>>4])
		s.WriteByte(hexdigits[c&0x0f])
	}
	return s.String()
}
