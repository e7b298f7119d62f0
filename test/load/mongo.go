package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	mdb "go.mongodb.org/mongo-driver/v2/mongo"
	mopts "go.mongodb.org/mongo-driver/v2/mongo/options"
)

// The MongoDB phase: `pixgate serve` with PIXGATE_STORE=mongo against FerretDB (v1, SQLite
// backend: test/internal/ferretmain, run as a child process on loopback with its files in a
// temporary directory), the same step-ups as the memory runs but shorter, and beside them the
// raw driver baseline: copies of a stored transaction document inserted and found by _id with
// go.mongodb.org/mongo-driver/v2 directly, into a collection with the same indexes.

// mongoRun is what the MongoDB phase measured.
type mongoRun struct {
	Server   string // what served the MongoDB protocol
	Database string
	Lookups  int // transactions GET /transaction/{id} cycles through
	DocBytes int // the BSON size of one stored transaction document
	// DocOutbox is the length of its outbox array (-1: no outbox field).
	DocOutbox int
	DocPNG    int // bytes of its QR image field
	Indexes   int // secondary indexes of the transactions collection, copied to the raw one
	Workers   int // the raw baseline's concurrency: the step-up probe's workers
	Raw       time.Duration
	Insert    rawFigure
	Find      rawFigure
	Get, Post stepUp
	// Cut says what the phase's time bound left unmeasured; "" when nothing.
	Cut string
}

// rawFigure is one raw driver baseline: workers calling the driver in a loop.
type rawFigure struct {
	Ops        int
	PerSecond  float64
	P50, P99   time.Duration
	FerretCPU  time.Duration // FerretDB's CPU per operation
	HarnessCPU time.Duration // the harness's (the driver's) CPU per operation
}

// mongoOptions are the sizes of the phase, kept inside its bound (60 s in all at most).
func mongoOptions(o options) options {
	m := o
	if o.short {
		m.probe, m.step, m.pause, m.mongoRaw, m.lookups = 150*time.Millisecond, 100*time.Millisecond, 50*time.Millisecond, 200*time.Millisecond, 20
		m.mongoBound = 20 * time.Second
		return m
	}
	m.probe, m.step, m.pause, m.mongoRaw, m.lookups = time.Second, 1500*time.Millisecond, 200*time.Millisecond, 2500*time.Millisecond, 200
	m.mongoBound = 60 * time.Second
	return m
}

// measureMongo runs the phase within its bound. A step-up the bound cuts short keeps the steps
// it made, and the report says what was cut.
func measureMongo(parent context.Context, o options, root string, r *report, logf func(string, ...any)) error {
	o = mongoOptions(o)
	cut := func(err error, what string) error {
		if errors.Is(err, context.DeadlineExceeded) && parent.Err() == nil {
			r.mongo.Cut = what + " and what follows: the phase's bound of " + o.mongoBound.String() + " ran out"
			logf("MongoDB phase: %s", r.mongo.Cut)
			return nil
		}
		return err
	}
	ph, err := startFerretPhase(parent, root, "pixgate-load-mongo-", o.mongoBound)
	if err != nil {
		return err
	}
	defer ph.close()
	ctx, ferret, uri := ph.ctx, ph.ferret, ph.uri
	r.mongo = &mongoRun{
		Server:   "FerretDB v1.24 on SQLite (test/internal/ferretmain, a child process on loopback, its files in a temporary directory)",
		Database: "load_" + hex.EncodeToString(ph.suffix), Lookups: o.lookups, Workers: probeWorkers, Raw: o.mongoRaw, DocOutbox: -1,
	}
	logf("MongoDB phase: %s listening at %s; database %s", "FerretDB", uri, r.mongo.Database)

	acct := newAccount("mongo")
	srv, err := ph.startPixgate(o, r.mongo.Database, acct)
	if err != nil {
		return err
	}
	defer srv.stop()
	r.mongoServerEnv = srv.env
	token, err := srv.token(ctx, acct)
	if err != nil {
		return err
	}
	body := loadBody("maria@example.com")
	ids, err := srv.createMany(ctx, token, o.lookups, 2*runtime.NumCPU(), func(int) []byte { return body })
	if err != nil {
		return cut(err, "the seeding")
	}
	logf("MongoDB phase: created %d transactions through pixgate to look up", len(ids))

	client, err := mdb.Connect(mopts.Client().ApplyURI(uri).SetTimeout(10 * time.Second))
	if err != nil {
		return err
	}
	defer client.Disconnect(context.Background())
	db := client.Database(r.mongo.Database)
	template, err := readStoredTransaction(ctx, db.Collection("transactions"), ids[0], r.mongo)
	if err != nil {
		return err
	}
	// The raw baseline, then pixgate's GET and POST, one after the other.
	if step, err := measureRawDriver(ctx, o, ferret, db, template, r.mongo, logf); err != nil {
		return cut(err, step)
	}
	if step, err := measurePixgateOnMongo(ctx, o, srv, ferret, db.Collection("transactions"), token, body, ids, r.mongo, logf); err != nil {
		return cut(err, step)
	}
	if err := srv.alive(); err != nil {
		return err
	}
	if err := ferret.alive(); err != nil {
		return err
	}
	return srv.stop()
}

