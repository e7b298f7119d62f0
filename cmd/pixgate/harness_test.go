package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

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

type response struct {
	status int
	header http.Header
	body   []byte
}

func (r response) json(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.body, &m); err != nil {
		t.Fatalf("response is not a JSON object: %v\n%s", err, r.body)
	}
	return m
}

// do sends a request; body is sent as is (a string) or marshalled (anything else).
func (e *env) do(method, path, token string, body any, headers ...string) response {
	e.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	default:
		raw, err := json.Marshal(b)
		if err != nil {
			e.t.Fatal(err)
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, e.srv.URL+path, rd)
	if err != nil {
		e.t.Fatal(err)
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	res, err := e.srv.Client().Do(req)
	if err != nil {
		e.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	return response{status: res.StatusCode, header: res.Header, body: raw}
}

// validCPF and validCNPJ are documents with correct check digits.
const (
	validCPF  = "529.982.247-25"
	validCNPJ = "11.222.333/0001-81"
)

// minimalTransaction is the smallest valid creation request.
func minimalTransaction() map[string]any {
	return map[string]any{"amount": 1000, "paymentMethod": "PIX", "pix": map[string]any{}}
}

// fullTransaction uses every field of the request.
func fullTransaction() map[string]any {
	return map[string]any{
		"amount":        12345,
		"paymentMethod": "PIX",
		"webhookUrl":    "https://merchant.example.com/hooks/pix?source=pixgate",
		"externalCode":  "order-000123",
		"customer": map[string]any{
			"ip": "203.0.113.7", "name": "João D'Ávila-Souza", "email": "joao@example.com.br",
			"document": validCPF, "landline": "+55 (11) 3456-7890", "mobilePhone": "(21) 98765-4321",
			"birthdate": "1990-05-17",
		},
		"seller":        map[string]any{"name": "Loja Exemplo", "document": validCNPJ},
		"isInfoProduct": false,
		"address": map[string]any{
			"zipCode": "01310-100", "number": "1578", "street": "Avenida Paulista", "neighborhood": "Bela Vista",
			"city": "São Paulo", "state": "SP", "country": "Brasil", "complement": "Conjunto 42",
		},
		"items": []any{
			map[string]any{"title": "Camiseta", "unitPrice": 5000, "quantity": 2, "description": "Algodão"},
			map[string]any{"title": "Boné", "unitPrice": 2345},
		},
		"metadata": map[string]any{"campaign": "black-friday", "attempt": 1},
		"pix":      map[string]any{"expirationSeconds": 600},
	}
}
