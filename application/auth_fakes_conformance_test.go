package application_test

import (
	"testing"

	"github.com/pixgate/pixgate/ports"
	"github.com/pixgate/pixgate/ports/storetest"
)

// The fake repository must behave like the real adapters, or the use case tests prove nothing.
func TestAuthRepoFakeConformsToThePort(t *testing.T) {
	storetest.TestAccounts(t, func(*testing.T) ports.AccountRepository { return newFakeAccounts() })
}
