package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"time"
)

// report is everything one run measured.
type report struct {
	machine        machine
	options        options
	harnessCommand string
	buildCommand   string
	serverEnv      []string
	took           time.Duration

	txJSONBytes  int     // one GET /transaction/{id} answer
	payloadChars int     // one BR Code
	qrPerSecond  float64 // baseline (b)
	qrCPU        time.Duration
	qrPNGBytes   int
	bare         stepUp // baseline (a): the better of its step-ups
	// bareRuns and getRuns are the sustained throughputs of every step-up of (a) and of GET
	// /transaction/{id}, in order (stepUpRounds, alternated).
	bareRuns, getRuns []float64

	get       stepUp
	getAtHalf measurement
	post      stepUp

	lookupRate       float64
	postRate         float64 // POSTs offered during the busy lookups
	busyCPU          float64 // share of the cores the server and the harness used meanwhile
	idleGet, busyGet measurement
	busyPost         measurement
	listHTTP         []listFigure
	listInProcess    []listFigure
	memory           []memoryFigure
	// mongo is the MongoDB phase; nil when it did not run, mongoNote then says why.
	mongo          *mongoRun
	mongoNote      string
	mongoServerEnv []string
	// The ledger phases (ledger.go); nil when they did not run, the notes then say why.
	ledgerInProcess, ledgerMongo         *ledgerRun
	ledgerInProcessNote, ledgerMongoNote string
	// payPages is the payment page phase; nil when it did not run, payPagesNote then says why.
	payPages             *payPageRun
	payPagesNote         string
	ledgerMongoServerEnv []string
}

// The goals of the performance issues.
const (
	goalGetShare   = 0.7 // of baseline (a)
	goalPostShare  = 0.8 // of baseline (b)
	goalListP99    = 50 * time.Millisecond
	goalListAt     = 100_000
	goalBusyFactor = 5.0
	goalMongoShare = 0.5 // of the raw driver's figures, (c) and (d)
	goalBytesPerTx = 4096.0
)

func verdict(met bool) string {
	if met {
		return "**met**"
	}
	return "**missed**"
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond)) }

func us(d time.Duration) string { return fmt.Sprintf("%.0f µs", float64(d)/float64(time.Microsecond)) }

func perSecondList(fs []float64) string {
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = perSecond(f)
	}
	return strings.Join(out, " then ")
}

func perSecond(f float64) string { return fmt.Sprintf("%s/s", thousands(f)) }

func thousands(f float64) string {
	s := fmt.Sprintf("%.0f", f)
	var out []byte
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 && s[i-1] != '-' {
			out = append(out, ',')
		}
		out = append(out, s[i])
	}
	return string(out)
}

// listAt returns the figure measured with n stored by method, if any.
func listAt(figs []listFigure, n int) (listFigure, bool) {
	for _, f := range figs {
		if f.Stored == n {
			return f, true
		}
	}
	return listFigure{}, false
}

// listGoal is the p99 the list goal is judged on: over HTTP at 100k when measured; otherwise
// the in-process p99 at 100k plus what HTTP added at the largest size measured both ways.
func (r *report) listGoal() (p99 time.Duration, how string, ok bool) {
	if f, ok := listAt(r.listHTTP, goalListAt); ok {
		return f.P99, "over HTTP", true
	}
	in, ok := listAt(r.listInProcess, goalListAt)
	if !ok {
		return 0, "", false
	}
	for i := len(r.listHTTP) - 1; i >= 0; i-- {
		h := r.listHTTP[i]
		if p, ok := listAt(r.listInProcess, h.Stored); ok {
			extra := max(0, h.P99-p.P99)
			return in.P99 + extra, fmt.Sprintf("estimated: in process %s + the %s HTTP added at %s", ms(in.P99), ms(extra), thousands(float64(h.Stored))), true
		}
	}
	return in.P99, "in process only", true
}

