// Command pixgate is the PIX payment gateway: `pixgate serve` (also what it does with no
// sub-command) runs the HTTP API; `pixgate clients create|list|disable` manages client accounts
// in the configured store; `pixgate ledger verify` audits its ledger. Configuration comes from PIXGATE_* variables (config.go).
//
// This is the only package that knows every adapter: it reads the configuration once, builds
// each dependency in order and hands it to its user.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"strconv"
	"syscall"

	"github.com/pixgate/pixgate/adapters/qr"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Environ(), os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "pixgate:", err)
		os.Exit(1)
	}
}

// run is the whole program, with its surroundings passed in so that tests can run it. environ
// is the process environment as os.Environ returns it ("NAME=value" entries).
func run(ctx context.Context, args []string, environ []string, stdout, stderr io.Writer) error {
	cmd := "serve"
	if len(args) > 0 {
		cmd, args = args[0], args[1:]
	}
	// The drawing process reads no configuration: the serving process hands it what it needs.
	if cmd == "qr-worker" {
		return qrWorker(args)
	}
	// Asking for help needs no configuration: it answers before anything is read.
	if text, ok, err := help(cmd, args); ok {
		if err != nil {
			return err
		}
		fmt.Fprint(stdout, text)
		return nil
	}
	getenv := lookupEnv(environ)
	cfg, err := loadConfig(getenv)
	if err != nil {
		return err
	}
	for _, w := range unknownSettings(environ) {
		newLogger(cfg, stderr).Warn(w)
	}
	switch cmd {
	case "serve":
		if len(args) > 0 {
			return fmt.Errorf("serve takes no arguments (configuration comes from PIXGATE_* variables: pixgate help settings)")
		}
		// Drawn in this process (PIXGATE_QR_PROCESS=false), the QR drawings run on threads of
		// their own at the lowest priority (app.go): for requests to find a processor of the Go
		// scheduler while every drawing is under way, there must be one per drawing on top of
		// those the cores justify. The cores still go to requests first: the kernel runs a
		// drawing when nothing else wants the CPU. Here, once per process, rather than in serve,
		// which tests run many times in one process. (Setting it stops the runtime from
		// following later changes of a container's CPU limit: a restart picks them up.)
		if !cfg.QR.Process {
			runtime.GOMAXPROCS(runtime.GOMAXPROCS(0) + cfg.QR.Concurrency)
		}
		return serve(ctx, cfg, stdout, stderr, nil)
	case "clients":
		return clients(ctx, cfg, args, stdout, stderr)
	case "ledger":
		return ledgerCmd(ctx, cfg, args, stdout, stderr)
	}
	return fmt.Errorf("unknown command %q\n%s", cmd, usage)
}

// qrWorker is pixgate qr-worker IN_FLIGHT: the QR drawing process that serve starts
// (PIXGATE_QR_PROCESS), reading BR Codes on its standard input and writing PNG images on its
// standard output until its input ends. Every thread of it runs at the lowest priority.
func qrWorker(args []string) error {
	if len(args) != 1 {
		return fmt.Errorf("usage: pixgate qr-worker IN_FLIGHT (serve starts it by itself)")
	}
	inFlight, err := strconv.Atoi(args[0])
	if err != nil || inFlight < 1 || inFlight > 1_000_000 {
		return fmt.Errorf("qr-worker: IN_FLIGHT must be a count from 1 to 1000000, not %q", args[0])
	}
	if err := qr.LowerProcessPriority(); err != nil {
		return fmt.Errorf("qr-worker: lowering its priority: %w", err)
	}
	// Its live heap is a megabyte or so and each drawing leaves about 400 KB of garbage: at
	// the default GOGC it would collect every few drawings. A heap of a few MiB more is cheap.
	debug.SetGCPercent(400)
	return qr.ServeWorker(os.Stdin, os.Stdout, qr.New(qr.WorkerOptions(inFlight)))
}
