// Command load is pixgate's load harness (`make load`, or `cd test && go run ./load`).
//
// It builds `pixgate serve`, runs it on loopback with the memory store, the sandbox emitter and
// authentication on, and drives it with vegeta (an open-model load generator: requests leave at
// the set rate whether or not earlier ones have been answered). In the same run it measures the
// two ceilings the targets are ratios of: a bare net/http server answering a fixed JSON body as
// large as a Transaction, and the QR renderer alone on every core. What HTTP cannot reach in the
// time (a list over a million transactions, the bytes one stored transaction takes) is measured
// in this process over the memory adapter. Last, unless -mongo=false, it measures the MongoDB
// adapter within 60 s: pixgate serve with PIXGATE_STORE=mongo against FerretDB on SQLite (a
// child process on loopback), its GET and POST beside the raw driver's finds and inserts of the
// same documents (mongo.go). The ledger phases (ledger.go) then time GET /balance, POST
// /withdrawal and the statement's first page on a short and a long ledger, in process (1,000
// and 1,000,000 entries) and on FerretDB (1,000 and up to 100,000, as far as two minutes of
// seeding get). It prints one table with each target met or missed
// and writes it into docs/PERFORMANCE.md, between markers, with the machine, the commit, the Go
// version and the exact commands.
//
// It only ever connects to 127.0.0.1, and it is bounded in time (-budget, 10 minutes by
// default): the full run takes about eight minutes on 2 cores, -short about half a minute
// (what the smoke test runs). It asserts nothing: a missed target is printed as missed, not as
// a failure.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "load:", err)
		os.Exit(1)
	}
}

// options are the sizes of one run. The full run's are the defaults; -short shrinks every
// duration and count so that the whole harness runs in seconds.
type options struct {
	short bool
	// step is how long each rate of a step-up lasts; hold, each fixed-rate run.
	step, hold time.Duration
	// probe is how long the closed-model probe that estimates a capacity lasts.
	probe time.Duration
	// qrFor is how long the renderer baseline draws.
	qrFor time.Duration
	// lookups is how many transactions GET /transaction/{id} cycles through.
	lookups int
	// listHTTP are the stored transactions at which GET /transaction is measured over HTTP
	// (seeded by POSTing); listInProcess, the ones measured in process over the memory adapter.
	listHTTP, listInProcess []int
	// memoryAt are the stored transactions at which bytes per transaction are read.
	memoryAt []int
	// out is the markdown file whose generated section is rewritten; "" writes none.
	out string
	// budget bounds the whole run.
	budget time.Duration
	// serverEnv are extra settings of the server (-server-env), for before/after comparisons.
	serverEnv []string
	// mongo runs the MongoDB phase (-mongo); mongoRaw is how long each raw driver baseline
	// runs, mongoBound bounds the whole phase (both set by mongoOptions).
	mongo bool
	// onlyMongo runs baseline (b) and the MongoDB phase alone (-only-mongo): see runOnlyMongo.
	onlyMongo bool
	// onlyGet runs the step-ups of baseline (a) and GET /transaction/{id} alone (-only-get).
	onlyGet bool
	// onlyFlood runs the lookups during creations alone (-only-flood): see runOnlyFlood.
	onlyFlood bool
	// floodRate is -flood-post-rate and floodRounds -flood-rounds, of -only-flood.
	floodRate            float64
	floodRounds          int
	mongoRaw, mongoBound time.Duration
	// pause is the rest between two steps of a step-up; 0: pauseAfterStep.
	pause time.Duration
}