// markdown is the generated section of docs/PERFORMANCE.md, also printed.
func (r *report) markdown() string {
	var b strings.Builder
	p := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	r.runMarkdown(p)
	r.targetsMarkdown(p)
	r.cpuMarkdown(p)
	r.baselinesMarkdown(p)
	r.stepUpsMarkdown(p)
	r.listMarkdown(p)
	r.mongoMarkdown(p)
	r.ledgerMarkdown(p)
	r.memoryMarkdown(p)
	return b.String()
}

// runMarkdown writes the heading of the run and how it was made: the machine, the commit, the
// command, the server, the load and the bodies.
func (r *report) runMarkdown(p func(string, ...any)) {
	m := r.machine
	mode := "full run"
	if r.options.short {
		mode = "smoke run (-short): sizes too small to mean anything"
	}
	p("## Last run (%s)\n\n", mode)
	p("- Machine: %s, %d logical CPUs (%s cores per socket, /proc/cpuinfo), %s RAM, %s; GOMAXPROCS %d for the server and the harness alike, which share the machine (pixgate serve draws its QR images in a child process, pixgate qr-worker, whose threads run at the lowest priority; the server's CPU figures include it).\n",
		m.CPU, m.LogicalCPUs, orUnknown(m.CoresPerCPU), m.MemTotal, orUnknown(m.Kernel), m.GOMAXPROCS)
	p("- Load average (1 min) at the start %s, at the end %s (the run's own load included). Anything well above 0 at the start is other work taking its share of the cores from the server and the baselines alike. Niceness of the harness and its servers: %d.\n", m.LoadBefore, m.LoadAfter, m.Nice)
	p("- Commit: `%s`. Go: `%s`.\n", m.Commit, m.GoVersion)
	run := r.harnessCommand
	if m.Nice != 0 {
		run = strings.Replace(run, "go run", fmt.Sprintf("nice -n %d go run", m.Nice), 1)
	}
	p("- Run: `%s` (from the repository root: `make load`), %s in all.\n", run, r.took.Round(time.Second))
	p("- Server: `%s`, then `%s <tmp>/pixgate serve` (memory store, sandbox emitter, authentication on: every request carries a bearer token; access log at info level to a file).\n",
		r.buildCommand, strings.Join(r.serverEnv, " "))
	p("- Load: vegeta v12 as a library, open model, keep-alive, loopback only. A step-up is a %s closed-model probe (%d workers) giving a capacity C, then %s at each of %s C until a step fails (below 0.5 C when the first fails), then two more steps bisecting between the last rate that held and the first that failed. A step fails with success < 99.9%%, successful answers below 95%% of the offered rate, or p99 above 10 times the lowest p99 of the steps that held before (20 ms at least). Sustained throughput = the highest throughput of a step that held.\n",
		r.options.probe, probeWorkers, r.options.step, fractions())
	p("- Bodies: POST sends a full creation request (customer, seller, address, two items, metadata; no webhookUrl, which would leave loopback), %d bytes; one Transaction answers %d bytes of JSON (its QR image, %d bytes of PNG, in base64).\n\n",
		len(loadBody(listSeedEmail(0))), r.txJSONBytes, r.qrPNGBytes)
}

