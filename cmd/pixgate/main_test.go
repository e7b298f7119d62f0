package main

import (
	"fmt"
	"os"
	"testing"
)

// TestMain lets this test binary serve as the QR drawing process: serve starts the running
// program as "qr-worker", which is this binary under test, as it is pixgate in production.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == "qr-worker" {
		if err := qrWorker(os.Args[2:]); err != nil {
			fmt.Fprintln(os.Stderr, "pixgate:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}