// readStoredTransaction reads the transaction id back from txColl with the driver, records in
// m its size, its outbox's length and its QR image's, and returns it as the template of the
// raw baseline's documents.
func readStoredTransaction(ctx context.Context, txColl *mdb.Collection, id string, m *mongoRun) (bson.D, error) {
	raw, err := txColl.FindOne(ctx, bson.D{{Key: "_id", Value: id}}).Raw()
	if err != nil {
		return nil, fmt.Errorf("reading transaction %s back with the driver: %w", id, err)
	}
	m.DocBytes = len(raw)
	if v, err := raw.LookupErr("outbox"); err == nil {
		if a, ok := v.ArrayOK(); ok {
			vals, _ := a.Values()
			m.DocOutbox = len(vals)
		}
	}
	if v, err := raw.LookupErr("pix", "qrCodePng"); err == nil {
		if _, b, ok := v.BinaryOK(); ok {
			m.DocPNG = len(b)
		}
	}
	var template bson.D
	if err := bson.Unmarshal(raw, &template); err != nil {
		return nil, err
	}
	return template, nil
}

// measureRawDriver measures the raw driver baseline: a collection of db with the indexes of
// the transactions', copies of template inserted into it, then found by _id. On an error it
// also names the step the error cut short.
func measureRawDriver(ctx context.Context, o options, ferret *process, db *mdb.Database, template bson.D, m *mongoRun, logf func(string, ...any)) (step string, err error) {
	rawColl := db.Collection("raw_transactions")
	if m.Indexes, err = copyIndexes(ctx, db.Collection("transactions"), rawColl); err != nil {
		return "the raw baseline", err
	}
	logf("MongoDB phase: one stored transaction is %d bytes of BSON (outbox of %d, %d-byte PNG); %d indexes copied to the raw collection",
		m.DocBytes, m.DocOutbox, m.DocPNG, m.Indexes)
	if m.Insert, err = rawInserts(ctx, ferret, o, rawColl, template); err != nil {
		return "the raw baseline", err
	}
	logf("MongoDB phase: raw InsertOne, %d workers: %s", probeWorkers, m.Insert)
	if m.Find, err = rawFinds(ctx, ferret, o, rawColl, m.Insert.Ops); err != nil {
		return "the raw finds", err
	}
	logf("MongoDB phase: raw FindOne by _id, %d workers: %s", probeWorkers, m.Find)
	return "", nil
}

