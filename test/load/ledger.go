package main

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"runtime"
	"slices"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	mdb "go.mongodb.org/mongo-driver/v2/mongo"
	mopts "go.mongodb.org/mongo-driver/v2/mongo/options"

	pixmongo "github.com/pixgate/pixgate/adapters/mongo"
	"github.com/pixgate/pixgate/domain"
	"github.com/pixgate/pixgate/ports"
)

// The ledger phases. The balance is the account's latest entry's, and a withdrawal's check
// needs nothing else, so GET /balance and POST /withdrawal must cost the same on an account
// with a thousand entries as on one with a million; the statement's first page must stay fast
// on the long one. Two accounts are seeded, a short ledger and a long one, through the store's
// own posting path (Ledger().Post, which numbers, dates and applies each posting as a status
// change's are), and the routes are then timed on both in alternating rounds of the same run,
// so that whatever else the machine does weighs on both alike:
//
//   - in process, through the whole handler wired as `pixgate serve` wires it (inProcessAPI)
//     over the memory store: 1,000 and 1,000,000 entries;
//   - over HTTP against `pixgate serve` with PIXGATE_STORE=mongo on FerretDB (a server and a
//     database of the phase's own, as in mongo.go): 1,000 and 100,000 entries, the long one
//     seeded against the same database from this process with the mongo adapter, within a
//     bound of time: FerretDB on SQLite may not get there, and the report then says how far it
//     got.

// mongoSeedBatch is how many postings one Ledger().Post call of the MongoDB seeding carries:
// few enough that a batch ends well within the adapter's operation timeout on a slow server,
// and that the seeding's time bound is checked often.
const mongoSeedBatch = 50

// ledgerWithdrawalFee is the fee of the in-process withdrawals (the suites' figure).
const ledgerWithdrawalFee = domain.Cents(150)

// The routes of the ledger phases, as the report names them.
const (
	routeBalance    = "GET /balance"
	routeWithdrawal = "POST /withdrawal"
	routeStatement  = "GET /balance/entries (first page)"
)

// ledgerFigure is the latency of one route on an account with Entries entries.
type ledgerFigure struct {
	Route    string
	Entries  int // the account's entries when the route's timing began
	P50, P99 time.Duration
	Runs     int
	Failed   int // answers other than the route's success (timed all the same)
}

// ledgerRun is what one ledger phase measured.
type ledgerRun struct {
	Where        string // how the routes were served
	Small, Large int    // entries seeded on the short and the long account
	Want         int    // entries the long account was meant to get
	Seed         time.Duration
	Figures      []ledgerFigure
	// Alone are the short account's figures taken before the long one was seeded (MongoDB
	// only: one collection holds every account's entries).
	Alone []ledgerFigure
	Note  string
}

// figure returns the figure of route at entries, if measured.
func figureOf(figs []ledgerFigure, route string, entries int) (ledgerFigure, bool) {
	for _, f := range figs {
		if f.Route == route && f.Entries == entries {
			return f, true
		}
	}
	return ledgerFigure{}, false
}

// ledgerSizes are the sizes of the ledger phases.
type ledgerSizes struct {
	small, large int           // entries of the two accounts
	runs         int           // timings per route and account (at most)
	minRuns      int           // timings per route and account (at least, time permitting)
	within       time.Duration // how long one route's timings may take, both accounts together
	seedFor      time.Duration // MongoDB: how long seeding the long account may take
	bound        time.Duration // MongoDB: the whole phase
}

func ledgerInProcessSizes(o options) ledgerSizes {
	if o.short {
		return ledgerSizes{small: 100, large: 2_000, runs: 200, minRuns: 50, within: 300 * time.Millisecond}
	}
	return ledgerSizes{small: 1_000, large: 1_000_000, runs: 5_000, minRuns: 1_000, within: 6 * time.Second}
}

