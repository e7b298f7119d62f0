package storage_test

import (
	"context"
	"testing"
	"time"

	"github.com/pixgate/pixgate/domain"
	"github.com/pixgate/pixgate/test/testdb"
)

// BenchmarkStatusChange measures what the write claims cost a status change: b.N status
// changes (a dispute opened or rejected, which also posts the ledger entries of the hold)
// through the adapter as pixgate runs it, and as many with the claims skipped
// (Config.NoClaims, correct for one instance only), in alternating blocks over transactions
// of their own, serially. It reports both rates and the ratio of the times.
//
//	go test ./storage -run '^$' -bench StatusChange -benchtime 300x
func BenchmarkStatusChange(b *testing.B) {
	srv := testdb.Shared(b)
	ctx := context.Background()
	claimed := testdb.OpenStore(b, srv, srv.Config(b))
	cfg := srv.Config(b)
	cfg.NoClaims = true
	unclaimed := testdb.OpenStore(b, srv, cfg)
	const pool = 20 // transactions per store, changed in turn
	var withClaims, without []*domain.Transaction
	for i := range pool {
		for _, side := range []struct {
			txs   *[]*domain.Transaction
			store interface {
				Create(context.Context, *domain.Transaction) error
			}
		}{{&withClaims, claimed.Transactions()}, {&without, unclaimed.Transactions()}} {
			tx := paidTransaction(b, newID(), domain.Cents(1000+i), base)
			if err := side.store.Create(ctx, tx); err != nil {
				b.Fatal(err)
			}
			*side.txs = append(*side.txs, tx)
		}
	}
	b.ResetTimer()
	const block = 25
	var claimedTime, unclaimedTime time.Duration
	for from := 0; from < b.N; from += block {
		to := min(from+block, b.N)
		start := time.Now()
		for i := from; i < to; i++ {
			tx := withClaims[i%pool]
			if _, err := claimed.Transactions().Update(ctx, tx.AccountID(), tx.ID(), toggleDispute(base.Add(time.Duration(i)*time.Second))); err != nil {
				b.Fatal(err)
			}
		}
		claimedTime += time.Since(start)
		start = time.Now()
		for i := from; i < to; i++ {
			tx := without[i%pool]
			if _, err := unclaimed.Transactions().Update(ctx, tx.AccountID(), tx.ID(), toggleDispute(base.Add(time.Duration(i)*time.Second))); err != nil {
				b.Fatal(err)
			}
		}
		unclaimedTime += time.Since(start)
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/claimedTime.Seconds(), "claimed-changes/s")
	b.ReportMetric(float64(b.N)/unclaimedTime.Seconds(), "unclaimed-changes/s")
	b.ReportMetric(claimedTime.Seconds()/unclaimedTime.Seconds(), "claimed/unclaimed-time")
}
