package storage_test

import (
	"testing"

	pixmongo "github.com/pixgate/pixgate/adapters/mongo"
	"github.com/pixgate/pixgate/ports"
	"github.com/pixgate/pixgate/ports/storetest"
	"github.com/pixgate/pixgate/test/testdb"
)

// newStores opens the adapter on a database of the subtest's own, on the binary's shared
// server.
func newStores(t *testing.T) storetest.Stores {
	srv := testdb.Shared(t)
	s := testdb.OpenStore(t, srv, srv.Config(t))
	return storetest.Stores{Transactions: s.Transactions(), Withdrawals: s.Withdrawals(), Outbox: s.Outbox(), Ledger: s.Ledger()}
}

func TestTransactions(t *testing.T) { storetest.TestTransactions(t, newStores) }
func TestWithdrawals(t *testing.T)  { storetest.TestWithdrawals(t, newStores) }
func TestOutbox(t *testing.T)       { storetest.TestOutbox(t, newStores) }
func TestLedger(t *testing.T)       { storetest.TestLedger(t, newStores) }
func TestPixLocations(t *testing.T) { storetest.TestPixLocations(t, newStores) }

func TestAccounts(t *testing.T) {
	storetest.TestAccounts(t, func(t *testing.T) ports.AccountRepository {
		srv := testdb.Shared(t)
		return testdb.OpenStore(t, srv, srv.Config(t)).Accounts()
	})
}

// TestInstances races two instances of the adapter on one database: two clients, two sets of
// in-process locks, nothing shared but the server. On FerretDB, whose conditional updates are
// not atomic between clients, it holds through the write claims (adapters/mongo/claims.go).
func TestInstances(t *testing.T) {
	storetest.TestInstances(t, func(t *testing.T) (a, b storetest.Instance) {
		s1, s2 := twoInstances(t, nil)
		return instance(s1), instance(s2)
	})
}

func instance(s *pixmongo.Store) storetest.Instance {
	return storetest.Instance{
		Stores:   storetest.Stores{Transactions: s.Transactions(), Withdrawals: s.Withdrawals(), Outbox: s.Outbox(), Ledger: s.Ledger()},
		Accounts: s.Accounts(),
	}
}

// TestReconciliations races two instances of the adapter on one database for the
// reconciliation: on FerretDB one holds it at a time through the write claims.
func TestReconciliations(t *testing.T) {
	storetest.TestReconciliations(t, func(t *testing.T) (a, b ports.Reconciliations) {
		s1, s2 := twoInstances(t, nil)
		return s1.Reconciliations(), s2.Reconciliations()
	})
}