func ledgerMongoSizes(o options) ledgerSizes {
	if o.short {
		return ledgerSizes{small: 20, large: 200, runs: 20, minRuns: 10, within: 2 * time.Second, seedFor: 5 * time.Second, bound: 30 * time.Second}
	}
	return ledgerSizes{small: 1_000, large: 100_000, runs: 400, minRuns: 100, within: 20 * time.Second, seedFor: 2 * time.Minute, bound: 4 * time.Minute}
}

// seedBase dates the seeded entries, one millisecond apart, in the past: the withdrawals timed
// afterwards come after them (an entry is never dated before the one it follows).
var seedBase = time.Now().Add(-72 * time.Hour).UTC().Truncate(time.Millisecond)

// seedPostings are the postings from..to-1 of account: sandbox-like payments of 100.00 and
// every tenth a fee of 0.01, so that the balance pays for every withdrawal timed.
func seedPostings(account string, from, to int) []domain.Posting {
	out := make([]domain.Posting, 0, to-from)
	for i := from; i < to; i++ {
		p := domain.Posting{ID: fmt.Sprintf("seed/%s/%d", account, i), Type: domain.MovePayment, AccountID: account,
			Resource: domain.ResourceTransaction, ResourceID: fmt.Sprintf("seed-%s-%d", account, i/2),
			Debit: domain.LedgerClearing, Credit: domain.LedgerAvailable, Amount: 10_000,
			At: seedBase.Add(time.Duration(i) * time.Millisecond)}
		if i%10 == 9 {
			p.Type, p.Debit, p.Credit, p.Amount = domain.MoveFee, domain.LedgerAvailable, domain.LedgerFees, 1
		}
		out = append(out, p)
	}
	return out
}

// seedLedger posts entries from..to-1 of account in batches, until done or until the deadline
// (zero: none) or ctx ends, and returns how many entries the account has.
func seedLedger(ctx context.Context, l ports.Ledger, account string, from, to, batch int, deadline time.Time, progress func(n int)) (int, error) {
	for n := from; n < to; {
		if progress != nil {
			progress(n)
		}
		if !deadline.IsZero() && time.Now().After(deadline) {
			return n, nil
		}
		end := min(n+batch, to)
		if _, err := l.Post(ctx, seedPostings(account, n, end)...); err != nil {
			return n, fmt.Errorf("seeding the ledger of %s at entry %d: %w", account, n, err)
		}
		n = end
	}
	return to, nil
}

// timeAlternating times op on each account in turn, in rounds, until each has s.runs timings,
// or s.minRuns once s.within has passed, and returns the timings per account, sorted, and how
// many answered otherwise than the route's success. op answers failed for such an answer, an
// error for what ends the phase.
func timeAlternating(ctx context.Context, accounts int, s ledgerSizes, op func(ctx context.Context, account int) (failed bool, err error)) ([][]time.Duration, []int, error) {
	took := make([][]time.Duration, accounts)
	failures := make([]int, accounts)
	const perRound = 10
	start := time.Now()
	for len(took[0]) < s.runs && (len(took[0]) < s.minRuns || time.Since(start) < s.within) {
		for a := range accounts {
			for range perRound {
				if err := ctx.Err(); err != nil {
					return nil, nil, err
				}
				t0 := time.Now()
				failed, err := op(ctx, a)
				took[a] = append(took[a], time.Since(t0))
				if err != nil {
					return nil, nil, err
				}
				if failed {
					failures[a]++
				}
			}
		}
	}
	for _, t := range took {
		slices.Sort(t)
	}
	return took, failures, nil
}

func percentile(sorted []time.Duration, q float64) time.Duration {
	return sorted[min(len(sorted)-1, int(q*float64(len(sorted))))]
}

// ledgerRoute is a route timed on every account.
type ledgerRoute struct {
	name   string
	method string
	path   string
	body   []byte
	want   int
}

func ledgerRoutes() []ledgerRoute {
	return []ledgerRoute{
		{routeBalance, http.MethodGet, "/balance", nil, http.StatusOK},
		{routeStatement, http.MethodGet, "/balance/entries", nil, http.StatusOK},
		{routeWithdrawal, http.MethodPost, "/withdrawal", []byte(`{"amount":1,"pixKey":{"key":"maria@example.com","type":"EMAIL"}}`), http.StatusCreated},
	}
}