// targetsMarkdown writes the table of the targets, each beside what it is measured against.
func (r *report) targetsMarkdown(p func(string, ...any)) {
	p("### Targets\n\n")
	p("| target | goal | measured | against | ratio | verdict |\n|---|---|---|---|---|---|\n")
	bare, get := r.bare.Sustained.Throughput, r.get.Sustained.Throughput
	p("| GET /transaction/{id}, sustained throughput | ≥ %.0f%% of (a) | %s (p99 %s at half of it, %s) | (a) bare net/http %s | %.2f | %s |\n",
		100*goalGetShare, perSecond(get), ms(r.getAtHalf.P99), perSecond(r.getAtHalf.Throughput), perSecond(bare), get/bare, verdict(get >= goalGetShare*bare))

	post := r.post.Sustained.Throughput
	p("| POST /transaction, sustained throughput | ≥ 80%% of (b) | %s (p99 %s) | (b) QR renderer alone %s | %.2f | %s |\n",
		perSecond(post), ms(r.post.Sustained.P99), perSecond(r.qrPerSecond), post/r.qrPerSecond, verdict(post >= goalPostShare*r.qrPerSecond))
	if p99, how, ok := r.listGoal(); ok {
		p("| GET /transaction, 1%% filter, perPage 20, p99 at %s stored | < 50 ms | %s (%s) | | %.2f of the goal | %s |\n",
			thousands(goalListAt), ms(p99), how, float64(p99)/float64(goalListP99), verdict(p99 < goalListP99))
	} else {
		p("| GET /transaction, 1%% filter, p99 at 100,000 stored | < 50 ms | not measured in this run | | | |\n")
	}
	busy := float64(r.busyGet.P99) / float64(max(1, r.idleGet.P99))
	p("| GET /transaction/{id} p99 while POSTs saturate the CPU | ≤ 5 x idle | %s (GET at %s during POST offered at %s, cores %.0f%% busy) | idle %s (GET alone at %s) | %.1f x | %s |\n",
		ms(r.busyGet.P99), perSecond(r.lookupRate), perSecond(r.postRate), 100*r.busyCPU, ms(r.idleGet.P99), perSecond(r.lookupRate), busy, verdict(busy <= goalBusyFactor))
	for _, f := range r.memory {
		p("| heap per stored transaction at %s (QR image included) | ≤ 4 KiB | %s bytes | | %.2f of the goal | %s |\n",
			thousands(float64(f.Stored)), thousands(f.BytesPerTx), f.BytesPerTx/goalBytesPerTx, verdict(f.BytesPerTx <= goalBytesPerTx))
	}
	r.ledgerTargets(p)
	r.payPageTarget(p)
	r.mongoTargets(p)
	if len(r.bareRuns) > 1 {
		p("GET /transaction/{id} and (a) are each the better of %d step-ups, alternated ((a), GET, (a), GET, ...): (a) %s, GET %s.\n\n",
			len(r.bareRuns), perSecondList(r.bareRuns), perSecondList(r.getRuns))
	}
}

// mongoTargets writes the targets' rows of the MongoDB adapter, or why it was not measured.
func (r *report) mongoTargets(p func(string, ...any)) {
	if mg := r.mongo; mg != nil {
		get, find := mg.Get.Sustained.Throughput, mg.Find.PerSecond
		p("| GET /transaction/{id} on the MongoDB adapter (FerretDB on SQLite), sustained | ≥ %.0f%% of (c) | %s (p99 %s) | (c) raw FindOne by _id %s | %s | %s |\n",
			100*goalMongoShare, perSecond(get), ms(mg.Get.Sustained.P99), perSecond(find), ratioOf(get, find), verdict(find > 0 && get >= goalMongoShare*find))
		// A creation is an insert and a drawing, on the same cores: their costs add up.
		post, ceiling := mg.Post.Sustained.Throughput, 0.0
		if mg.Insert.PerSecond > 0 && r.qrPerSecond > 0 {
			ceiling = 1 / (1/mg.Insert.PerSecond + 1/r.qrPerSecond)
		}
		p("| POST /transaction on the MongoDB adapter (FerretDB on SQLite), sustained | ≥ %.0f%% of (d) | %s (p99 %s) | (d) raw InsertOne %s and (b) %s together: %s | %s | %s |\n\n",
			100*goalMongoShare, perSecond(post), ms(mg.Post.Sustained.P99), perSecond(mg.Insert.PerSecond), perSecond(r.qrPerSecond), perSecond(ceiling),
			ratioOf(post, ceiling), verdict(ceiling > 0 && post >= goalMongoShare*ceiling))
	} else {
		p("| MongoDB adapter: POST and GET beside the raw driver | | %s | | | |\n\n", r.mongoNote)
	}
}

