package e2e_test

import (
	"testing"

	"github.com/pixgate/pixgate/test/testdb"
)

func TestMain(m *testing.M) { testdb.Main(m) }