// figures turns the timings of route on accounts of sizes entries into figures.
func figures(route string, entries []int, took [][]time.Duration, failed []int) []ledgerFigure {
	out := make([]ledgerFigure, len(took))
	for i, t := range took {
		out[i] = ledgerFigure{Route: route, Entries: entries[i], P50: percentile(t, 0.5), P99: percentile(t, 0.99), Runs: len(t), Failed: failed[i]}
	}
	return out
}

// measureLedgerInProcess seeds a short and a long ledger on a memory store behind the whole
// handler and times the balance, the statement's first page and a withdrawal on both.
func measureLedgerInProcess(ctx context.Context, o options, r *report, logf func(string, ...any)) error {
	s := ledgerInProcessSizes(o)
	api, err := newInProcessAPI(&pooledImages{images: [][]byte{{0}}}) // no transaction is created
	if err != nil {
		return err
	}
	run := &ledgerRun{Where: "in process", Small: s.small, Large: s.large, Want: s.large}
	r.ledgerInProcess = run
	var tokens []string
	for i, n := range []int{s.small, s.large} {
		p, token, err := api.account(ctx, fmt.Sprintf("ledger-%d", n))
		if err != nil {
			return err
		}
		tokens = append(tokens, token)
		start := time.Now()
		if _, err := seedLedger(ctx, api.store.Ledger(), p.AccountID, 0, n, 1_000, time.Time{}, nil); err != nil {
			return err
		}
		if i == 1 {
			run.Seed = time.Since(start)
		}
		logf("ledger in process: seeded %d entries in %s", n, time.Since(start).Round(time.Millisecond))
	}
	runtime.GC() // the seeding's garbage is not the routes'
	entries := []int{s.small, s.large}
	for _, route := range ledgerRoutes() {
		took, failed, err := timeAlternating(ctx, len(tokens), s, func(_ context.Context, a int) (bool, error) {
			req := api.request(route.method, route.path, tokens[a], route.body)
			if w := api.serve(req); w.Code != route.want {
				// In process nothing may fail: the memory store has no timeouts.
				return true, fmt.Errorf("in process %s: %d, want %d: %.300s", route.name, w.Code, route.want, w.Body.String())
			}
			return false, nil
		})
		if err != nil {
			return err
		}
		figs := figures(route.name, entries, took, failed)
		run.Figures = append(run.Figures, figs...)
		logf("ledger in process: %s p99 %s at %d entries, %s at %d (%d and %d runs)", route.name,
			round(figs[0].P99), s.small, round(figs[1].P99), s.large, figs[0].Runs, figs[1].Runs)
	}
	runtime.KeepAlive(api)
	return nil
}

