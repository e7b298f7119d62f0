package main

import (
	"testing"

	"github.com/pixgate/pixgate/adapters/httpapi/apitest"
)

// The HTTP behaviour of the transaction routes is tested in adapters/httpapi
// (transactions_http_test.go); problemOf stays for the tests here that still need serve's wiring.

// problemOf checks that r is a problem+json answer with status and code, as apitest.Problem,
// and returns its field errors as "field code" strings.
func problemOf(t *testing.T, r response, status int, code string) []string {
	t.Helper()
	return apitest.Problem(t, r.api(), status, code)
}
