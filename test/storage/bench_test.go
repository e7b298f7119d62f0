package storage_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"go.mongodb.org/mongo-driver/v2/mongo/writeconcern"

	"github.com/pixgate/pixgate/domain"
	"github.com/pixgate/pixgate/test/testdb"
)

// BenchmarkInsert measures transactions created through the adapter beside raw driver inserts
// of the same documents, in the same run on the same server. The adapter first stores b.N
// transactions (paid ones with a webhook: two events in the outbox) untimed; their documents
// are read back as raw BSON. Then, timed, in alternating blocks so that neither side gets the
// warmer server: the adapter creates b.N more transactions of the same shape in a second
// database, and the driver inserts the raw documents into a third one with the same indexes
// and write concern. It reports both rates and the ratio of the times (the target is an
// adapter within 1.5x of the driver).
//
//	go test ./storage -run '^$' -bench Insert -benchtime 1000x
func BenchmarkInsert(b *testing.B) {
	for _, workers := range []int{1, 8} {
		b.Run(map[int]string{1: "serial", 8: "8-way"}[workers], func(b *testing.B) {
			benchmarkInsert(b, workers)
		})
	}
}

func benchmarkInsert(b *testing.B, workers int) {
	srv := testdb.Shared(b)
	ctx := context.Background()
	sourceCfg, adapterCfg, driverCfg := srv.Config(b), srv.Config(b), srv.Config(b)
	source := testdb.OpenStore(b, srv, sourceCfg)
	store := testdb.OpenStore(b, srv, adapterCfg)
	testdb.OpenStore(b, srv, driverCfg) // creates the same indexes in the driver's database
	client := testdb.Client(b, srv)

	build := func() []*domain.Transaction {
		txs := make([]*domain.Transaction, b.N)
		for i := range txs {
			txs[i] = paidTransaction(b, newID(), domain.Cents(1000+i), base.Add(time.Duration(i)*time.Millisecond))
		}
		return txs
	}
	sourceTxs, txs := build(), build()
	if _, err := parallel(0, b.N, workers, func(i int) error { return source.Transactions().Create(ctx, sourceTxs[i]) }); err != nil {
		b.Fatal(err)
	}
	cur, err := client.Database(sourceCfg.Database).Collection("transactions").Find(ctx, bson.D{})
	if err != nil {
		b.Fatal(err)
	}
	var docs []bson.Raw
	if err := cur.All(ctx, &docs); err != nil || len(docs) != b.N {
		b.Fatalf("read back %d documents, %v; want %d", len(docs), err, b.N)
	}
	coll := client.Database(driverCfg.Database).Collection("transactions",
		options.Collection().SetWriteConcern(writeconcern.Majority()))
	b.ResetTimer()

	const block = 50
	var adapterTime, driverTime time.Duration
	for from := 0; from < b.N; from += block {
		to := min(from+block, b.N)
		d, err := parallel(from, to, workers, func(i int) error { return store.Transactions().Create(ctx, txs[i]) })
		if err != nil {
			b.Fatal(err)
		}
		adapterTime += d
		d, err = parallel(from, to, workers, func(i int) error { _, err := coll.InsertOne(ctx, docs[i]); return err })
		if err != nil {
			b.Fatal(err)
		}
		driverTime += d
	}

	b.StopTimer()
	adapterRate := float64(b.N) / adapterTime.Seconds()
	driverRate := float64(b.N) / driverTime.Seconds()
	b.ReportMetric(adapterRate, "adapter-inserts/s")
	b.ReportMetric(driverRate, "driver-inserts/s")
	b.ReportMetric(adapterTime.Seconds()/driverTime.Seconds(), "adapter/driver-time")
}

// parallel runs fn(from..to-1) on workers goroutines and returns how long it took, or the
// first error.
func parallel(from, to, workers int, fn func(i int) error) (time.Duration, error) {
	start := time.Now()
	next := make(chan int)
	var wg sync.WaitGroup
	var once sync.Once
	var first error
	for range workers {
		wg.Go(func() {
			for i := range next {
				if err := fn(i); err != nil {
					once.Do(func() { first = err })
				}
			}
		})
	}
	for i := from; i < to; i++ {
		next <- i
	}
	close(next)
	wg.Wait()
	return time.Since(start), first
}