// measureLedgerMongo runs `pixgate serve` on FerretDB with two accounts, seeds their ledgers
// from this process with the mongo adapter against the same database, and times GET /balance
// and POST /withdrawal over HTTP on both: the short account first alone, then both in
// alternating rounds once the long one is seeded (as far as the seeding bound allowed).
func measureLedgerMongo(parent context.Context, o options, root string, r *report, logf func(string, ...any)) error {
	s := ledgerMongoSizes(o)
	ph, err := startFerretPhase(parent, root, "pixgate-load-ledger-", s.bound)
	if err != nil {
		return err
	}
	defer ph.close()
	ctx, ferret, uri := ph.ctx, ph.ferret, ph.uri
	database := "ledger_" + hex.EncodeToString(ph.suffix)
	small, large := newAccount("ledger-small"), newAccount("ledger-large")
	srv, err := ph.startPixgate(o, database, small, large)
	if err != nil {
		return err
	}
	defer srv.stop()
	run := &ledgerRun{Where: "over HTTP, FerretDB", Want: s.large}
	r.ledgerMongo = run
	r.ledgerMongoServerEnv = srv.env
	logf("ledger on MongoDB: FerretDB at %s, database %s", uri, database)

	client, err := mdb.Connect(mopts.Client().ApplyURI(uri).SetTimeout(30 * time.Second))
	if err != nil {
		return err
	}
	defer client.Disconnect(context.Background())
	tokens, ids, err := tokensAndAccountIDs(ctx, srv, client.Database(database), small, large)
	if err != nil {
		return err
	}
	store, err := pixmongo.Open(ctx, pixmongo.Config{URI: uri, Database: database, OpTimeout: time.Minute})
	if err != nil {
		return err
	}
	defer store.Close(context.Background())

	start := time.Now()
	if run.Small, err = seedLedger(ctx, store.Ledger(), ids[0], 0, s.small, mongoSeedBatch, start.Add(s.seedFor/3), seedProgress(logf)); err != nil {
		return err
	}
	logf("ledger on MongoDB: seeded %d of %d entries in %s", run.Small, s.small, time.Since(start).Round(time.Millisecond))
	routes := []ledgerRoute{ledgerRoutes()[0], ledgerRoutes()[2]} // the balance and a withdrawal
	if run.Alone, err = timeRoutesOverHTTP(ctx, s, srv, routes, tokens[:1], []int{run.Small}); err != nil {
		return err
	}
	for _, f := range run.Alone {
		logf("ledger on MongoDB: %s p99 %s at %d entries, the only ledger in the collection", f.Route, round(f.P99), f.Entries)
	}

	start = time.Now()
	run.Large, err = seedLedger(ctx, store.Ledger(), ids[1], 0, s.large, mongoSeedBatch, start.Add(s.seedFor), seedProgress(logf))
	run.Seed = time.Since(start)
	if err != nil {
		return err
	}
	logf("ledger on MongoDB: seeded %d of %d entries in %s", run.Large, s.large, run.Seed.Round(time.Millisecond))
	noteShortSeeding(run, s, logf)
	// The withdrawals timed alone added entries to the short ledger.
	small0 := run.Small
	if f, ok := figureOf(run.Alone, routeWithdrawal, run.Small); ok {
		small0 += f.Runs
	}
	if run.Figures, err = timeRoutesOverHTTP(ctx, s, srv, routes, tokens, []int{small0, run.Large}); err != nil {
		return err
	}
	for _, f := range run.Figures {
		logf("ledger on MongoDB: %s p99 %s at %d entries (%d runs)", f.Route, round(f.P99), f.Entries, f.Runs)
	}
	if err := srv.alive(); err != nil {
		return err
	}
	return errors.Join(ferret.alive(), srv.stop())
}

// tokensAndAccountIDs gets a token for each of accounts from srv, and reads from db the id of
// the merchant account its client belongs to.
func tokensAndAccountIDs(ctx context.Context, srv *server, db *mdb.Database, accounts ...account) (tokens, ids []string, err error) {
	for _, a := range accounts {
		token, err := srv.token(ctx, a)
		if err != nil {
			return nil, nil, err
		}
		var cred struct {
			AccountID string `bson:"accountId"`
		}
		if err := db.Collection("credentials").FindOne(ctx, bson.D{{Key: "_id", Value: a.clientID}}).Decode(&cred); err != nil {
			return nil, nil, fmt.Errorf("the account of client %s: %w", a.clientID, err)
		}
		tokens, ids = append(tokens, token), append(ids, cred.AccountID)
	}
	return tokens, ids, nil
}

// seedProgress is the progress of one seeding: every 15 s, how many entries it seeded so far
// (FerretDB may take long).
func seedProgress(logf func(string, ...any)) func(n int) {
	var said time.Time
	return func(n int) {
		if time.Since(said) > 15*time.Second {
			if !said.IsZero() {
				logf("ledger on MongoDB: %d entries seeded so far", n)
			}
			said = time.Now()
		}
	}
}

