// Package testdb gives the integration suites a MongoDB-compatible database and what they
// build on it: a FerretDB v1.24.0 container (SQLite backend) built here FROM scratch, because no
// registry is reachable, or any image named by PIXGATE_TEST_MONGO_IMAGE (mongo:7 where a
// registry is reachable); FerretDB inside the test process where no Docker engine answers
// (unless PIXGATE_TEST_REQUIRE_DOCKER=1); a database of each test's own; and images of Go
// programs (FROM scratch, a static binary) for end-to-end suites.
//
// FerretDB keeps its data in SQLite files, or with PIXGATE_TEST_FERRETDB_BACKEND=postgresql in
// a PostgreSQL server the test binary starts from the machine's PostgreSQL programs (EnvBackend).
//
// The testcontainers reaper image cannot be pulled either, so TESTCONTAINERS_RYUK_DISABLED is
// set and every container is removed by the test that started it (Start, and the suites'
// testcontainers.CleanupContainer right after each start) or by Main (the shared server of a
// test binary). Every container and network carries Labels: its role, the run (`make test`'s
// leftover check finds by it what a run left behind), and the test binary (Main removes the
// binary's own shortly before its -timeout, when the tests' cleanups would never run, and when
// it is interrupted). FerretDB containers also stop by themselves after an hour, should a test
// binary killed outright leave one behind.
//
// The package is for tests only: it knows the MongoDB adapter, testcontainers and FerretDB,
// none of which may reach the product's module.
package testdb
