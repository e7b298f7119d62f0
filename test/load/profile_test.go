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
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/pixgate/pixgate/adapters/qr"
	"github.com/pixgate/pixgate/application"
	"github.com/pixgate/pixgate/domain"
	"github.com/pixgate/pixgate/ports"
)

// inProcessServer is pixgate's API handler with the memory store (inProcessAPI, wired as
// cmd/pixgate wires `pixgate serve`) and a token of one account.
type inProcessServer struct {
	api    *inProcessAPI
	token  string
	create *application.CreateTransaction
	p      domain.Principal
}

func newInProcessServer(tb testing.TB, renderer ports.QRRenderer) *inProcessServer {
	tb.Helper()
	api, err := newInProcessAPI(renderer)
	if err != nil {
		tb.Fatal(err)
	}
	p, token, err := api.account(context.Background(), "Load")
	if err != nil {
		tb.Fatal(err)
	}
	return &inProcessServer{api: api, token: token, create: api.create, p: p}
}

func (s *inProcessServer) serve(tb testing.TB, method, target string, body []byte, want int) *httptest.ResponseRecorder {
	w := s.api.serve(s.api.request(method, target, s.token, body))
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
	defer reportCPU(b)()
	i := 0
	for b.Loop() {
		s.serve(b, http.MethodGet, "/transaction/"+ids[i%len(ids)], nil, http.StatusOK)
		i++
	}
}

// BenchmarkServeGetTransactionBare is the in-process twin of the load run's bare baseline (a):
// a plain http.HandlerFunc answering one stored transaction's GET body, fixed, through the same
// harness (the same request with its bearer token, the same recorder). Run with
// BenchmarkServeGetTransaction, the difference of the two is what pixgate's handler costs per
// lookup beyond writing its answer:
//
//	cd test && go test -run '^$' -bench 'BenchmarkServeGetTransaction(Bare)?$' -benchmem ./load
func BenchmarkServeGetTransactionBare(b *testing.B) {
	s := newInProcessServer(b, realImages(b))
	ids := s.seed(b, 1)
	body := s.serve(b, http.MethodGet, "/transaction/"+ids[0], nil, http.StatusOK).Body.Bytes()
	bare := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(body)
	})
	b.ReportAllocs()
	defer reportCPU(b)()
	for b.Loop() {
		w := httptest.NewRecorder()
		bare.ServeHTTP(w, s.api.request(http.MethodGet, "/transaction/"+ids[0], s.token, nil))
		if w.Code != http.StatusOK {
			b.Fatalf("bare: %d", w.Code)
		}
	}
}

// reportCPU, deferred before a benchmark's loop, reports the process's CPU time (user and
// system, every thread: garbage collection included) per operation as cpu-ns/op, the figure
// the load run's server CPU per request compares.
func reportCPU(b *testing.B) func() {
	start := selfCPU()
	return func() {
		b.ReportMetric(float64(selfCPU()-start)/float64(b.N), "cpu-ns/op")
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
