// Command bare is baseline (a) of the load harness: net/http on loopback answering every request
// with one fixed JSON body, and nothing else (no router, no authentication, no store, no log).
// The harness builds it and runs it as it runs `pixgate serve`, a process of its own with
// GOMAXPROCS as the machine, so that both share the machine with the load generator alike. Its
// server timeouts are pixgate's.
//
//	bare -addr 127.0.0.1:PORT -body FILE
package main

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "bare:", err)
		os.Exit(1)
	}
}

func run() error {
	addr := flag.String("addr", "127.0.0.1:0", "address to listen on (loopback)")
	bodyFile := flag.String("body", "", "file holding the body of every answer")
	flag.Parse()
	body, err := os.ReadFile(*bodyFile)
	if err != nil {
		return err
	}
	srv := &http.Server{
		Addr: *addr,
		Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusOK)
			_, _ = w.Write(body)
		}),
		ReadHeaderTimeout: 5 * time.Second, ReadTimeout: 30 * time.Second, WriteTimeout: 30 * time.Second,
		IdleTimeout: 120 * time.Second, MaxHeaderBytes: 64 << 10,
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	served := make(chan error, 1)
	go func() { served <- srv.ListenAndServe() }()
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return srv.Shutdown(shutdown)
}
