package storage_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	mdb "go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	pixmongo "github.com/pixgate/pixgate/adapters/mongo"
	"github.com/pixgate/pixgate/domain"
	"github.com/pixgate/pixgate/ports"
	"github.com/pixgate/pixgate/test/testdb"
)

// TestListQueriesUseIndexes reads the plan MongoDB chooses for the list query (the default
// order and each indexed filter) and for the balance aggregation: each must scan an index of
// the account, never the collection. A server without a query planner to explain (FerretDB)
// skips it, saying so.
func TestListQueriesUseIndexes(t *testing.T) {
	t.Parallel()
	srv := testdb.Shared(t)
	cfg := srv.Config(t)
	store := testdb.OpenStore(t, srv, cfg)
	ctx := ctxTimeout(t, 2*time.Minute)
	account := newID()
	for i := range 40 {
		acc := account
		if i%2 == 1 {
			acc = newID()
		}
		if err := store.Transactions().Create(ctx, paidTransaction(t, acc, domain.Cents(100+i), base.Add(time.Duration(i)*time.Minute))); err != nil {
			t.Fatal(err)
		}
	}
	db := testdb.Client(t, srv).Database(cfg.Database)

	// The server must be able to explain at all; FerretDB answers with its SQL plan instead.
	if _, ok := winningPlan(t, db, "find", bson.D{{Key: "accountId", Value: account}}, listOrder); !ok {
		t.Skipf("the server (%s) gives no queryPlanner.winningPlan to check; "+
			"run with %s=mongo:7 where a registry is reachable", serverName(srv), testdb.EnvMongoImage)
	}
	// The profiler keeps the commands the store sends, so that the plan explained is the one of
	// the list query the adapter really builds.
	if err := db.RunCommand(ctx, bson.D{{Key: "profile", Value: 2}}).Err(); err != nil {
		t.Fatalf("turning the profiler on: %v", err)
	}

	at := base.Add(10 * time.Minute)
	amount := domain.Cents(110)
	for _, c := range []struct {
		name string
		f    ports.TransactionFilter
	}{
		{"the default order", ports.TransactionFilter{}},
		{"a date range", ports.TransactionFilter{StartDate: &at, EndDate: &at}},
		{"statuses", ports.TransactionFilter{Statuses: []domain.TransactionStatus{domain.TxPaid, domain.TxRefunded}}},
		{"payment methods", ports.TransactionFilter{PaymentMethods: []domain.PaymentMethod{domain.PaymentPIX}}},
		{"customer e-mail", ports.TransactionFilter{CustomerEmail: "Maria@Example.com"}},
		{"customer name", ports.TransactionFilter{CustomerName: "silva"}},
		{"customer document", ports.TransactionFilter{CustomerDocument: "12345678909"}},
		{"customer phone", ports.TransactionFilter{CustomerPhone: "11987654321"}},
		{"id", ports.TransactionFilter{ID: newID()}},
		{"endToEnd", ports.TransactionFilter{EndToEnd: "E0001"}},
		{"endToEndRefund", ports.TransactionFilter{EndToEndRefund: "D0001"}},
		{"externalCode", ports.TransactionFilter{ExternalCode: "ORD-1"}},
		{"an amount range", ports.TransactionFilter{MinAmount: &amount, MaxAmount: &amount}},
	} {
		t.Run("the list by "+c.name+" scans an index", func(t *testing.T) {
			c.f.AccountID = account
			filter, sort := listCommand(t, db, store, c.f)
			plan, _ := winningPlan(t, db, "find", filter, sort)
			assertIndexScan(t, plan)
		})
	}
	t.Run("the balance aggregation scans the (accountId, status) index", func(t *testing.T) {
		plan, _ := winningPlan(t, db, "aggregate", bson.D{{Key: "accountId", Value: account}, {Key: "status", Value: bson.D{{Key: "$in", Value: bson.A{"PAID", "BLOCKED"}}}}}, nil)
		assertIndexScan(t, plan)
		if !strings.Contains(plan.String(), pixmongo.IndexTxStatus) {
			t.Errorf("the balance aggregation does not use %s: %s", pixmongo.IndexTxStatus, plan)
		}
	})
}

