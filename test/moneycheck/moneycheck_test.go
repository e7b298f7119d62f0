package moneycheck_test

import (
	"context"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/pixgate/pixgate/adapters/memory"
	pixmongo "github.com/pixgate/pixgate/adapters/mongo"
	"github.com/pixgate/pixgate/test/moneycheck"
	"github.com/pixgate/pixgate/test/testdb"
)

func TestMain(m *testing.M) { testdb.Main(m) }

// Environment variables of the checker's runs.
const (
	// envSeed repeats the workload of a seed a failure named.
	envSeed = "PIXGATE_MONEYCHECK_SEED"
	// envSoak keeps each store under the checker for this long (a Go duration, "5m"), in runs
	// of the default size one after another, each on accounts of its own.
	envSoak = "PIXGATE_MONEYCHECK_SOAK"
)

// TestNoInterleavingOverdrawsOrLosesMoney runs the concurrency checker against every store:
// the memory store, and the MongoDB store (FerretDB here, unless PIXGATE_TEST_MONGO_IMAGE
// names another server) through one instance and through two instances sharing its database,
// as two pixgate processes would.
func TestNoInterleavingOverdrawsOrLosesMoney(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name      string
		instances func(t *testing.T) []moneycheck.Instance
	}{
		{"on the memory store", func(*testing.T) []moneycheck.Instance {
			s := memory.NewStore()
			return []moneycheck.Instance{{Transactions: s.Transactions(), Withdrawals: s.Withdrawals(), Ledger: s.Ledger(), Accounts: memory.NewAccounts()}}
		}},
		{"on the mongo store through one instance", func(t *testing.T) []moneycheck.Instance { return mongoInstances(t, 1) }},
		{"on the mongo store through two instances sharing its database", func(t *testing.T) []moneycheck.Instance { return mongoInstances(t, 2) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			check(t, c.instances(t))
		})
	}
}

// mongoInstances opens n stores on one database of the test's own, as n pixgate processes
// would: a client and in-process locks each, nothing shared but the server.
func mongoInstances(t *testing.T, n int) []moneycheck.Instance {
	srv := testdb.Shared(t)
	cfg := srv.Config(t)
	var out []moneycheck.Instance
	for range n {
		s := testdb.OpenStore(t, srv, cfg)
		out = append(out, mongoInstance(s))
	}
	if srv.FerretDB() {
		t.Logf("the server is FerretDB, %d instance(s) on database %s", n, cfg.Database)
	}
	return out
}

func mongoInstance(s *pixmongo.Store) moneycheck.Instance {
	return moneycheck.Instance{Transactions: s.Transactions(), Withdrawals: s.Withdrawals(), Ledger: s.Ledger(), Accounts: s.Accounts()}
}

// check runs the checker on instances, once, or for as long as envSoak says, and fails with
// the report (which names the seed and where the history lies) when a run finds money going
// wrong.
func check(t *testing.T, instances []moneycheck.Instance) {
	seed := rand.Int64()
	if v := os.Getenv(envSeed); v != "" {
		s, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			t.Fatalf("%s=%q: %v", envSeed, v, err)
		}
		seed = s
	}
	var soak time.Duration
	if v := os.Getenv(envSoak); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			t.Fatalf("%s=%q: %v", envSoak, v, err)
		}
		soak = d
	}
	end := time.Now().Add(soak)
	for round := int64(0); ; round++ {
		cfg := moneycheck.Config{Seed: seed + round}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		rep, err := moneycheck.Run(ctx, cfg, instances...)
		cancel()
		if err != nil {
			t.Fatalf("seed %d: %v", cfg.Seed, err)
		}
		t.Log(rep.Summary())
		if !rep.OK() {
			t.Fatalf("money went wrong under concurrency (%s=%d repeats the workload):\n%s", envSeed, cfg.Seed, rep)
		}
		if rep.Counts["payment applied"] == 0 || rep.Counts["withdraw applied"] == 0 {
			t.Fatalf("seed %d: the run paid %d charges and made %d withdrawals; a run that moves no money judges nothing",
				cfg.Seed, rep.Counts["payment applied"], rep.Counts["withdraw applied"])
		}
		if !time.Now().Before(end) {
			return
		}
	}
}
