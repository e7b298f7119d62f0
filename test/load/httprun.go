package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"path/filepath"
	"runtime"
	"sync"
	"time"
)

// listFigure is the p99 of one page of the list at a number of stored transactions.
type listFigure struct {
	Stored int
	Method string // "HTTP" or "in process"
	P50    time.Duration
	P99    time.Duration
	Total  int // transactions the filter matched
	Rate   float64
	Runs   int
}

// measureOverHTTP runs every phase against a `pixgate serve` process: the lookups, the
// creations, lookups during creations and the list at the sizes of o.listHTTP, with the two
// baselines measured between them.
func measureOverHTTP(ctx context.Context, o options, root string, r *report, logf func(string, ...any)) error {
	tmp, bin, remove, err := buildPixgate(ctx, root, "pixgate-load-")
	if err != nil {
		return err
	}
	defer remove()
	bareBin, err := build(ctx, filepath.Join(root, "test"), "./load/bare", tmp, "bare")
	if err != nil {
		return err
	}
	r.buildCommand = "go build -o <tmp>/pixgate ../cmd/pixgate"
	logf("built %s and %s", bin, bareBin)
	loadAccount, listAccount := newAccount("load"), newAccount("list")
	srv, err := startServer(ctx, bin, tmp, o.serverEnv, loadAccount, listAccount)
	if err != nil {
		return err
	}
	defer srv.stop()
	r.serverEnv = srv.env
	logf("pixgate serving on %s", srv.base)
	loadToken, err := srv.token(ctx, loadAccount)
	if err != nil {
		return err
	}
	listToken, err := srv.token(ctx, listAccount)
	if err != nil {
		return err
	}
	client := newLoadClient()

	body := loadBody("maria@example.com")
	ids, one, err := createLookups(ctx, srv, loadToken, body, o.lookups, r, logf)
	if err != nil {
		return err
	}
	getTargets := staticTargets(srv.process, http.MethodGet, lookupURLs(srv.base, ids), nil, bearer(loadToken))
	if err := measureGetAgainstBare(ctx, o, client, bareBin, tmp, one, ids, loadToken, getTargets, r, logf); err != nil {
		return err
	}
	if o.onlyGet {
		logf("GET /transaction/{id} %.0f/s against (a) %.0f/s: %.2f (goal %.2f); from CPU time %.2f", r.get.Sustained.Throughput,
			r.bare.Sustained.Throughput, r.get.Sustained.Throughput/r.bare.Sustained.Throughput, goalGetShare, cpuRatio(r.bare.Sustained, r.get.Sustained))
		return srv.stop()
	}
	time.Sleep(pauseAfterStep)
	r.getAtHalf = attack(ctx, client, getTargets, math.Round(r.get.Sustained.Throughput/2), o.hold, 0)
	logf("GET /transaction/{id} at half the sustained throughput: %s", r.getAtHalf)
	if err := srv.alive(); err != nil {
		return err
	}

	// Baseline (b), the QR renderer alone, then POST /transaction.
	if err := measureQRAlone(ctx, o, r, logf); err != nil {
		return err
	}
	postTargets := staticTargets(srv.process, http.MethodPost, []string{srv.base + "/transaction"}, body,
		bearer(loadToken, "Content-Type", "application/json"))
	if r.post, err = findSustained(ctx, "POST /transaction", client, postTargets, o, logf); err != nil {
		return err
	}
	measureGetDuringPosts(ctx, o, client, getTargets, postTargets, r, logf)
	if err := srv.alive(); err != nil {
		return err
	}

	if err := measureListOverHTTP(ctx, o, client, srv, listToken, r, logf); err != nil {
		return err
	}
	if err := srv.alive(); err != nil {
		return err
	}
	return srv.stop()
}

// createLookups creates n transactions of body, the ones GET /transaction/{id} cycles through,
// and reads one back: its JSON, whose size the report gives, is what baseline (a) answers.
func createLookups(ctx context.Context, srv *server, token string, body []byte, n int, r *report, logf func(string, ...any)) (ids []string, one []byte, err error) {
	ids, err = srv.createMany(ctx, token, n, 2*runtime.NumCPU(), func(int) []byte { return body })
	if err != nil {
		return nil, nil, err
	}
	res, one, err := srv.do(ctx, http.MethodGet, "/transaction/"+ids[0], token, nil)
	if err != nil || res.StatusCode != http.StatusOK {
		return nil, nil, fmt.Errorf("GET /transaction/{id}: %v %.300s", err, one)
	}
	r.txJSONBytes = len(one)
	logf("created %d transactions to look up; one is %d bytes of JSON", len(ids), len(one))
	return ids, one, nil
}

