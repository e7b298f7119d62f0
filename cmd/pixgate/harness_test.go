package main

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/pixgate/pixgate/adapters/httpapi/apitest"
	"github.com/pixgate/pixgate/application"
	"github.com/pixgate/pixgate/domain"
)

// env is pixgate assembled exactly as `pixgate serve` assembles it (memory store, real JWT
// signing and verification, the sandbox emitter and QR renderer), served over real HTTP on
// loopback. Tests talk to it with real JSON.
type env struct {
	t   *testing.T
	app *app
	srv *httptest.Server
	log *syncBuffer
}

// syncBuffer collects log output written from several goroutines.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func newEnv(t *testing.T, vars map[string]string, options ...func(*app)) *env {
	t.Helper()
	base := map[string]string{"PIXGATE_SANDBOX": "true", "PIXGATE_RATE_LIMIT_RPS": "0",
		// Tests ask for many tokens, and fail on purpose; the token limits have their own tests.
		"PIXGATE_TOKEN_RATE_LIMIT_RPS": "0", "PIXGATE_TOKEN_FAILURE_LIMIT": "0"}
	for k, v := range vars {
		base[k] = v
	}
	cfg, err := loadConfig(func(k string) string { return base[k] })
	if err != nil {
		t.Fatalf("config: %v", err)
	}
	logs := &syncBuffer{}
	// The listener comes first, as in serve: payment page addresses name it.
	srv := httptest.NewUnstartedServer(nil)
	t.Cleanup(srv.Close)
	own := func(a *app) { a.publicURL = "http://" + srv.Listener.Addr().String() }
	a, err := newApp(context.Background(), cfg, slog.New(slog.NewJSONHandler(logs, nil)), append([]func(*app){own}, options...)...)
	if err != nil {
		t.Fatalf("building the app: %v", err)
	}
	srv.Config.Handler = a.server.Handler()
	srv.Start()
	return &env{t: t, app: a, srv: srv, log: logs}
}

// account creates a client account with scopes (none: every scope) and returns its id and a
// bearer token for it.
func (e *env) account(scopes ...domain.Scope) (accountID, token string) {
	e.t.Helper()
	ctx := context.Background()
	created, err := application.NewCreateAccount(e.app.stores.accounts, e.app.ids, e.app.clock, e.app.hasher).Execute(ctx, "Loja Teste", scopes)
	if err != nil {
		e.t.Fatalf("creating account: %v", err)
	}
	tok, err := e.app.issuer.Issue(ctx, domain.Principal{AccountID: created.Account.ID(),
		ClientID: created.Credential.ClientID, Scopes: created.Account.Scopes()}, time.Hour)
	if err != nil {
		e.t.Fatalf("issuing token: %v", err)
	}
	return created.Account.ID(), tok.Token
}

// response is an answer, read whole: an apitest.Response under the names these tests use.
type response struct {
	status int
	header http.Header
	body   []byte
}

// answer is r as a response.
func answer(r apitest.Response) response {
	return response{status: r.Status, header: r.Header, body: r.Body}
}

// api is r as an apitest.Response.
func (r response) api() apitest.Response {
	return apitest.Response{Status: r.status, Header: r.header, Body: r.body}
}

// json is the answer's body as a JSON object.
func (r response) json(t *testing.T) map[string]any {
	t.Helper()
	return r.api().JSON(t)
}

// client talks to the app over HTTP.
func (e *env) client() *apitest.Client { return apitest.NewClient(e.srv.URL, e.srv.Client()) }

// do sends a request, as apitest.Client.Do: body is sent as is (a string) or marshalled
// (anything else); headers are name, value pairs.
func (e *env) do(method, path, token string, body any, headers ...string) response {
	e.t.Helper()
	return answer(e.client().Do(e.t, method, path, token, body, headers...))
}

// validCPF and validCNPJ are documents with correct check digits.
const (
	validCPF  = apitest.ValidCPF
	validCNPJ = apitest.ValidCNPJ
)

// minimalTransaction is the smallest valid creation request.
func minimalTransaction() map[string]any { return apitest.MinimalTransaction() }

// fullTransaction uses every field of the request.
func fullTransaction() map[string]any { return apitest.FullTransaction() }
