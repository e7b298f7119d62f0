package memory_test

import (
	"testing"

	"github.com/pixgate/pixgate/adapters/memory"
	"github.com/pixgate/pixgate/ports"
	"github.com/pixgate/pixgate/ports/storetest"
)

func TestAccounts(t *testing.T) {
	storetest.TestAccounts(t, func(*testing.T) ports.AccountRepository { return memory.NewAccounts() })
}

func TestAccountsSharedStore(t *testing.T) {
	shared := memory.NewAccounts()
	storetest.TestAccounts(t, func(*testing.T) ports.AccountRepository { return shared })
}
