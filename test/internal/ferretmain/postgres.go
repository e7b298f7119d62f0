package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/pixgate/pixgate/test/internal/pgserver"
)

// postgresDatabase is the database FerretDB keeps its data in.
const postgresDatabase = "ferretdb"

// startPostgres starts ferretmain's own PostgreSQL server (-postgresql-dir): its cluster in
// dir, made at the first start and kept across starts, as a child process that stops with
// ferretmain. It makes sure postgresDatabase exists.
func startPostgres(ctx context.Context, dir string) (*pgserver.Server, error) {
	s, err := pgserver.Start(ctx, dir, pgserver.Options{Settings: []string{"max_connections=200"}})
	if errors.Is(err, pgserver.ErrNotInstalled) {
		return nil, fmt.Errorf("%w: apt-get install postgresql, or run without -postgresql-dir for SQLite", err)
	}
	if err != nil {
		return nil, err
	}
	if err := s.CreateDatabase(ctx, postgresDatabase); err != nil {
		s.Stop()
		return nil, err
	}
	return s, nil
}

// havePostgres tells whether PostgreSQL's programs are installed (-sqlite-fallback).
func havePostgres() bool {
	_, err := pgserver.BinDir()
	return err == nil
}