// rawInserts is the raw baseline's InsertOne: copies of template, each with its own _id and
// unique keys, inserted into rawColl by probeWorkers workers for o.mongoRaw.
func rawInserts(ctx context.Context, ferret *process, o options, rawColl *mdb.Collection, template bson.D) (rawFigure, error) {
	var inserted atomic.Int64
	return rawLoop(ctx, ferret, o.mongoRaw, probeWorkers, func(ctx context.Context) error {
		n := inserted.Add(1) - 1
		id := fmt.Sprintf("raw-%09d", n)
		doc := slices.Clone(template)
		for i := range doc {
			switch doc[i].Key {
			case "_id":
				doc[i].Value = id
			case "idem":
				doc[i].Value = "id:" + id
			case "payKey": // the payment page token's hash: unique, as the idempotency slot is
				doc[i].Value = "raw:" + id
			}
		}
		_, err := rawColl.InsertOne(ctx, doc)
		return err
	})
}

// rawFinds is the raw baseline's FindOne by _id, cycling through the stored documents
// rawInserts inserted, by probeWorkers workers for o.mongoRaw.
func rawFinds(ctx context.Context, ferret *process, o options, rawColl *mdb.Collection, stored int) (rawFigure, error) {
	var next atomic.Int64
	return rawLoop(ctx, ferret, o.mongoRaw, probeWorkers, func(ctx context.Context) error {
		id := fmt.Sprintf("raw-%09d", (next.Add(1)-1)%int64(stored))
		var got bson.Raw
		return rawColl.FindOne(ctx, bson.D{{Key: "_id", Value: id}}).Decode(&got)
	})
}

// measurePixgateOnMongo finds the sustained rates of GET /transaction/{id} on ids and of POST
// /transaction (body) on the mongo store, then what FerretDB does idle. On an error it also
// names the step the error cut short.
func measurePixgateOnMongo(ctx context.Context, o options, srv *server, ferret *process, txColl *mdb.Collection, token string, body []byte, ids []string,
	m *mongoRun, logf func(string, ...any)) (step string, err error) {
	load := newLoadClient()
	getTargets := staticTargets(srv.process, http.MethodGet, lookupURLs(srv.base, ids), nil, bearer(token))
	if m.Get, err = findSustained(ctx, "mongo GET /transaction/{id}", load, getTargets, o, logf); err != nil {
		return "the GET step-up", err
	}
	postTargets := staticTargets(srv.process, http.MethodPost, []string{srv.base + "/transaction"}, body,
		bearer(token, "Content-Type", "application/json"))
	if m.Post, err = postStepUpOnMongo(ctx, o, load, postTargets, srv, ferret, txColl, logf); err != nil {
		return "the POST step-up", err
	}
	if err := idleFerretCPU(ctx, o, ferret, logf); err != nil {
		return "the idle measure", err
	}
	load.CloseIdleConnections()
	return "", nil
}

// postStepUpOnMongo finds POST /transaction's sustained rate on the mongo store, and logs the
// transactions it stored and the CPU each took, FerretDB's and pixgate's.
func postStepUpOnMongo(ctx context.Context, o options, load *http.Client, postTargets target, srv *server, ferret *process, txColl *mdb.Collection,
	logf func(string, ...any)) (stepUp, error) {
	countBefore, _ := txColl.EstimatedDocumentCount(ctx)
	ferretBefore, serverBefore := ferret.cpu(), srv.process.cpu()
	post, err := findSustained(ctx, "mongo POST /transaction", load, postTargets, o, logf)
	if err != nil {
		return post, err
	}
	if countAfter, err := txColl.EstimatedDocumentCount(ctx); err == nil && countAfter > countBefore {
		n := time.Duration(countAfter - countBefore)
		logf("MongoDB phase: the POST step-up stored %d transactions (%d in the collection at the end); per creation, cpu ferretdb %s pixgate %s",
			countAfter-countBefore, countAfter, ((ferret.cpu() - ferretBefore) / n).Round(time.Microsecond), ((srv.process.cpu() - serverBefore) / n).Round(time.Microsecond))
	}
	return post, nil
}

