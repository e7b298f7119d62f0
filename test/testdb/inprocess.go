package testdb

import (
	"context"
	"io"
	"log/slog"
	"net"
	"strconv"
	"sync"

	"github.com/FerretDB/FerretDB/ferretdb"
)

// inProcess is FerretDB running inside the test process, listening on a loopback port, its
// SQLite files in dir: the fallback where no Docker engine answers. stop and start keep the
// address and the data, like stopping and starting a container.
type inProcess struct {
	addr  string
	dir   string
	pgURL string // FerretDB's PostgreSQL database, or "" for SQLite in dir

	mu     sync.Mutex
	cancel context.CancelFunc
	done   chan struct{}
}

func startInProcess(ctx context.Context, dir, pgURL string) (*inProcess, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	p := &inProcess{addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), dir: dir, pgURL: pgURL}
	if err := p.start(ctx); err != nil {
		return nil, err
	}
	return p, nil
}

func (p *inProcess) uri() string { return "mongodb://" + p.addr + "/" }

func (p *inProcess) start(ctx context.Context) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cancel != nil {
		return nil
	}
	cfg := &ferretdb.Config{
		Listener:  ferretdb.ListenerConfig{TCP: p.addr},
		Logger:    slog.New(slog.NewTextHandler(io.Discard, nil)),
		Handler:   "sqlite",
		SQLiteURL: "file:" + p.dir + "/",
	}
	if p.pgURL != "" {
		cfg.Handler, cfg.SQLiteURL, cfg.PostgreSQLURL = "postgresql", "", p.pgURL
	}
	f, err := ferretdb.New(cfg)
	if err != nil {
		return err
	}
	runCtx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = f.Run(runCtx)
	}()
	p.cancel, p.done = cancel, done
	return waitReady(ctx, p.uri())
}

func (p *inProcess) stop() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cancel == nil {
		return
	}
	p.cancel()
	<-p.done
	p.cancel, p.done = nil, nil
}
