package memory_test

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/pixgate/pixgate/adapters/memory"
	"github.com/pixgate/pixgate/domain"
	"github.com/pixgate/pixgate/ports"
)

// BenchmarkList lists the first page of 20 from one account of 10k and 100k transactions with
// filters that each select 1% of them, and one that selects all; besides ns/op it reports the
// 99th percentile of one List. Run it with
//
//	go test -run '^$' -bench BenchmarkList -benchtime 2000x ./adapters/memory/
func BenchmarkList(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		s := storeForList(b, n)
		one := func(c domain.Cents) *domain.Cents { return &c }
		for _, c := range []struct {
			name string
			f    ports.TransactionFilter
		}{
			{"status", ports.TransactionFilter{Statuses: []domain.TransactionStatus{domain.TxBlocked}}},
			{"email", ports.TransactionFilter{CustomerEmail: "BUYER7@example.com"}},
			{"name", ports.TransactionFilter{CustomerName: "comprador sete"}},
			{"amount", ports.TransactionFilter{MinAmount: one(100_000), MaxAmount: one(100_099)}},
			{"none", ports.TransactionFilter{}},
		} {
			b.Run(fmt.Sprintf("%dk/%s", n/1000, c.name), func(b *testing.B) {
				c.f.AccountID = "acc-bench"
				ctx := context.Background()
				page, err := s.Transactions().List(ctx, c.f, ports.Page{Number: 1, Size: 20})
				if err != nil || len(page.Items) != 20 {
					b.Fatalf("List = %d items, %v", len(page.Items), err)
				}
				if c.name != "none" && page.Total != n/100 {
					b.Fatalf("the filter selects %d of %d, want 1%%", page.Total, n)
				}
				var took []time.Duration
				for b.Loop() {
					start := time.Now()
					if _, err := s.Transactions().List(ctx, c.f, ports.Page{Number: 1, Size: 20}); err != nil {
						b.Fatal(err)
					}
					took = append(took, time.Since(start))
				}
				slices.Sort(took)
				b.ReportMetric(float64(took[len(took)*99/100].Nanoseconds()), "p99-ns")
			})
		}
	}
}

// storeForList stores n transactions in one account, one a second apart. Every hundredth one
// is BLOCKED, belongs to buyer 7 ("Comprador Sete") and costs 1000.xx reais; the others differ.
func storeForList(b *testing.B, n int) *memory.Store {
	b.Helper()
	s := memory.NewStore()
	ctx := context.Background()
	for i := range n {
		createdAt := base.Add(time.Duration(i) * time.Second)
		tx := newTransaction(b, i, "acc-bench", createdAt, false)
		r := tx.Record()
		c := *r.Order.Customer
		c.Name, c.Email = fmt.Sprintf("Comprador %d", i%100+10), fmt.Sprintf("buyer%d@example.com", i%100+10)
		r.Order.Amount = domain.Cents(1000 + i%100)
		if i%100 == 7 {
			c.Name, c.Email = "Comprador Sete", "buyer7@example.com"
			r.Order.Amount = domain.Cents(100_000 + i%97)
		}
		r.Order.Customer = &c
		tx = domain.UnmarshalTransactionFromDatabase(r)
		if i%100 == 7 {
			paid := r.Order.Amount
			if err := tx.Pay(domain.Payment{AmountPaid: paid, PaidAt: createdAt}, createdAt); err != nil {
				b.Fatal(err)
			}
			if err := tx.OpenDispute(createdAt); err != nil {
				b.Fatal(err)
			}
		}
		if err := s.Transactions().Create(ctx, tx); err != nil {
			b.Fatal(err)
		}
	}
	return s
}

// BenchmarkStoredTransaction reports the heap one stored transaction takes (1 KB QR code
// included), without and with a webhook URL (the latter adds its event and delivery).
func BenchmarkStoredTransaction(b *testing.B) {
	for _, webhook := range []bool{false, true} {
		b.Run(fmt.Sprintf("webhook=%v", webhook), func(b *testing.B) {
			var perTx float64
			for b.Loop() {
				perTx = bytesPerStoredTransaction(b, 20_000, webhook)
			}
			b.ReportMetric(perTx, "B/tx")
		})
	}
}

// bytesPerStoredTransaction stores n transactions in a new store and returns the growth of the
// live heap divided by n. The aggregates handed in are garbage once stored, so what remains
// is what the store keeps.
func bytesPerStoredTransaction(tb testing.TB, n int, webhook bool) float64 {
	tb.Helper()
	ctx := context.Background()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	s := memory.NewStore()
	for i := range n {
		tx := newTransaction(tb, i, fmt.Sprintf("acc-%d", i%10), base.Add(time.Duration(i)*time.Millisecond), webhook)
		if err := s.Transactions().Create(ctx, tx); err != nil {
			tb.Fatal(err)
		}
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(s)
	return float64(int64(after.HeapAlloc)-int64(before.HeapAlloc)) / float64(n)
}