// idleFerretCPU logs what the server's background work costs FerretDB with no request at all:
// a few seconds idle at the collection's final size.
func idleFerretCPU(ctx context.Context, o options, ferret *process, logf func(string, ...any)) error {
	idleFrom, idleFor := ferret.cpu(), 3*time.Second
	if o.short {
		idleFor = 300 * time.Millisecond
	}
	select {
	case <-time.After(idleFor):
	case <-ctx.Done():
		return ctx.Err()
	}
	logf("MongoDB phase: idle for %s afterwards, FerretDB used %.1f%% of a core", idleFor, 100*float64(ferret.cpu()-idleFrom)/float64(idleFor))
	return nil
}

// ferretPhase is what a MongoDB phase starts from: pixgate and FerretDB built into tmp,
// FerretDB running at uri, a fresh credential key and database suffix, and ctx bounding the
// phase. close stops FerretDB, ends ctx and removes tmp.
type ferretPhase struct {
	ctx      context.Context
	bin, tmp string
	ferret   *process
	uri      string
	key      []byte
	suffix   []byte
	close    func()
}

func startFerretPhase(parent context.Context, root, tmpPrefix string, bound time.Duration) (*ferretPhase, error) {
	tmp, err := os.MkdirTemp("", tmpPrefix)
	if err != nil {
		return nil, err
	}
	bin, ferretBin, err := buildMongoPhase(parent, root, tmp)
	if err != nil {
		os.RemoveAll(tmp)
		return nil, err
	}
	ctx, cancel := context.WithTimeout(parent, bound)
	ferret, uri, err := startFerret(ctx, ferretBin, tmp)
	if err != nil {
		cancel()
		os.RemoveAll(tmp)
		return nil, err
	}
	ph := &ferretPhase{ctx: ctx, bin: bin, tmp: tmp, ferret: ferret, uri: uri, key: make([]byte, 32), suffix: make([]byte, 4)}
	rand.Read(ph.key)
	rand.Read(ph.suffix)
	ph.close = func() {
		ferret.stop()
		cancel()
		os.RemoveAll(tmp)
	}
	return ph, nil
}

// startPixgate starts `pixgate serve` on the phase's FerretDB, storing in database, with the
// accounts given and o.serverEnv.
func (ph *ferretPhase) startPixgate(o options, database string, accounts ...account) (*server, error) {
	settings := append([]string{"PIXGATE_STORE=mongo", "PIXGATE_MONGODB_URI=" + ph.uri, "PIXGATE_MONGODB_DATABASE=" + database,
		"PIXGATE_CREDENTIAL_KEY=" + hex.EncodeToString(ph.key)}, o.serverEnv...)
	return startServer(ph.ctx, ph.bin, ph.tmp, settings, accounts...)
}

// buildMongoPhase builds the binaries of a MongoDB phase into dir: pixgate and FerretDB. It
// runs under the run's context, not the phase's bound: a cold build cache (a bare CI machine)
// must not eat the time the phase measures in.
func buildMongoPhase(ctx context.Context, root, dir string) (pixgate, ferret string, err error) {
	if pixgate, err = build(ctx, root, "./cmd/pixgate", dir, "pixgate"); err != nil {
		return "", "", err
	}
	ferret, err = build(ctx, filepath.Join(root, "test"), "./internal/ferretmain", dir, "ferretmain")
	return pixgate, ferret, err
}