// timeRoutesOverHTTP times each of routes through srv on the accounts of tokens, in
// alternating rounds, their ledgers at the sizes entries. A 503 or the client's own timeout is
// the store's answer at that size, timed and counted; any other answer than the route's is a
// fault of the run.
func timeRoutesOverHTTP(ctx context.Context, s ledgerSizes, srv *server, routes []ledgerRoute, tokens []string, entries []int) ([]ledgerFigure, error) {
	var out []ledgerFigure
	for _, route := range routes {
		took, failed, err := timeAlternating(ctx, len(tokens), s, func(ctx context.Context, a int) (bool, error) {
			res, raw, err := srv.do(ctx, route.method, route.path, tokens[a], route.body)
			if err != nil && ctx.Err() == nil {
				// The client's own timeout (30 s): the store at that size, timed and
				// counted like a 503.
				return true, nil
			}
			if err != nil {
				return true, err
			}
			// A 503 (the store's timeout) is an answer of the store at that size: it is
			// timed and counted. Anything else is a fault of the run.
			if res.StatusCode == http.StatusServiceUnavailable {
				return true, nil
			}
			if res.StatusCode != route.want {
				return true, fmt.Errorf("%s: %d, want %d: %.300s", route.name, res.StatusCode, route.want, raw)
			}
			return false, nil
		})
		if err != nil {
			return out, err
		}
		out = append(out, figures(route.name, entries, took, failed)...)
	}
	return out, nil
}

// noteShortSeeding says in run's note which ledger the seeding bound left short of its size,
// and logs it when the long one is.
func noteShortSeeding(run *ledgerRun, s ledgerSizes, logf func(string, ...any)) {
	if run.Small < s.small {
		run.Note = fmt.Sprintf("the short ledger reached %s entries of the %s meant, in its seeding bound of %s; ",
			thousands(float64(run.Small)), thousands(float64(s.small)), s.seedFor/3)
	}
	if run.Large < s.large {
		run.Note += fmt.Sprintf("the long ledger reached %s entries of the %s meant, in the seeding bound of %s (%.0f entries a second through Ledger().Post on FerretDB)",
			thousands(float64(run.Large)), thousands(float64(s.large)), s.seedFor, float64(run.Large)/run.Seed.Seconds())
		logf("ledger on MongoDB: %s", run.Note)
	}
}

// ledgerMarkdown writes the section of the ledger phases.
func (r *report) ledgerMarkdown(p func(string, ...any)) {
	p("### The ledger\n\n")
	p("The balance is the account's latest entry's and a withdrawal's check needs nothing else, so GET /balance and POST /withdrawal must cost the same on a short ledger as on a long one. ")
	p("Two accounts are seeded through the store's own posting path (`Ledger().Post`: payments of 100.00, every tenth entry a fee of 0.01, one millisecond apart, in batches), then each route is timed on both accounts in alternating rounds of ten requests, one at a time, in the same run. ")
	p("The withdrawals timed (1 cent each, paid out by the sandbox at once) add their own entries as they go.\n\n")
	if l := r.ledgerInProcess; l != nil {
		p("**In process**: the whole handler (access log, metrics, authentication, routing, use case, memory store, JSON) wired as `pixgate serve` wires it (test/load/api.go), requests served with httptest, no network. Seeding the long ledger took %s.\n\n", l.Seed.Round(time.Millisecond))
		ledgerTable(p, l.Figures)
	} else {
		p("**In process**: %s.\n\n", r.ledgerInProcessNote)
	}
	l := r.ledgerMongo
	if l == nil {
		p("**MongoDB**: %s.\n\n", r.ledgerMongoNote)
		return
	}
	p("**MongoDB**: `%s <tmp>/pixgate serve` on FerretDB v1.24 on SQLite (a server, a FerretDB and a database of the phase's own), over HTTP on loopback; the ledgers seeded from the harness's process with the mongo adapter against the same database. ", joinEnv(r.ledgerMongoServerEnv))
	p("The short account is timed first while its entries are the only ones in the ledger collection, then again beside the long one. Seeding the long ledger: %s entries in %s.", thousands(float64(l.Large)), l.Seed.Round(time.Millisecond))
	if l.Note != "" {
		p(" **Short of the goal**: %s.", l.Note)
	}
	p("\n\n")
	ledgerTable(p, append(append([]ledgerFigure{}, l.Alone...), l.Figures...))
	if r.ledgerMongoNote != "" {
		p("%s.\n\n", r.ledgerMongoNote)
	}
}

