package main

import (
	"fmt"
	"os"
	"testing"
)

// TestMain lets this test binary serve as the QR drawing process: serve starts the running
// program as "qr-worker", which is this binary under test, as it is pixgate in production.
// Started as "serve", it is the whole program (main): the tests that run pixgate as a process
// of its own (shutdown_test.go) start this binary so, rather than a `go build` of their own.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == "qr-worker" {
		if err := qrWorker(os.Args[2:]); err != nil {
			fmt.Fprintln(os.Stderr, "pixgate:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	if len(os.Args) > 1 && os.Args[1] == "serve" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}
