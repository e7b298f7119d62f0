package main

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/pixgate/pixgate/application"
	"github.com/pixgate/pixgate/domain"
)

// BenchmarkPixLocation compares, in one run and through the whole server (router, middleware,
// metrics, the memory store), what a payer's bank costs pixgate with what a merchant's lookup
// does:
//
//   - transaction-get: GET /transaction/{id} with a bearer token, the baseline;
//   - location-unchanged: GET /pix/qr/{locationId} of a charge whose signed answer is kept (a
//     map read and a cache hit, no signature);
//   - location-after-change: GET /pix/qr/{locationId} when the kept answer is not there, as
//     for the first fetch after a change of status: the look-up and one PS256 signature (two
//     charges fetched in turn with room for one kept answer, so every fetch signs).
//
// Requests are served in process (httptest.NewRecorder), so no socket is timed. It measures the
// server as serve assembles it, with serve's cache of signed answers sized by the benchmark, so
// it stays beside newApp while the locations' behaviour is tested in adapters/httpapi
// (pix_location_test.go), whose harness builds for tests only (*testing.T). Run it with:
//
//	go test -run '^$' -bench PixLocation -benchmem ./cmd/pixgate
func BenchmarkPixLocation(b *testing.B) {
	h, paths, auth := pixLocationBenchServer(b, 0)
	hSign, signPaths, _ := pixLocationBenchServer(b, 1)

	serve := func(b *testing.B, h http.Handler, path, token string) {
		req := httptest.NewRequest(http.MethodGet, path, nil)
		req.RemoteAddr = "192.0.2.1:1234"
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code != http.StatusOK {
			b.Fatalf("GET %s: %d %s", path, w.Code, w.Body)
		}
	}
	b.Run("transaction-get", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			serve(b, h, paths.transaction, auth)
		}
	})
	b.Run("location-unchanged", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			serve(b, h, paths.location, "")
		}
	})
	b.Run("location-after-change", func(b *testing.B) {
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			serve(b, hSign, signPaths.locations[i%2], "")
			i++
		}
	})
}

type pixBenchPaths struct {
	transaction string
	location    string
	locations   [2]string
}

// pixLocationBenchServer assembles pixgate with a public address and two charges, and returns
// its handler, their paths and a bearer token of their account.
func pixLocationBenchServer(b *testing.B, cacheSize int) (http.Handler, pixBenchPaths, string) {
	b.Helper()
	vars := map[string]string{"PIXGATE_SANDBOX": "true", "PIXGATE_RATE_LIMIT_RPS": "0",
		"PIXGATE_PIX_LOCATION_RATE_LIMIT_RPS": "0", "PIXGATE_PUBLIC_URL": "https://pay.shop.example"}
	cfg, err := loadConfig(func(k string) string { return vars[k] })
	if err != nil {
		b.Fatal(err)
	}
	a, err := newApp(context.Background(), cfg, slog.New(slog.NewJSONHandler(io.Discard, nil)),
		func(a *app) { a.pixLocationCache = cacheSize })
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	created, err := application.NewCreateAccount(a.stores.accounts, a.ids, a.clock, a.hasher).Execute(ctx, "Loja Medida", nil)
	if err != nil {
		b.Fatal(err)
	}
	principal := domain.Principal{AccountID: created.Account.ID(), ClientID: created.Credential.ClientID, Scopes: created.Account.Scopes()}
	tok, err := a.issuer.Issue(ctx, principal, time.Hour)
	if err != nil {
		b.Fatal(err)
	}
	create := application.NewCreateTransaction(a.stores.transactions, a.emitter, a.renderer, a.ids, a.tokens, a.clock)
	var p pixBenchPaths
	for i := range p.locations {
		res, err := create.Execute(ctx, principal, application.CreateTransactionInput{
			Order: domain.Order{Amount: 12345, PaymentMethod: domain.PaymentPIX, IsInfoProduct: true, ExpirationSeconds: 86400,
				Items: []domain.Item{{Title: "Camiseta", Description: "Algodão", UnitPrice: 12345, Quantity: 1}}},
		})
		if err != nil {
			b.Fatal(err)
		}
		uri := res.Transaction.Pix().URI
		loc := uri[strings.Index(uri, "/pix/qr/"):]
		p.locations[i] = loc[:len("/pix/qr/")+26]
		p.transaction = "/transaction/" + res.Transaction.ID()
	}
	p.location = p.locations[0]
	return a.server.Handler(), p, tok.Token
}
