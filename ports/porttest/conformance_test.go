package porttest_test

import (
	"testing"

	"github.com/pixgate/pixgate/adapters/memory"
	"github.com/pixgate/pixgate/ports"
	"github.com/pixgate/pixgate/ports/porttest"
	"github.com/pixgate/pixgate/ports/storetest"
)

// A wrapper without rules is the port it wraps: it passes the conformance suite.
func TestAccountsWrapperConformsToThePort(t *testing.T) {
	storetest.TestAccounts(t, func(*testing.T) ports.AccountRepository { return porttest.NewAccounts(memory.NewAccounts()) })
}

func TestStoreWrappersConformToThePorts(t *testing.T) {
	storetest.TestTransactions(t, func(*testing.T) storetest.Stores {
		s := memory.NewStore()
		return storetest.Stores{Transactions: porttest.NewTransactions(s.Transactions()),
			Withdrawals: porttest.NewWithdrawals(s.Withdrawals()), Outbox: s.Outbox(), Ledger: s.Ledger()}
	})
	storetest.TestWithdrawals(t, func(*testing.T) storetest.Stores {
		s := memory.NewStore()
		return storetest.Stores{Transactions: porttest.NewTransactions(s.Transactions()),
			Withdrawals: porttest.NewWithdrawals(s.Withdrawals()), Outbox: s.Outbox(), Ledger: s.Ledger()}
	})
}