// measureGetAgainstBare measures baseline (a), a bare net/http server (bareBin) answering one
// with the bytes, then GET /transaction/{id} (getTargets), one after the other so that
// whatever else shares the machine weighs on both alike; twice over, alternated, and each
// judged on its better step-up: a single step-up's sustained rate swings by a fifth from run
// to run with one step that happened to meet a hiccup (a collection, another process), and
// taking the better of two for both sides cancels most of that without favouring either.
func measureGetAgainstBare(ctx context.Context, o options, client *http.Client, bareBin, tmp string, one []byte, ids []string, token string,
	getTargets target, r *report, logf func(string, ...any)) error {
	bare, err := startBare(ctx, bareBin, tmp, one)
	if err != nil {
		return err
	}
	// (a) gets the very requests GET /transaction/{id} gets (the same paths, the same bearer
	// token, both ignored), so that the load generator, which shares the cores, does the same
	// work for both and only the servers differ.
	bareTargets := staticTargets(bare, http.MethodGet, lookupURLs(bare.base, ids), nil, bearer(token))
	for round := range stepUpRounds {
		var b, g stepUp
		if b, err = findSustained(ctx, fmt.Sprintf("(a) bare net/http, step-up %d", round+1), client, bareTargets, o, logf); err != nil {
			break
		}
		if g, err = findSustained(ctx, fmt.Sprintf("GET /transaction/{id}, step-up %d", round+1), client, getTargets, o, logf); err != nil {
			break
		}
		r.bareRuns, r.getRuns = append(r.bareRuns, b.Sustained.Throughput), append(r.getRuns, g.Sustained.Throughput)
		if b.Sustained.Throughput >= r.bare.Sustained.Throughput {
			r.bare = b
		}
		if g.Sustained.Throughput >= r.get.Sustained.Throughput {
			r.get = g
		}
	}
	// Connections dialled but never used would hold the bare server's graceful shutdown 5 s.
	client.CloseIdleConnections()
	if stopErr := bare.stop(); err == nil && stopErr != nil {
		err = fmt.Errorf("the bare server: %w", stopErr)
	}
	return err
}

// measureQRAlone measures baseline (b): the QR renderer alone, drawing the BR Codes of
// transactions like the load's.
func measureQRAlone(ctx context.Context, o options, r *report, logf func(string, ...any)) error {
	payloads, err := transactionPayloads(ctx, 256)
	if err != nil {
		return err
	}
	r.payloadChars = len(payloads[0])
	if r.qrPerSecond, r.qrCPU, r.qrPNGBytes, err = qrCeiling(ctx, payloads, o.qrFor); err != nil {
		return err
	}
	logf("(b) QR renderer alone: %.0f images/s on %d goroutines (%s of CPU each), %d-byte PNGs of %d-character BR Codes",
		r.qrPerSecond, runtime.GOMAXPROCS(0), r.qrCPU.Round(time.Microsecond), r.qrPNGBytes, r.payloadChars)
	return nil
}

// measureGetDuringPosts measures lookups alone, then the same lookups while creations
// saturate the CPU: POSTs offered at 90% of their sustained rate, which keeps the cores busy
// without queueing the creations without end (at 100%, the lookups on top would overload the
// server, and the lookups' latency would measure that queue). The report shows how busy the
// cores were.
func measureGetDuringPosts(ctx context.Context, o options, client *http.Client, getTargets, postTargets target, r *report, logf func(string, ...any)) {
	postRate := math.Round(busyPostShare * r.post.Sustained.Offered)
	if postRate == 0 {
		postRate = r.post.Steps[len(r.post.Steps)-1].Offered
	}
	r.postRate = postRate
	r.lookupRate = math.Round(math.Max(10, math.Min(100, r.get.Sustained.Throughput/20)))
	time.Sleep(pauseAfterStep)
	// Twice a step's length: at 100 lookups a second, a p99 of 1,000 answers, not 500.
	floodFor := 2 * o.hold
	r.idleGet = attack(ctx, client, getTargets, r.lookupRate, floodFor, 0)
	logf("GET alone at %.0f/s: %s", r.lookupRate, r.idleGet)
	time.Sleep(pauseAfterStep)
	r.busyGet, r.busyPost = duringFlood(ctx, client, getTargets, postTargets, r.lookupRate, postRate, floodFor)
	r.busyCPU = float64(r.busyPost.ServerCPU+r.busyPost.HarnessCPU) / float64(floodFor) / float64(runtime.NumCPU())
	logf("GET at %.0f/s during POST at %.0f/s (cores %.0f%% busy with the server and the harness): %s", r.lookupRate, postRate, 100*r.busyCPU, r.busyGet)
	logf("  the POSTs meanwhile: %s", r.busyPost)
}