func parseOptions(args []string, stderr io.Writer) (options, error) {
	fs := flag.NewFlagSet("load", flag.ContinueOnError)
	fs.SetOutput(stderr)
	short := fs.Bool("short", false, "a smoke run of a few seconds (sizes too small to mean anything)")
	out := fs.String("out", "", "markdown file to update (default: <root>/docs/PERFORMANCE.md; -short: none)")
	listHTTP := fs.String("list-http", "", "stored transactions at which GET /transaction is measured over HTTP, comma separated (default 10000; 100000 adds about 3 minutes of seeding)")
	budget := fs.Duration("budget", 0, "stop the run after this long (default 10m, -short 3m)")
	onlyMongo := fs.Bool("only-mongo", false, "run baseline (b), the QR renderer alone, and the MongoDB phase only, print their figures and the POST ratio, and write no file (to study that phase; the report needs a full run)")
	onlyGet := fs.Bool("only-get", false, "run the step-ups of baseline (a), bare net/http, and GET /transaction/{id} only, print their ratio, and write no file (to study that target)")
	onlyFlood := fs.Bool("only-flood", false, "run the lookups alone and during a creation flood only (the POST step-up first, unless -flood-post-rate), with the server's own durations beside the harness's, and write no file (to study that phase)")
	floodRate := fs.Float64("flood-post-rate", 0, "with -only-flood: offer POSTs at this rate instead of 90% of the sustained rate of a step-up")
	floodRounds := fs.Int("flood-rounds", 3, "with -only-flood: how many times to measure the lookups alone and during creations")
	mongo := fs.Bool("mongo", true, "measure the MongoDB adapter against FerretDB (a child process on loopback), within 60 s (-short: a few seconds)")
	var serverEnv []string
	fs.Func("server-env", "an extra PIXGATE_*, GOGC, GOMEMLIMIT, GODEBUG or GOMAXPROCS setting of the server, KEY=VALUE (repeatable)", func(v string) error {
		k, _, ok := strings.Cut(v, "=")
		if !ok || !(strings.HasPrefix(k, "PIXGATE_") || k == "GOGC" || k == "GOMAXPROCS" || k == "GOMEMLIMIT" || k == "GODEBUG") {
			return fmt.Errorf("want PIXGATE_*=value, GOGC, GOMEMLIMIT, GODEBUG or GOMAXPROCS=value")
		}
		serverEnv = append(serverEnv, v)
		return nil
	})
	if err := fs.Parse(args); err != nil {
		return options{}, err
	}
	if fs.NArg() > 0 {
		return options{}, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	o := options{
		step: 3 * time.Second, hold: 5 * time.Second, probe: 2 * time.Second, qrFor: 5 * time.Second,
		lookups: 1000, listHTTP: []int{10_000}, listInProcess: []int{10_000, 100_000, 1_000_000},
		memoryAt: []int{100_000, 1_000_000}, budget: 10 * time.Minute,
	}
	if *short {
		o = options{short: true,
			step: 200 * time.Millisecond, hold: 300 * time.Millisecond, probe: 200 * time.Millisecond, qrFor: 300 * time.Millisecond,
			lookups: 50, listHTTP: []int{200}, listInProcess: []int{1_000, 5_000},
			memoryAt: []int{1_000, 5_000}, budget: 3 * time.Minute,
		}
	}
	if *listHTTP != "" {
		o.listHTTP = nil
		for _, f := range strings.Split(*listHTTP, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || n < 100 || n > 1_000_000 {
				return options{}, fmt.Errorf("-list-http: %q is not a count from 100 to 1000000", f)
			}
			o.listHTTP = append(o.listHTTP, n)
		}
	}
	if *budget > 0 {
		o.budget = *budget
	}
	o.out = *out
	o.serverEnv = serverEnv
	o.mongo = *mongo
	o.onlyMongo = *onlyMongo
	o.onlyGet = *onlyGet
	o.onlyFlood, o.floodRate, o.floodRounds = *onlyFlood, *floodRate, max(1, min(*floodRounds, 20))
	if o.onlyMongo && !o.mongo {
		return options{}, fmt.Errorf("-only-mongo with -mongo=false measures nothing")
	}
	return o, nil
}

func run(ctx context.Context, args []string, stdout io.Writer) error {
	o, err := parseOptions(args, os.Stderr)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, o.budget)
	defer cancel()
	started := time.Now()

	root, err := rootModuleDir()
	if err != nil {
		return err
	}
	if o.out == "" && !o.short {
		o.out = root + "/docs/PERFORMANCE.md"
	}
	machine, err := describeMachine(ctx, root)
	if err != nil {
		return err
	}
	logf := func(format string, a ...any) {
		fmt.Fprintf(stdout, "[%5.1fs] "+format+"\n", append([]any{time.Since(started).Seconds()}, a...)...)
	}
	logf("machine: %s, %d logical CPUs, load average %s; commit %s; %s", machine.CPU, machine.LogicalCPUs, machine.LoadBefore, machine.Commit, machine.GoVersion)

	r := &report{machine: machine, options: o, harnessCommand: harnessCommand(args)}
	if o.onlyMongo {
		return runOnlyMongo(ctx, o, root, r, logf)
	}
	if o.onlyFlood {
		return runOnlyFlood(ctx, o, root, logf)
	}
	if o.onlyGet {
		return measureOverHTTP(ctx, o, root, r, logf)
	}
	if err := measureOverHTTP(ctx, o, root, r, logf); err != nil {
		return err
	}
	if err := measureInProcess(ctx, o, r, logf); err != nil {
		return err
	}
	if err := measureLedgerInProcess(ctx, o, r, logf); err != nil {
		return fmt.Errorf("the in-process ledger phase: %w", err)
	}
	if err := measurePaymentPages(ctx, o, root, r, logf); err != nil {
		if o.short || ctx.Err() != nil {
			return fmt.Errorf("the payment page phase: %w", err)
		}
		logf("the payment page phase failed: %v", err)
		r.payPagesNote = fmt.Sprintf("not measured: the phase failed: %.300s", err)
	}
	if !o.mongo {
		r.mongoNote = "not measured: skipped (-mongo=false)"
	} else if err := measureMongo(ctx, o, root, r, logf); err != nil {
		// The smoke run proves the phase works; a full run keeps what the other phases
		// measured and says why this one failed.
		if o.short || ctx.Err() != nil {
			return fmt.Errorf("the MongoDB phase: %w", err)
		}
		logf("the MongoDB phase failed: %v", err)
		r.mongo, r.mongoNote = nil, fmt.Sprintf("not measured: the phase failed: %.300s", err)
	}
	if !o.mongo {
		r.ledgerMongoNote = "not measured: skipped (-mongo=false)"
	} else if err := measureLedgerMongo(ctx, o, root, r, logf); err != nil {
		// As for the MongoDB phase; what was measured before the failure stays in the report.
		if o.short || ctx.Err() != nil {
			return fmt.Errorf("the MongoDB ledger phase: %w", err)
		}
		logf("the MongoDB ledger phase failed: %v", err)
		r.ledgerMongoNote = fmt.Sprintf("the phase failed: %.300s", err)
	}
	r.took = time.Since(started)
	r.machine.LoadAfter = loadAverage()

	table := r.markdown()
	fmt.Fprintln(stdout)
	fmt.Fprint(stdout, table)
	if o.out != "" {
		if err := writeSection(o.out, table); err != nil {
			return err
		}
		logf("wrote %s", o.out)
	}
	return nil
}

func harnessCommand(args []string) string {
	cmd := "cd test && go run ./load"
	for _, a := range args {
		cmd += " " + a
	}
	return cmd
}
