package main

import (
	"flag"
	"fmt"
	"os"
	"runtime"
	"strconv"
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
	// Most parallel tests here wait rather than compute: on serve's header timeout, on a PSP's
	// token lifetime, on a transport's retry backoff. Unless the caller chose with -parallel,
	// more of them run at once than there are processors.
	flag.Parse()
	chosen := false
	flag.Visit(func(f *flag.Flag) { chosen = chosen || f.Name == "test.parallel" })
	if !chosen {
		_ = flag.Set("test.parallel", strconv.Itoa(max(4, 2*runtime.GOMAXPROCS(0))))
	}
	os.Exit(m.Run())
}