// cpuMarkdown writes the targets' ratios from the CPU time of the sustained steps.
func (r *report) cpuMarkdown(p func(string, ...any)) {
	m := r.machine
	p("### The same ratios from CPU time\n\n")
	p("Wall-clock throughput depends on whatever else the machine runs; CPU time per request does much less. ")
	p("These are the CPU times of the sustained steps (server: its process, from /proc/<pid>/stat; harness: vegeta's process, getrusage), ")
	p("and the ratio each target's ratio tends to when the %d cores are the only limit and are shared as in the run. A cross-check, not the verdict.\n\n", m.LogicalCPUs)
	p("| | server CPU/request | harness CPU/request | total | CPU-bound ratio |\n|---|---|---|---|---|\n")
	bs, bh := r.bare.Sustained.cpuPerRequest()
	gs, gh := r.get.Sustained.cpuPerRequest()
	ps, ph := r.post.Sustained.cpuPerRequest()
	p("| (a) bare net/http | %s | %s | %s | |\n", us(bs), us(bh), us(bs+bh))
	p("| GET /transaction/{id} | %s | %s | %s | %.2f of (a) |\n", us(gs), us(gh), us(gs+gh), ratio(bs+bh, gs+gh))
	p("| (b) QR renderer alone, per image | %s | | %s | |\n", us(r.qrCPU), us(r.qrCPU))
	p("| POST /transaction | %s | %s | %s | %.2f of (b) |\n\n", us(ps), us(ph), us(ps+ph), ratio(r.qrCPU, ps+ph))
}

// baselinesMarkdown writes how baselines (a) and (b) were made and what they measured.
func (r *report) baselinesMarkdown(p func(string, ...any)) {
	m := r.machine
	bare := r.bare.Sustained.Throughput
	p("### Baselines (same run)\n\n")
	p("| baseline | how | figure |\n|---|---|---|\n")
	p("| (a) bare net/http | test/load/bare, a process of its own like pixgate (GOMAXPROCS %d), on loopback: a fixed %d-byte JSON body (a real Transaction's answer), no router, no auth, no log; sent the very requests GET /transaction/{id} is sent (the same 1,000 paths and bearer token, which it ignores), so that the load generator's work is the same for both; the same step-up | %s sustained (p99 %s), probe %s |\n",
		m.GOMAXPROCS, r.txJSONBytes, perSecond(bare), ms(r.bare.Sustained.P99), perSecond(r.bare.Probe.Throughput))
	p("| (b) QR renderer alone | adapters/qr Renderer in the harness's process (idle otherwise), GOMAXPROCS goroutines, %d distinct BR Codes of %d characters (the sandbox emitter's, with pixgate's default key, name and city) for %s | %s (%s of CPU each), %d-byte PNGs |\n\n",
		256, r.payloadChars, r.options.qrFor, perSecond(r.qrPerSecond), us(r.qrCPU), r.qrPNGBytes)
}

// stepUpsMarkdown writes the steps of each step-up, then the lookups alone and during POSTs.
func (r *report) stepUpsMarkdown(p func(string, ...any)) {
	p("### Step-ups\n\n")
	for _, s := range []struct {
		name string
		up   stepUp
	}{{"(a) bare net/http", r.bare}, {"GET /transaction/{id}", r.get}, {"POST /transaction", r.post}} {
		p("**%s**: probe %s (p99 %s); stopped: %s.\n\n", s.name, perSecond(s.up.Probe.Throughput), ms(s.up.Probe.P99), s.up.Limit)
		p("| offered | sent | successful | success | p50 | p99 | server CPU/req | harness CPU/req | |\n|---|---|---|---|---|---|---|---|---|\n")
		for _, st := range s.up.Steps {
			server, harness := st.cpuPerRequest()
			p("| %s | %s | %s | %.2f%% | %s | %s | %s | %s | %s |\n", perSecond(st.Offered), perSecond(st.Sent), perSecond(st.Throughput),
				100*st.Success, ms(st.P50), ms(st.P99), us(server), us(harness), st.Verdict)
		}
		p("\n")
	}
	p("Lookups alone at %s for %s: p50 %s, p99 %s. The same during POSTs offered at %s (90%% of their sustained rate): p50 %s, p99 %s (the POSTs meanwhile: %s successful, p99 %s, success %.2f%%).\n\n",
		perSecond(r.lookupRate), 2*r.options.hold, ms(r.idleGet.P50), ms(r.idleGet.P99), perSecond(r.postRate),
		ms(r.busyGet.P50), ms(r.busyGet.P99), perSecond(r.busyPost.Throughput), ms(r.busyPost.P99), 100*r.busyPost.Success)
}

