package storage_test

import (
	"testing"

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