func joinEnv(env []string) string {
	var b bytes.Buffer
	for i, kv := range env {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(kv)
	}
	return b.String()
}

func ledgerTable(p func(string, ...any), figs []ledgerFigure) {
	p("| route | entries on the account | p50 | p99 | runs | failed (503, timeout) |\n|---|---|---|---|---|---|\n")
	for _, f := range figs {
		p("| %s | %s | %s | %s | %d | %d |\n", f.Route, thousands(float64(f.Entries)), ms(f.P50), ms(f.P99), f.Runs, f.Failed)
	}
	p("\n")
}

// The ledger's goals.
const (
	goalLedgerRatio        = 2.0 // p99 on the long ledger / p99 on the short one
	goalStatementFirstPage = 20 * time.Millisecond
)

// ledgerTargets writes the ledger's rows of the targets table.
func (r *report) ledgerTargets(p func(string, ...any)) {
	if l := r.ledgerInProcess; l != nil {
		for _, route := range []string{routeBalance, routeWithdrawal} {
			ratioRow(p, route+" p99, in process (memory store, whole handler)", l, route, l.Small, l.Large, "", "")
		}
		if f, ok := figureOf(l.Figures, routeStatement, l.Large); ok {
			p("| %s p99 at %s entries, in process | < 20 ms | %s | | %.2f of the goal | %s |\n", routeStatement, thousands(float64(l.Large)),
				ms(f.P99), float64(f.P99)/float64(goalStatementFirstPage), verdict(f.P99 < goalStatementFirstPage))
		}
	} else {
		p("| GET /balance, POST /withdrawal and the statement on a long ledger, in process | | %s | | | |\n", r.ledgerInProcessNote)
	}
	l := r.ledgerMongo
	if l == nil || len(l.Figures) == 0 {
		note := r.ledgerMongoNote
		if l != nil && note == "" {
			note = "not measured: the phase ended before"
		}
		p("| GET /balance and POST /withdrawal on a long ledger, MongoDB adapter (FerretDB) | | %s | | | |\n", note)
		return
	}
	short := ""
	if l.Large < l.Want {
		short = fmt.Sprintf(" (only %s of the %s entries meant: seeding ran out of time)", thousands(float64(l.Large)), thousands(float64(l.Want)))
	}
	small := l.Figures[0].Entries
	for _, route := range []string{routeBalance, routeWithdrawal} {
		alone := ""
		if f, ok := figureOf(l.Alone, route, l.Small); ok {
			alone = fmt.Sprintf("; %s when its entries were the only ones in the collection", ms(f.P99))
		}
		ratioRow(p, route+" p99, MongoDB adapter on FerretDB, over HTTP", l, route, small, l.Large, short, alone)
	}
}

// ratioRow writes the row comparing route's p99 on the long ledger with the short one's.
func ratioRow(p func(string, ...any), what string, l *ledgerRun, route string, small, large int, note, against string) {
	s, okS := figureOf(l.Figures, route, small)
	g, okG := figureOf(l.Figures, route, large)
	if !okS || !okG {
		p("| %s, %s vs %s entries | ≤ 2 x | not measured | | | |\n", what, thousands(float64(large)), thousands(float64(small)))
		return
	}
	x := float64(g.P99) / float64(max(1, s.P99))
	// A long ledger that never grew to its size (note says so) proves nothing about the size:
	// the goal is missed whatever the ratio of two short ledgers.
	p("| %s, %s vs %s entries | ≤ 2 x | %s at %s%s | %s at %s%s | %.2f x | %s |\n", what, thousands(float64(large)), thousands(float64(small)),
		ms(g.P99), thousands(float64(large)), note, ms(s.P99), thousands(float64(small)), against, x, verdict(note == "" && x <= goalLedgerRatio))
}