// listMarkdown writes the list's figures as the account grows, over HTTP and in process.
func (r *report) listMarkdown(p func(string, ...any)) {
	p("### GET /transaction as the account grows\n\n")
	p("`customerEmail=%s&perPage=20`: every hundredth transaction of one account belongs to that buyer, so the filter matches 1%%. ", listEmail)
	p("**HTTP** rows: the account seeded by POSTing in parallel to the running server, then the list at %.0f requests a second for %s. ", listRate, r.options.hold)
	p("**In process** rows: a memory store in the harness, grown through application.CreateTransaction (the real emitter, real QR PNGs drawn beforehand and copied per transaction, system clock and ids) and timed through application.ListTransactions: no HTTP, no JSON, no authentication.\n\n")
	p("| stored | method | matching | p50 | p99 | runs |\n|---|---|---|---|---|---|\n")
	for _, f := range append(append([]listFigure{}, r.listHTTP...), r.listInProcess...) {
		p("| %s | %s | %s | %s | %s | %d |\n", thousands(float64(f.Stored)), f.Method, thousands(float64(f.Total)), ms(f.P50), ms(f.P99), f.Runs)
	}
}

// memoryMarkdown writes the heap each stored transaction takes.
func (r *report) memoryMarkdown(p func(string, ...any)) {
	p("\n### Memory\n\n")
	p("In process, the same store as the in-process list: runtime.ReadMemStats HeapInuse after a GC, less HeapInuse before the store existed, divided by the transactions stored. Each transaction holds its own copy of a real %d-byte QR PNG; no webhook URL (a webhook adds its event and delivery to the outbox).\n\n", r.qrPNGBytesOrMemory())
	p("| stored | heap in use per transaction |\n|---|---|\n")
	for _, f := range r.memory {
		p("| %s | %s bytes |\n", thousands(float64(f.Stored)), thousands(f.BytesPerTx))
	}
	p("\n")
}

func (r *report) qrPNGBytesOrMemory() int {
	if len(r.memory) > 0 {
		return r.memory[0].PNGBytes
	}
	return r.qrPNGBytes
}

// ratioOf is num/den to two decimals, or "n/a" without a denominator.
func ratioOf(num, den float64) string {
	if den <= 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.2f", num/den)
}

// stepUpTable writes one step-up's steps.
func stepUpTable(p func(string, ...any), name string, up stepUp) {
	p("**%s**: probe %s (p99 %s); stopped: %s.\n\n", name, perSecond(up.Probe.Throughput), ms(up.Probe.P99), orUnknown(up.Limit))
	p("| offered | sent | successful | success | p50 | p99 | server CPU/req | harness CPU/req | |\n|---|---|---|---|---|---|---|---|---|\n")
	for _, st := range up.Steps {
		server, harness := st.cpuPerRequest()
		p("| %s | %s | %s | %.2f%% | %s | %s | %s | %s | %s |\n", perSecond(st.Offered), perSecond(st.Sent), perSecond(st.Throughput),
			100*st.Success, ms(st.P50), ms(st.P99), us(server), us(harness), st.Verdict)
	}
	p("\n")
}

