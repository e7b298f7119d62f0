package main

import (
	"bytes"
	"context"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pixgate/pixgate/adapters/memory"
	"github.com/pixgate/pixgate/adapters/qr"
	"github.com/pixgate/pixgate/adapters/system"
	"github.com/pixgate/pixgate/application"
	"github.com/pixgate/pixgate/domain"
	"github.com/pixgate/pixgate/ports"
)

// memoryFigure is the heap one stored transaction takes, read at a number of stored ones.
type memoryFigure struct {
	Stored     int
	BytesPerTx float64 // HeapInuse growth / Stored
	PNGBytes   int     // mean size of the QR images stored
}

// pooledImages is the QR renderer of the in-process store: it hands out copies of real images
// drawn beforehand by the real Renderer, one fresh allocation per transaction as a drawing
// would be, because drawing a million (1.5 ms each) would take the whole run.
type pooledImages struct {
	images [][]byte
	next   atomic.Int64
}

func (p *pooledImages) RenderPNG(context.Context, string) ([]byte, error) {
	return bytes.Clone(p.images[int(p.next.Add(1))%len(p.images)]), nil
}

// loadOrder is the domain's Order of loadBody(email), built with the domain's parsers as the
// HTTP adapter builds it.
func loadOrder(email string) domain.Order {
	must := func(s string, err error) string {
		if err != nil {
			panic(err)
		}
		return s
	}
	return domain.Order{
		Amount: loadAmount, PaymentMethod: domain.PaymentPIX, ExternalCode: "order-000123",
		Customer: &domain.Customer{IP: "203.0.113.7", Name: "João D'Ávila-Souza", Email: email,
			Document: domain.MustParseDocument("529.982.247-25"), Landline: must(domain.ParseLandline("+55 (11) 3456-7890")),
			MobilePhone: must(domain.ParseMobile("(21) 98765-4321")), Birthdate: "1990-05-17"},
		Seller: &domain.Seller{Name: "Loja Exemplo", Document: domain.MustParseDocument("11.222.333/0001-81")},
		Address: &domain.Address{ZipCode: must(domain.ParseZipCode("01310-100")), Number: "1578", Street: "Avenida Paulista",
			Neighborhood: "Bela Vista", City: "São Paulo", State: "SP", Country: "Brasil", Complement: "Conjunto 42"},
		Items: []domain.Item{{Title: "Camiseta", Description: "Algodão", UnitPrice: 5000, Quantity: 2},
			{Title: "Boné", UnitPrice: 2345, Quantity: 1}},
		Metadata:          []byte(`{"attempt":1,"campaign":"black-friday"}`),
		ExpirationSeconds: 3600,
	}
}

// measureInProcess grows one account of a memory store through the creation use case (the real
// emitter, real QR images, the real clock and ids) and, at each size of o.listInProcess and
// o.memoryAt, times the list use case with the 1% filter and reads the heap.
func measureInProcess(ctx context.Context, o options, r *report, logf func(string, ...any)) error {
	payloads, err := transactionPayloads(ctx, 256)
	if err != nil {
		return err
	}
	renderer := qr.NewRenderer(0)
	images := &pooledImages{}
	pngBytes := 0
	for _, p := range payloads {
		png, err := renderer.RenderPNG(ctx, p)
		if err != nil {
			return err
		}
		images.images = append(images.images, png)
		pngBytes += len(png)
	}
	pngBytes /= len(payloads)
	emitter, err := defaultEmitter()
	if err != nil {
		return err
	}

	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	store := memory.NewStore()
	create := application.NewCreateTransaction(store.Transactions(), emitter, images, system.UUIDs{}, system.Capabilities{}, system.Clock{})
	list := application.NewListTransactions(store.Transactions())
	principal := domain.Principal{AccountID: "acc-load", ClientID: "load-client", Scopes: domain.AllScopes()}

	sizes := slices.Sorted(slices.Values(append(slices.Clone(o.listInProcess), o.memoryAt...)))
	sizes = slices.Compact(sizes)
	stored := 0
	for _, n := range sizes {
		start := time.Now()
		if err := createInProcess(ctx, create, principal, stored, n); err != nil {
			return err
		}
		logf("in process: stored %d transactions (%d in %s)", n, n-stored, time.Since(start).Round(time.Millisecond))
		stored = n
		if slices.Contains(o.memoryAt, n) {
			var now runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&now)
			per := float64(int64(now.HeapInuse)-int64(before.HeapInuse)) / float64(n)
			r.memory = append(r.memory, memoryFigure{Stored: n, BytesPerTx: per, PNGBytes: pngBytes})
			logf("in process: %.0f bytes of heap in use per stored transaction at %d (PNG %d bytes)", per, n, pngBytes)
		}
		if slices.Contains(o.listInProcess, n) {
			f, err := timeList(ctx, list, principal, n, o)
			if err != nil {
				return err
			}
			r.listInProcess = append(r.listInProcess, f)
			logf("in process: list with %d stored (%d match): p50 %s p99 %s over %d runs", n, f.Total, round(f.P50), round(f.P99), f.Runs)
		}
	}
	runtime.KeepAlive(store)
	return nil
}

// createInProcess creates transactions from..to-1 with every processor busy. The i-th belongs to
// listSeedEmail(i), as over HTTP.
func createInProcess(ctx context.Context, create *application.CreateTransaction, p domain.Principal, from, to int) error {
	var next atomic.Int64
	next.Store(int64(from))
	var wg sync.WaitGroup
	var failed atomic.Value
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= to || ctx.Err() != nil {
					return
				}
				if _, err := create.Execute(ctx, p, application.CreateTransactionInput{Order: loadOrder(listSeedEmail(i))}); err != nil {
					failed.Store(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if err, _ := failed.Load().(error); err != nil {
		return err
	}
	return ctx.Err()
}

// timeList runs the first page of 20 with the 1% filter until it has at least 100 timings and
// a fifth of o.hold has passed (at most 2000), and returns their p50 and p99.
func timeList(ctx context.Context, list *application.ListTransactions, p domain.Principal, stored int, o options) (listFigure, error) {
	f := ports.TransactionFilter{CustomerEmail: listEmail}
	page := ports.Page{Number: 1, Size: 20}
	var took []time.Duration
	total := 0
	start := time.Now()
	for len(took) < 2000 && (len(took) < 100 || time.Since(start) < o.hold/5) {
		t0 := time.Now()
		res, err := list.Execute(ctx, p, f, page)
		took = append(took, time.Since(t0))
		if err != nil {
			return listFigure{}, err
		}
		if want := (stored + 92) / 100; res.Total != want || len(res.Items) != min(20, want) {
			return listFigure{}, fmt.Errorf("in-process list at %d: total %d and %d items, want %d", stored, res.Total, len(res.Items), want)
		}
		total = res.Total
	}
	slices.Sort(took)
	return listFigure{Stored: stored, Method: "in process", P50: took[len(took)/2], P99: took[len(took)*99/100],
		Total: total, Runs: len(took)}, nil
}
