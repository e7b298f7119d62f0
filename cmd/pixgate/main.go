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
	"syscall"
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
	// Asking for help needs no configuration: it answers before anything is read.
	if text, ok := help(cmd, args); ok {
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
		// The QR drawings run on threads of their own at the lowest priority (app.go): for
		// requests to find a processor of the Go scheduler while every drawing is under way,
		// there must be one per drawing on top of those the cores justify. The cores still go
		// to requests first: the kernel runs a drawing when nothing else wants the CPU. Here,
		// once per process, rather than in serve, which tests run many times in one process.
		// (Setting it stops the runtime from following later changes of a container's CPU
		// limit: a restart picks them up.)
		runtime.GOMAXPROCS(runtime.GOMAXPROCS(0) + cfg.QRConcurrency)
		return serve(ctx, cfg, stdout, stderr, nil)
	case "clients":
		return clients(ctx, cfg, args, stdout, stderr)
	case "ledger":
		return ledgerCmd(ctx, cfg, args, stdout, stderr)
	}
	return fmt.Errorf("unknown command %q\n%s", cmd, usage)
}