func serverName(srv *testdb.Server) string {
	if srv.FerretDB() {
		return "FerretDB v1, whose explain shows the SQLite plan"
	}
	return "this server"
}

// listOrder is the order of the store's lists: newest first, ties by id.
var listOrder = bson.D{{Key: "createdAt", Value: -1}, {Key: "_id", Value: -1}}

// listCommand lists a page of transactions through the store and reads back, from the
// database's profiler, the filter and sort of the find command the store sent for it.
func listCommand(t *testing.T, db *mdb.Database, store *pixmongo.Store, f ports.TransactionFilter) (filter, sort bson.Raw) {
	t.Helper()
	ctx := ctxTimeout(t, 30*time.Second)
	if _, err := store.Transactions().List(ctx, f, ports.Page{Number: 1, Size: 20}); err != nil {
		t.Fatalf("listing: %v", err)
	}
	var entry struct {
		Command struct {
			Filter bson.Raw `bson:"filter"`
			Sort   bson.Raw `bson:"sort"`
		} `bson:"command"`
	}
	err := db.Collection("system.profile").FindOne(ctx,
		bson.D{{Key: "ns", Value: db.Name() + ".transactions"}, {Key: "command.find", Value: "transactions"}},
		options.FindOne().SetSort(bson.D{{Key: "ts", Value: -1}})).Decode(&entry)
	if err != nil {
		t.Fatalf("reading the list's command from the profiler: %v", err)
	}
	return entry.Command.Filter, entry.Command.Sort
}

// winningPlan explains the list query (find with filter, sort and a page's limit) or a
// balance-like aggregation ($match filter, $group by status) on transactions.
func winningPlan(t *testing.T, db *mdb.Database, kind string, filter, sort any) (bson.Raw, bool) {
	t.Helper()
	var cmd bson.D
	if kind == "find" {
		cmd = bson.D{{Key: "find", Value: "transactions"}, {Key: "filter", Value: filter},
			{Key: "sort", Value: sort}, {Key: "limit", Value: 20}}
	} else {
		cmd = bson.D{{Key: "aggregate", Value: "transactions"}, {Key: "pipeline", Value: bson.A{
			bson.D{{Key: "$match", Value: filter}},
			bson.D{{Key: "$group", Value: bson.D{{Key: "_id", Value: "$status"}, {Key: "sum", Value: bson.D{{Key: "$sum", Value: "$amount"}}}}}},
		}}, {Key: "cursor", Value: bson.D{}}}
	}
	var res bson.Raw
	err := db.RunCommand(ctxTimeout(t, 30*time.Second), bson.D{{Key: "explain", Value: cmd}, {Key: "verbosity", Value: "queryPlanner"}}).Decode(&res)
	if err != nil {
		t.Fatalf("explain: %v", err)
	}
	// find puts the planner at the top; aggregate inside its first stage ($cursor), or at the
	// top when the whole pipeline runs in the query engine.
	for _, path := range [][]string{{"queryPlanner", "winningPlan"}, {"stages", "0", "$cursor", "queryPlanner", "winningPlan"}} {
		if v, err := res.LookupErr(path...); err == nil {
			if doc, ok := v.DocumentOK(); ok {
				return doc, true
			}
		}
	}
	return nil, false
}

// assertIndexScan checks that the plan scans an index whose keys start with accountId and
// nowhere scans the whole collection.
func assertIndexScan(t *testing.T, plan bson.Raw) {
	t.Helper()
	stages := planStages(plan)
	if strings.Contains(strings.Join(stages, " "), "COLLSCAN") {
		t.Errorf("the plan scans the collection: %v\n%s", stages, plan)
	}
	found := false
	for _, s := range stages {
		if strings.HasPrefix(s, "IXSCAN ") && strings.Contains(s, "accountId") {
			found = true
		}
	}
	if !found {
		t.Errorf("the plan scans no index of the account: %v\n%s", stages, plan)
	}
	t.Logf("plan: %v", stages)
}