// startFerret runs test/internal/ferretmain on a free loopback port, its SQLite files under
// dir, and waits until it answers a ping.
func startFerret(ctx context.Context, bin, dir string) (*process, string, error) {
	addr, err := freeLoopbackAddr()
	if err != nil {
		return nil, "", err
	}
	p, err := spawnProcess("ferretdb", bin, []string{"-listen", addr, "-dir", filepath.Join(dir, "ferretdb"), "-lifetime", "15m"},
		[]string{fmt.Sprintf("GOMAXPROCS=%d", runtime.NumCPU())}, dir)
	if err != nil {
		return nil, "", err
	}
	uri := "mongodb://" + addr + "/"
	client, err := mdb.Connect(mopts.Client().ApplyURI(uri).SetServerSelectionTimeout(time.Second))
	if err != nil {
		p.stop()
		return nil, "", err
	}
	defer client.Disconnect(context.Background())
	deadline := time.Now().Add(30 * time.Second)
	for {
		pctx, cancel := context.WithTimeout(ctx, time.Second)
		err := client.Ping(pctx, nil)
		cancel()
		if err == nil {
			return p, uri, nil
		}
		select {
		case <-p.exited:
			return nil, "", fmt.Errorf("ferretdb exited at start (%v); its log: %s", p.waitErr, p.tail())
		case <-ctx.Done():
			p.stop()
			return nil, "", ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			p.stop()
			return nil, "", fmt.Errorf("ferretdb did not answer a ping within 30 s (%v); its log: %s", err, p.tail())
		}
	}
}

// copyIndexes creates on dst every index src has but _id's, one command each (FerretDB v1
// mishandles several at once; see adapters/mongo/indexes.go).
func copyIndexes(ctx context.Context, src, dst *mdb.Collection) (int, error) {
	cur, err := src.Indexes().List(ctx)
	if err != nil {
		return 0, err
	}
	var specs []struct {
		Name   string `bson:"name"`
		Key    bson.D `bson:"key"`
		Unique bool   `bson:"unique"`
	}
	if err := cur.All(ctx, &specs); err != nil {
		return 0, err
	}
	n := 0
	for _, s := range specs {
		if s.Name == "_id_" {
			continue
		}
		if _, err := dst.Indexes().CreateOne(ctx, mdb.IndexModel{Keys: s.Key, Options: mopts.Index().SetName(s.Name).SetUnique(s.Unique)}); err != nil {
			return n, fmt.Errorf("index %s: %w", s.Name, err)
		}
		n++
	}
	return n, nil
}

// rawLoop runs op on workers goroutines in a loop for d (the closed model of the probes) and
// times every call. The first error stops it.
func rawLoop(ctx context.Context, server *process, d time.Duration, workers int, op func(context.Context) error) (rawFigure, error) {
	runCtx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	lat := make([][]time.Duration, workers)
	var failed atomic.Value
	var wg sync.WaitGroup
	start, serverBefore, harnessBefore := time.Now(), server.cpu(), selfCPU()
	for w := range workers {
		wg.Go(func() {
			for runCtx.Err() == nil {
				t := time.Now()
				// The call itself gets the whole context: one cut by the end of the run
				// would count as an error.
				if err := op(ctx); err != nil {
					failed.CompareAndSwap(nil, err)
					cancel()
					return
				}
				lat[w] = append(lat[w], time.Since(t))
			}
		})
	}
	wg.Wait()
	took, serverCPU, harnessCPU := time.Since(start), server.cpu()-serverBefore, selfCPU()-harnessBefore
	if err, _ := failed.Load().(error); err != nil {
		return rawFigure{}, err
	}
	if err := ctx.Err(); err != nil {
		return rawFigure{}, err
	}
	all := slices.Concat(lat...)
	if len(all) == 0 {
		return rawFigure{}, fmt.Errorf("no operation ended in %s", d)
	}
	slices.Sort(all)
	at := func(q float64) time.Duration { return all[min(len(all)-1, int(q*float64(len(all))))] }
	n := time.Duration(len(all))
	return rawFigure{Ops: len(all), PerSecond: float64(len(all)) / took.Seconds(), P50: at(0.5), P99: at(0.99),
		FerretCPU: serverCPU / n, HarnessCPU: harnessCPU / n}, nil
}

func (f rawFigure) String() string {
	return fmt.Sprintf("%d ops, %.0f/s, p50 %s p99 %s, cpu/op ferretdb %s harness %s", f.Ops, f.PerSecond, round(f.P50), round(f.P99),
		f.FerretCPU.Round(time.Microsecond), f.HarnessCPU.Round(time.Microsecond))
}
