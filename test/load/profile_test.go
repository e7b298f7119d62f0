package main

// Benchmarks that serve the hot routes in process, wired as cmd/pixgate wires `pixgate serve`
// with the memory store, so that a target the load run misses can be profiled without exposing
// pprof from the product:
//
//	cd test && go test -run '^$' -bench BenchmarkServe -cpuprofile /tmp/cpu.out ./load
//	go tool pprof -top /tmp/cpu.out
//
// They go through the whole handler (access log, metrics, authentication, routing, use case,
// store, JSON) but not the network: the load run's own figures include that.

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/pixgate/pixgate/adapters/httpapi"
	"github.com/pixgate/pixgate/adapters/jwtauth"
	"github.com/pixgate/pixgate/adapters/memory"
	"github.com/pixgate/pixgate/adapters/metrics"
	"github.com/pixgate/pixgate/adapters/qr"
	"github.com/pixgate/pixgate/adapters/system"
	"github.com/pixgate/pixgate/application"
	"github.com/pixgate/pixgate/domain"
	"github.com/pixgate/pixgate/ports"
)

// inProcessServer is pixgate's API handler with the memory store and a token of one account.
type inProcessServer struct {
	handler http.Handler
	token   string
	create  *application.CreateTransaction
	p       domain.Principal
}

// newInProcessServer wires the handler as cmd/pixgate/app.go does for the routes measured here:
// metrics around the store and the renderer, the access log at info level (to io.Discard, where
// the load run writes it to a file), JWT verification with its cache, the sandbox emitter.
func newInProcessServer(tb testing.TB, renderer ports.QRRenderer) *inProcessServer {
	tb.Helper()
	ctx := context.Background()
	clock, ids := system.Clock{}, system.UUIDs{}
	key, err := jwtauth.GenerateKey()
	if err != nil {
		tb.Fatal(err)
	}
	jwtCfg := jwtauth.Config{Issuer: "pixgate", Audience: "pixgate-api", Clock: clock}
	issuer, err := jwtauth.NewIssuer(jwtCfg, key)
	if err != nil {
		tb.Fatal(err)
	}
	verifier, err := jwtauth.NewVerifier(jwtCfg, jwtauth.VerifierOptions{Leeway: 30 * time.Second, CacheSize: 10_000}, &key.PublicKey)
	if err != nil {
		tb.Fatal(err)
	}
	hasher, err := application.NewSecretHasher([]byte("load-profile-key-load-profile-key"))
	if err != nil {
		tb.Fatal(err)
	}
	accounts := memory.NewAccounts()
	created, err := application.NewCreateAccount(accounts, ids, clock, hasher).Execute(ctx, "Load", nil)
	if err != nil {
		tb.Fatal(err)
	}
	p := domain.Principal{AccountID: created.Account.ID(), ClientID: created.Credential.ClientID, Scopes: created.Account.Scopes()}
	tok, err := issuer.Issue(ctx, p, time.Hour)
	if err != nil {
		tb.Fatal(err)
	}
	emitter, err := defaultEmitter()
	if err != nil {
		tb.Fatal(err)
	}
	m := metrics.New()
	txs := m.Transactions(memory.NewStore().Transactions())
	create := application.NewCreateTransaction(txs, emitter, m.QRRenderer(renderer), ids, clock)
	srv := httpapi.New(httpapi.Config{MaxBodyBytes: 1 << 20, Sandbox: true}, httpapi.Deps{
		Authenticator:     application.NewAuthenticate(verifier, accounts),
		CreateTransaction: create,
		GetTransaction:    application.NewGetTransaction(txs),
		ListTransactions:  application.NewListTransactions(txs),
		RefundTransaction: application.NewRefundTransaction(txs, clock),
		Observer:          m,
		Logger:            slog.New(slog.NewJSONHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelInfo})),
	})
	return &inProcessServer{handler: srv.Handler(), token: tok.Token, create: create, p: p}
}

func (s *inProcessServer) serve(tb testing.TB, method, target string, body []byte, want int) *httptest.ResponseRecorder {
	var rd io.Reader
	if body != nil {
		rd = strings.NewReader(string(body))
	}
	req := httptest.NewRequest(method, target, rd)
	req.Header.Set("Authorization", "Bearer "+s.token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	w := httptest.NewRecorder()
	s.handler.ServeHTTP(w, req)
	if w.Code != want {
		tb.Fatalf("%s %s: %d, want %d: %s", method, target, w.Code, want, w.Body.String())
	}
	return w
}

// seed creates n transactions of the account directly through the use case.
func (s *inProcessServer) seed(tb testing.TB, n int) []string {
	ids := make([]string, n)
	for i := range ids {
		res, err := s.create.Execute(context.Background(), s.p, application.CreateTransactionInput{Order: loadOrder(listSeedEmail(i))})
		if err != nil {
			tb.Fatal(err)
		}
		ids[i] = res.Transaction.ID()
	}
	return ids
}

// realImages draws real QR images beforehand and hands out copies (pooledImages).
func realImages(tb testing.TB) *pooledImages {
	payloads, err := transactionPayloads(context.Background(), 64)
	if err != nil {
		tb.Fatal(err)
	}
	r := qr.NewRenderer(0)
	p := &pooledImages{}
	for _, c := range payloads {
		png, err := r.RenderPNG(context.Background(), c)
		if err != nil {
			tb.Fatal(err)
		}
		p.images = append(p.images, png)
	}
	return p
}

// BenchmarkServeGetTransaction is GET /transaction/{id} through the whole handler.
func BenchmarkServeGetTransaction(b *testing.B) {
	s := newInProcessServer(b, realImages(b))
	ids := s.seed(b, 1000)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		s.serve(b, http.MethodGet, "/transaction/"+ids[i%len(ids)], nil, http.StatusOK)
		i++
	}
}

// BenchmarkServeCreateTransaction is POST /transaction through the whole handler, with the real
// QR renderer.
func BenchmarkServeCreateTransaction(b *testing.B) {
	s := newInProcessServer(b, qr.NewRenderer(0))
	body := loadBody("maria@example.com")
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			s.serve(b, http.MethodPost, "/transaction", body, http.StatusCreated)
		}
	})
}

// BenchmarkServeListTransactions is GET /transaction with the 1% filter over 100,000
// transactions of the account.
func BenchmarkServeListTransactions(b *testing.B) {
	s := newInProcessServer(b, realImages(b))
	s.seed(b, 100_000)
	target := "/transaction?" + url.Values{"customerEmail": {listEmail}, "perPage": {"20"}}.Encode()
	b.ReportAllocs()
	for b.Loop() {
		s.serve(b, http.MethodGet, target, nil, http.StatusOK)
	}
}