// planStages lists the stages of a plan tree, an IXSCAN with its index name and keys.
func planStages(plan bson.Raw) []string {
	var out []string
	var walk func(doc bson.Raw)
	walk = func(doc bson.Raw) {
		elems, err := doc.Elements()
		if err != nil {
			return
		}
		stage := ""
		for _, e := range elems {
			if e.Key() == "stage" {
				stage = e.Value().StringValue()
			}
		}
		if stage == "IXSCAN" {
			stage = fmt.Sprintf("IXSCAN %s %s", doc.Lookup("indexName"), doc.Lookup("keyPattern"))
		}
		if stage != "" {
			out = append(out, stage)
		}
		for _, e := range elems {
			switch v := e.Value(); v.Type {
			case bson.TypeEmbeddedDocument:
				walk(v.Document())
			case bson.TypeArray:
				vals, _ := v.Array().Values()
				for _, av := range vals {
					if d, ok := av.DocumentOK(); ok {
						walk(d)
					}
				}
			}
		}
	}
	walk(plan)
	return out
}

// TestLedgerQueriesUseIndexes reads the plans MongoDB chooses for the ledger's reads that must
// cost the same however long a ledger is: the head (the balance, and every post), a statement
// page with its filters, and the open entries Recover looks at. A server without a query
// planner to explain (FerretDB) skips it, saying so.
func TestLedgerQueriesUseIndexes(t *testing.T) {
	t.Parallel()
	srv := testdb.Shared(t)
	cfg := srv.Config(t)
	store := testdb.OpenStore(t, srv, cfg)
	ctx := ctxTimeout(t, 2*time.Minute)
	account := newID()
	for i := range 20 {
		if err := store.Transactions().Create(ctx, paidTransaction(t, account, domain.Cents(100+i), base.Add(time.Duration(i)*time.Minute))); err != nil {
			t.Fatal(err)
		}
	}
	db := testdb.Client(t, srv).Database(cfg.Database)
	explain := func(filter, sort bson.D) (bson.Raw, bool) {
		cmd := bson.D{{Key: "find", Value: "ledger"}, {Key: "filter", Value: filter}, {Key: "sort", Value: sort}, {Key: "limit", Value: 20}}
		var res bson.Raw
		if err := db.RunCommand(ctx, bson.D{{Key: "explain", Value: cmd}, {Key: "verbosity", Value: "queryPlanner"}}).Decode(&res); err != nil {
			t.Fatalf("explain: %v", err)
		}
		v, err := res.LookupErr("queryPlanner", "winningPlan")
		if err != nil {
			return nil, false
		}
		doc, ok := v.DocumentOK()
		return doc, ok
	}
	if _, ok := explain(bson.D{{Key: "accountId", Value: account}}, bson.D{{Key: "seq", Value: -1}}); !ok {
		t.Skipf("the server (%s) gives no queryPlanner.winningPlan to check; "+
			"run with %s=mongo:7 where a registry is reachable", serverName(srv), testdb.EnvMongoImage)
	}
	// The profiler keeps the commands the store sends, so that the plan explained is the one of
	// the list query the adapter really builds.
	if err := db.RunCommand(ctx, bson.D{{Key: "profile", Value: 2}}).Err(); err != nil {
		t.Fatalf("turning the profiler on: %v", err)
	}
	from, to := base.Add(5*time.Minute), base.Add(10*time.Minute)
	for _, c := range []struct {
		name   string
		filter bson.D
		sort   bson.D
		index  string
	}{
		{"the head", bson.D{{Key: "accountId", Value: account}}, bson.D{{Key: "seq", Value: -1}}, pixmongo.IndexLedgerSeq},
		{"a statement page", pixmongo.EntryFilter(ports.EntryFilter{AccountID: account}), pixmongo.EntryOrder(), pixmongo.IndexLedgerCreated},
		{"a statement page by dates and types", pixmongo.EntryFilter(ports.EntryFilter{AccountID: account, StartDate: &from, EndDate: &to,
			Types: []domain.MovementType{domain.MoveFee}}), pixmongo.EntryOrder(), pixmongo.IndexLedgerCreated},
	} {
		t.Run(c.name+" scans "+c.index, func(t *testing.T) {
			plan, _ := explain(c.filter, c.sort)
			assertIndexScan(t, plan)
			stages := planStages(plan)
			if slices.Contains(stages, "SORT") || !strings.Contains(strings.Join(stages, " "), c.index) {
				t.Errorf("the plan does not walk %s in order: %v", c.index, stages)
			}
		})
	}
}
