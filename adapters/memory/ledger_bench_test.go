package memory_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/pixgate/pixgate/adapters/memory"
	"github.com/pixgate/pixgate/adapters/sandbox"
	"github.com/pixgate/pixgate/domain"
	"github.com/pixgate/pixgate/ports"
)

// ledgerOf returns a store whose account "acc-bench" has n ledger entries: payments of 1.00
// (and every tenth a fee), through Ledger.Post, which numbers and checks them as a status
// change's postings are.
func ledgerOf(b *testing.B, n int) *memory.Store {
	b.Helper()
	s := memory.NewStore()
	ctx := context.Background()
	batch := make([]domain.Posting, 0, 1000)
	for i := range n {
		p := domain.Posting{ID: fmt.Sprintf("seed/%d", i), Type: domain.MovePayment, AccountID: "acc-bench",
			Resource: domain.ResourceTransaction, ResourceID: fmt.Sprintf("tx-%d", i/2),
			Debit: domain.LedgerClearing, Credit: domain.LedgerAvailable, Amount: 100,
			At: base.Add(time.Duration(i) * time.Millisecond)}
		if i%10 == 9 {
			p.Type, p.Debit, p.Credit, p.Amount = domain.MoveFee, domain.LedgerAvailable, domain.LedgerFees, 1
		}
		batch = append(batch, p)
		if len(batch) == cap(batch) || i == n-1 {
			if _, err := s.Ledger().Post(ctx, batch...); err != nil {
				b.Fatal(err)
			}
			batch = batch[:0]
		}
	}
	return s
}

// p99 runs op b.N times and reports the 99th percentile of one op beside ns/op.
func p99(b *testing.B, op func() error) {
	b.Helper()
	took := make([]time.Duration, 0, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		if err := op(); err != nil {
			b.Fatal(err)
		}
		took = append(took, time.Since(start))
	}
	b.StopTimer()
	slices.Sort(took)
	b.ReportMetric(float64(took[len(took)*99/100].Microseconds()), "p99-µs")
}

// BenchmarkLedger reads the balance, checks and posts a withdrawal, and reads the statement's
// first page of an account with 1,000 and with 1,000,000 entries: the balance is the last
// entry's and the check needs nothing else, so the two sizes must cost the same. Run it with
//
//	go test -run '^$' -bench BenchmarkLedger -benchtime 20000x ./adapters/memory/
func BenchmarkLedger(b *testing.B) {
	for _, n := range []int{1_000, 1_000_000} {
		s := ledgerOf(b, n)
		ctx := context.Background()
		size := fmt.Sprintf("%dk", n/1000)
		b.Run(size+"/balance", func(b *testing.B) {
			p99(b, func() error { _, err := s.Ledger().Balance(ctx, "acc-bench"); return err })
		})
		ids := 0
		b.Run(size+"/withdrawal", func(b *testing.B) {
			p99(b, func() error {
				ids++
				w, err := domain.NewWithdrawal(fmt.Sprintf("wd-%s-%d", size, ids), "acc-bench", "SANDBOX",
					domain.Payout{Amount: 1, PixKey: domain.PixKey{Type: domain.PixKeyEmail, Key: "maria@example.com"}},
					domain.Idempotency{}, base)
				if err != nil {
					return err
				}
				return s.Withdrawals().Create(ctx, w)
			})
		})
		b.Run(size+"/statement-first-page", func(b *testing.B) {
			p99(b, func() error {
				_, err := s.Ledger().Entries(ctx, ports.EntryFilter{AccountID: "acc-bench"}, 21)
				return err
			})
		})
		b.Run(size+"/statement-first-page-of-fees", func(b *testing.B) {
			p99(b, func() error {
				_, err := s.Ledger().Entries(ctx, ports.EntryFilter{AccountID: "acc-bench", Types: []domain.MovementType{domain.MoveFee}}, 21)
				return err
			})
		})
	}
}

// BenchmarkSandboxPayPosting is the whole sandbox payment path: load, transition, store with its
// two entries, under the store's lock. BenchmarkApplyPaymentPostings (ledger_internal_test.go)
// is the ledger's share of it alone; posting adds apply / (pay - apply) to the path. Run both
// with
//
//	go test -run '^$' -bench 'SandboxPayPosting|ApplyPaymentPostings' -benchtime 200000x ./adapters/memory/
func BenchmarkSandboxPayPosting(b *testing.B) {
	ctx := context.Background()
	receiver, err := sandbox.ReceivingAccount("pagamentos@pixgate.example", "Loja")
	if err != nil {
		b.Fatal(err)
	}
	merchant := domain.Principal{AccountID: "acc-bench", Scopes: domain.AllScopes()}
	runs := 0
	b.Run("pay", func(b *testing.B) {
		runs++
		s := memory.NewStore()
		pay := sandbox.NewTransactionSteering(s.Transactions(), benchClock{}, domain.FeePolicy{FixedCents: 10, BasisPoints: 99}, receiver).PayTransaction
		ids := make([]string, b.N)
		for i := range ids {
			tx := newTransaction(b, runs*10_000_000+i, "acc-bench", base, false)
			if err := s.Transactions().Create(ctx, tx); err != nil {
				b.Fatal(err)
			}
			ids[i] = tx.ID()
		}
		b.ReportAllocs()
		b.ResetTimer()
		for i := range b.N {
			if _, err := pay.Execute(ctx, merchant, ids[i], nil); err != nil {
				b.Fatal(err)
			}
		}
	})
}

type benchClock struct{}

func (benchClock) Now() time.Time { return base.Add(time.Minute) }
