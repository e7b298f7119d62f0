package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/pixgate/pixgate/application"
	"github.com/pixgate/pixgate/domain"
)

// BenchmarkPaymentPageOpenChannels measures what open payment pages cost the server: it
// creates 1,000 charges, then opens one live channel (GET /pay/{token}/events) to each over
// raw loopback connections that send the request, read the first event and then sit idle, as
// a phone with the page open does. It reports the growth of the heap and of the goroutine
// stacks per open page (the client side is a bare net.Conn each, a few hundred bytes, counted
// in; nothing else of the client is). It measures the server as serve assembles it, the API's
// middleware around the page included, so it stays beside newApp while the page's behaviour is
// tested in adapters/httpapi (payment_page_test.go). Run it with:
//
//	go test -run '^$' -bench PaymentPageOpenChannels -benchtime 1x ./cmd/pixgate
func BenchmarkPaymentPageOpenChannels(b *testing.B) {
	const pages = 1000
	vars := map[string]string{"PIXGATE_SANDBOX": "true", "PIXGATE_RATE_LIMIT_RPS": "0", "PIXGATE_PAY_RATE_LIMIT_RPS": "0",
		"PIXGATE_PAY_STREAMS_PER_ADDRESS": "100000"}
	cfg, err := loadConfig(func(k string) string { return vars[k] })
	if err != nil {
		b.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(nil)
	defer srv.Close()
	a, err := newApp(context.Background(), cfg, slog.New(slog.NewJSONHandler(io.Discard, nil)),
		func(a *app) { a.publicURL = "http://" + srv.Listener.Addr().String() })
	if err != nil {
		b.Fatal(err)
	}
	srv.Config.Handler = a.server.Handler()
	srv.Start()

	ctx := context.Background()
	created, err := application.NewCreateAccount(a.stores.accounts, a.ids, a.clock, a.hasher).Execute(ctx, "Loja Medida", nil)
	if err != nil {
		b.Fatal(err)
	}
	create := application.NewCreateTransaction(a.stores.transactions, a.emitter, a.renderer, a.ids, a.tokens, a.clock)
	tokens := make([]string, pages)
	for i := range tokens {
		res, err := create.Execute(ctx, domain.Principal{AccountID: created.Account.ID()}, application.CreateTransactionInput{
			Order: domain.Order{Amount: domain.Cents(1000 + i), PaymentMethod: domain.PaymentPIX, IsInfoProduct: true, ExpirationSeconds: 3600},
		})
		if err != nil {
			b.Fatal(err)
		}
		tokens[i] = res.Transaction.PaymentToken()
	}
	addr := srv.Listener.Addr().String()

	for b.Loop() {
		before := memoryInUse()
		conns := make([]net.Conn, 0, pages)
		for _, tok := range tokens {
			c, err := net.Dial("tcp", addr)
			if err != nil {
				b.Fatal(err)
			}
			fmt.Fprintf(c, "GET /pay/%s/events HTTP/1.1\r\nHost: %s\r\nAccept: text/event-stream\r\n\r\n", tok, addr)
			_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
			if err := readFirstEvent(c); err != nil {
				b.Fatalf("channel %d: %v", len(conns), err)
			}
			conns = append(conns, c)
		}
		if n := a.payPage.OpenStreams(); n != pages {
			b.Fatalf("%d channels open, want %d", n, pages)
		}
		after := memoryInUse()
		b.ReportMetric(float64(after-before)/pages, "B/page")
		b.ReportMetric(float64(runtime.NumGoroutine())/pages, "goroutines/page")
		for _, c := range conns {
			c.Close()
		}
		deadline := time.Now().Add(10 * time.Second)
		for a.payPage.OpenStreams() != 0 && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
	}
}

// readFirstEvent reads a live channel's answer up to its first data line.
func readFirstEvent(c net.Conn) error {
	r := bufio.NewReaderSize(c, 512)
	res, err := http.ReadResponse(r, nil)
	if err != nil {
		return err
	}
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("status %d", res.StatusCode)
	}
	body := bufio.NewReader(res.Body)
	for {
		line, err := body.ReadString('\n')
		if err != nil {
			return err
		}
		if strings.HasPrefix(line, "data: ") {
			return nil
		}
	}
}

// memoryInUse is the heap in use and the goroutine stacks, after a collection.
func memoryInUse() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse + m.StackInuse
}
