package memory_test

import (
	"testing"

	"github.com/pixgate/pixgate/adapters/memory"
	"github.com/pixgate/pixgate/ports/storetest"
)

func newStores(*testing.T) storetest.Stores {
	s := memory.NewStore()
	return storetest.Stores{Transactions: s.Transactions(), Withdrawals: s.Withdrawals(), Outbox: s.Outbox()}
}

func TestTransactions(t *testing.T) { storetest.TestTransactions(t, newStores) }
