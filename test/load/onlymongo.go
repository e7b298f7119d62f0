package main

import (
	"context"
	"fmt"
	"runtime"
	"time"
)

// runOnlyMongo is -only-mongo: baseline (b), the QR renderer alone, then the MongoDB phase, and
// the figures of its POST /transaction target in the log, within a minute and a half. It
// writes no report (the others phases are not measured): it is there to study the phase, for
// example with the server's profile (-server-env PIXGATE_PPROF_ADDR=...), without the ten
// minutes of a full run.
func runOnlyMongo(ctx context.Context, o options, root string, r *report, logf func(string, ...any)) error {
	payloads, err := transactionPayloads(ctx, 256)
	if err != nil {
		return err
	}
	if r.qrPerSecond, r.qrCPU, r.qrPNGBytes, err = qrCeiling(ctx, payloads, o.qrFor); err != nil {
		return err
	}
	logf("(b) QR renderer alone: %.0f images/s on %d goroutines (%s of CPU each)", r.qrPerSecond, runtime.GOMAXPROCS(0), r.qrCPU.Round(time.Microsecond))
	if err := measureMongo(ctx, o, root, r, logf); err != nil {
		return err
	}
	mg := r.mongo
	ceiling := 1 / (1/mg.Insert.PerSecond + 1/r.qrPerSecond)
	post := mg.Post.Sustained.Throughput
	logf("POST /transaction sustained %.0f/s (p99 %s); raw InsertOne %.0f/s and (b) %.0f/s together %.0f/s: %.2f of it (goal %.2f)",
		post, round(mg.Post.Sustained.P99), mg.Insert.PerSecond, r.qrPerSecond, ceiling, post/ceiling, goalMongoShare)
	logf("GET /transaction/{id} sustained %.0f/s (p99 %s); raw FindOne %.0f/s: %.2f of it",
		mg.Get.Sustained.Throughput, round(mg.Get.Sustained.P99), mg.Find.PerSecond, mg.Get.Sustained.Throughput/mg.Find.PerSecond)
	if mg.Cut != "" {
		return fmt.Errorf("the phase was cut: %s", mg.Cut)
	}
	return nil
}
