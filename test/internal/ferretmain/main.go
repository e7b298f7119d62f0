// Command ferretmain runs FerretDB v1 with its SQLite backend (or, with -postgresql-url, its
// PostgreSQL one): the MongoDB-compatible database the integration suites use where no MongoDB
// image can be pulled. It is our own tiny main around the embeddable package
// github.com/FerretDB/FerretDB/ferretdb, because the stock cmd/ferretdb panics without the
// version file its release build generates.
//
// It is built as a static binary (CGO_ENABLED=0) and copied into an image FROM scratch, where it
// is PID 1: it therefore handles SIGTERM itself (the kernel ignores unhandled signals sent to
// PID 1) so that `docker stop` closes the SQLite files cleanly.
//
// Test suites pass -lifetime, so that a container they fail to remove (a test binary killed by
// its timeout) stops by itself instead of running on.
//
//	ferretmain -listen :27017 -dir /data -lifetime 1h
//
// `make ferretdb` runs it for people, as a MongoDB-protocol server on a machine without images:
// with -postgresql-dir it starts a PostgreSQL server of its own from the machine's programs
// (Debian's postgresql package), its cluster kept in that directory across starts, and keeps
// FerretDB's data there; with -sqlite-fallback it uses SQLite files in -dir instead when
// PostgreSQL is not installed.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/FerretDB/FerretDB/ferretdb"
)

func main() {
	listen := flag.String("listen", ":27017", "TCP address to listen on")
	dir := flag.String("dir", "/data", "directory of the SQLite databases (created when missing)")
	verbose := flag.Bool("v", false, "log at info level instead of warnings only")
	lifetime := flag.Duration("lifetime", 0, "exit after this long (0: run until stopped)")
	pgURL := flag.String("postgresql-url", "", "keep the data in this PostgreSQL database instead of SQLite files in -dir")
	pgDir := flag.String("postgresql-dir", "", "keep the data in a PostgreSQL server of our own, its cluster in this directory (made at the first start)")
	fallback := flag.Bool("sqlite-fallback", false, "with -postgresql-dir: use SQLite files in -dir when PostgreSQL is not installed")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	if *lifetime > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, *lifetime)
		defer cancel()
	}
	if *pgDir != "" && *pgURL != "" {
		fmt.Fprintln(os.Stderr, "ferretmain: -postgresql-dir and -postgresql-url exclude each other")
		os.Exit(2)
	}
	if err := runWithPostgres(ctx, *listen, *dir, *pgURL, *pgDir, *fallback, *verbose); err != nil {
		fmt.Fprintln(os.Stderr, "ferretmain:", err)
		os.Exit(1)
	}
}

// runWithPostgres is run, first starting PostgreSQL in pgDir when one is asked for (and
// installed, with fallback), and stopping it after FerretDB.
func runWithPostgres(ctx context.Context, listen, dir, pgURL, pgDir string, fallback, verbose bool) error {
	backend := "SQLite in " + dir
	switch {
	case pgURL != "":
		backend = "PostgreSQL"
	case pgDir != "" && fallback && !havePostgres():
		fmt.Fprintln(os.Stderr, "ferretmain: PostgreSQL is not installed (apt-get install postgresql): using SQLite")
	case pgDir != "":
		abs, err := filepath.Abs(pgDir)
		if err != nil {
			return err
		}
		pg, err := startPostgres(ctx, abs)
		if err != nil {
			return err
		}
		defer pg.Stop()
		pgURL, backend = pg.URL("", postgresDatabase), "PostgreSQL, its cluster in "+pgDir
	}
	fmt.Fprintf(os.Stderr, "ferretmain: FerretDB keeps its data in %s\n", backend)
	return run(ctx, listen, dir, pgURL, verbose)
}

func run(ctx context.Context, listen, dir, pgURL string, verbose bool) error {
	level := slog.LevelWarn
	if verbose {
		level = slog.LevelInfo
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	// An image FROM scratch has neither the data directory nor a temporary directory.
	for _, d := range []string{abs, os.TempDir()} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	cfg := &ferretdb.Config{
		Listener:  ferretdb.ListenerConfig{TCP: listen},
		Logger:    slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level})),
		Handler:   "sqlite",
		SQLiteURL: "file:" + abs + "/",
	}
	if pgURL != "" {
		cfg.Handler, cfg.SQLiteURL, cfg.PostgreSQLURL = "postgresql", "", pgURL
	}
	f, err := ferretdb.New(cfg)
	if err != nil {
		return err
	}
	fmt.Fprintln(os.Stderr, "ferretmain: listening on", listen)
	return f.Run(ctx)
}