// mongoMarkdown writes the MongoDB phase's section.
func (r *report) mongoMarkdown(p func(string, ...any)) {
	p("### MongoDB adapter\n\n")
	mg := r.mongo
	if mg == nil {
		p("%s.\n\n", r.mongoNote)
		return
	}
	p("- Database server: %s, database `%s`. **FerretDB on SQLite is much slower than MongoDB** (it translates every command to SQL over one SQLite file per database), and it shares the %d cores with pixgate, vegeta and the harness: these figures are pixgate's overhead over this server, not what pixgate does on MongoDB. The harness always starts FerretDB; it does not use a real MongoDB (the image `PIXGATE_TEST_MONGO_IMAGE` names for the test suites).\n",
		mg.Server, mg.Database, r.machine.LogicalCPUs)
	p("- pixgate: `%s <tmp>/pixgate serve`; GET cycles through %d transactions created through it beforehand.\n", strings.Join(r.mongoServerEnv, " "), mg.Lookups)
	p("- Raw driver baseline: go.mongodb.org/mongo-driver/v2 in the harness's process, %d goroutines in a closed loop (the step-up probe's concurrency) for %s each: InsertOne of copies of a transaction pixgate stored (read back with the driver: %s bytes of BSON, a %d-byte PNG, %s), a new _id and idempotency slot each, into a collection with the %d secondary indexes of pixgate's; then FindOne by _id of those documents, decoded to raw BSON.\n",
		mg.Workers, mg.Raw, thousands(float64(mg.DocBytes)), mg.DocPNG, outboxOf(mg.DocOutbox), mg.Indexes)
	p("- The raw inserts leave %s documents in the raw collection before the finds; GET looks up %d in pixgate's, which the POST step-up then grows.\n", thousands(float64(mg.Insert.Ops)), mg.Lookups)
	p("- Step-ups as above, shorter: a %s probe, then %s steps.", r.mongoProbe(), r.mongoStep())
	if mg.Cut != "" {
		p(" **Cut short**: %s.", mg.Cut)
	}
	p("\n\n")
	p("| | through pixgate (sustained) | p99 | raw driver | p99 | pixgate / raw | FerretDB CPU per raw op |\n|---|---|---|---|---|---|---|\n")
	p("| create: POST /transaction vs InsertOne | %s | %s | %s | %s | %s | %s |\n", perSecond(mg.Post.Sustained.Throughput), ms(mg.Post.Sustained.P99),
		perSecond(mg.Insert.PerSecond), ms(mg.Insert.P99), ratioOf(mg.Post.Sustained.Throughput, mg.Insert.PerSecond), us(mg.Insert.FerretCPU))
	p("| read: GET /transaction/{id} vs FindOne by _id | %s | %s | %s | %s | %s | %s |\n\n", perSecond(mg.Get.Sustained.Throughput), ms(mg.Get.Sustained.P99),
		perSecond(mg.Find.PerSecond), ms(mg.Find.P99), ratioOf(mg.Get.Sustained.Throughput, mg.Find.PerSecond), us(mg.Find.FerretCPU))
	p("The raw p99s are of a closed loop of %d (each call waits for the previous one), pixgate's of the sustained open-model step; \"server CPU/req\" below is pixgate's process only, FerretDB's is not in it.\n\n", mg.Workers)
	stepUpTable(p, "mongo GET /transaction/{id}", mg.Get)
	stepUpTable(p, "mongo POST /transaction", mg.Post)
}

func outboxOf(n int) string {
	if n < 0 {
		return "no outbox field (no webhook URL, so no delivery pending)"
	}
	return fmt.Sprintf("an outbox of %d", n)
}

func (r *report) mongoProbe() time.Duration { return mongoOptions(r.options).probe }
func (r *report) mongoStep() time.Duration  { return mongoOptions(r.options).step }

func ratio(num, den time.Duration) float64 {
	if den == 0 {
		return 0
	}
	return float64(num) / float64(den)
}

func fractions() string {
	var parts []string
	for _, f := range stepFractions {
		parts = append(parts, fmt.Sprintf("%g", f))
	}
	return strings.Join(parts, ", ")
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

// The generated section of the markdown file lies between these markers; the rest of the file
// is written by hand and kept.
const (
	beginMarker = "<!-- load:begin (written by test/load; do not edit by hand) -->"
	endMarker   = "<!-- load:end -->"
)

// writeSection replaces the generated section of path with section, creating the file (or the
// markers, at its end) when missing.
func writeSection(path, section string) error {
	old, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	doc := string(old)
	block := beginMarker + "\n" + section + endMarker
	begin, end := strings.Index(doc, beginMarker), strings.Index(doc, endMarker)
	switch {
	case begin >= 0 && end > begin:
		doc = doc[:begin] + block + doc[end+len(endMarker):]
	case doc == "":
		doc = "# Performance\n\n" + block + "\n"
	default:
		doc = strings.TrimRight(doc, "\n") + "\n\n" + block + "\n"
	}
	return os.WriteFile(path, []byte(doc), 0o644)
}