// measureListOverHTTP measures GET /transaction with a filter matching 1%, as the list account
// grows to each size of o.listHTTP by POSTing.
func measureListOverHTTP(ctx context.Context, o options, client *http.Client, srv *server, token string, r *report, logf func(string, ...any)) error {
	query := "/transaction?" + url.Values{"customerEmail": {listEmail}, "perPage": {"20"}}.Encode()
	listTargets := staticTargets(srv.process, http.MethodGet, []string{srv.base + query}, nil, bearer(token))
	seeded := 0
	for _, n := range o.listHTTP {
		from := seeded
		start := time.Now()
		if _, err := srv.createMany(ctx, token, n-from, 2*runtime.NumCPU(), func(i int) []byte { return loadBody(listSeedEmail(from + i)) }); err != nil {
			return err
		}
		seeded = n
		logf("seeded the list account to %d transactions by POSTing (%d in %s)", n, n-from, time.Since(start).Round(time.Millisecond))
		total, err := listTotal(ctx, srv, query, token)
		if err != nil {
			return err
		}
		time.Sleep(pauseAfterStep)
		m := attack(ctx, client, listTargets, listRate, o.hold, 0)
		if m.Success < 1 {
			return fmt.Errorf("GET %s: %v %.300q", query, m.Codes, m.Errors)
		}
		r.listHTTP = append(r.listHTTP, listFigure{Stored: n, Method: "HTTP", P50: m.P50, P99: m.P99, Total: total, Rate: listRate, Runs: int(m.Requests)})
		logf("GET %s with %d stored (%d match) at %.0f/s: %s", query, n, total, listRate, m)
	}
	return nil
}

// stepUpRounds is how many step-ups of baseline (a) and of GET /transaction/{id} a full run
// makes, alternated; each is judged on its best.
const stepUpRounds = 2

// busyPostShare is the share of the sustained POST rate offered while lookups are measured
// under load.
const busyPostShare = 0.9

// listRate is the rate of the list runs: a light load, so that the p99 is the list's own cost.
const listRate = 20.0

// listTotal checks the list answers a full page and returns how many transactions match.
func listTotal(ctx context.Context, srv *server, query, token string) (int, error) {
	res, raw, err := srv.do(ctx, http.MethodGet, query, token, nil)
	if err != nil {
		return 0, err
	}
	var page struct {
		Total int               `json:"total"`
		Data  []json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(raw, &page); err != nil || res.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("GET %s: status %d %.300s", query, res.StatusCode, raw)
	}
	if want := min(20, page.Total); len(page.Data) != want {
		return 0, fmt.Errorf("GET %s: %d items, want %d", query, len(page.Data), want)
	}
	return page.Total, nil
}

// cpuRatio is the ratio of (a)'s CPU per request, server's and harness's, to m's: what the
// throughput ratio tends to when the cores are the only limit.
func cpuRatio(a, m measurement) float64 {
	as, ah := a.cpuPerRequest()
	ms, mh := m.cpuPerRequest()
	return ratio(as+ah, ms+mh)
}

// lookupURLs are the addresses of GET /transaction/{id} on base for ids.
func lookupURLs(base string, ids []string) []string {
	urls := make([]string, len(ids))
	for i, id := range ids {
		urls[i] = base + "/transaction/" + id
	}
	return urls
}

// duringFlood sends lookups at lookupRate while creations come at postRate, both for d, and
// answers both measurements.
func duringFlood(ctx context.Context, client *http.Client, get, post target, lookupRate, postRate float64, d time.Duration) (lookups, creations measurement) {
	var wg sync.WaitGroup
	wg.Go(func() { creations = attack(ctx, client, post, postRate, d, 0) })
	wg.Go(func() { lookups = attack(ctx, client, get, lookupRate, d, 0) })
	wg.Wait()
	return lookups, creations
}
