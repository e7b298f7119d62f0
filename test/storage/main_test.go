// Package storage_test runs the storage suites against the MongoDB adapter on a real server:
// the conformance suite of ports/storetest, races on the version check, the ledger between two
// instances, its recovery after a crash between a change's two writes, the migration of a
// database written before the ledger, an outage of the database, the plans of the list and
// ledger queries, and the insert benchmark.
package storage_test

import (
	"testing"

	"github.com/pixgate/pixgate/test/testdb"
)

func TestMain(m *testing.M) { testdb.Main(m) }
