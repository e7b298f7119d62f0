package testdb

import (
	"context"
	"fmt"
	"net"
	"os"
	"sync"
	"sync/atomic"

	"github.com/moby/moby/client"
	"github.com/testcontainers/testcontainers-go"

	"github.com/pixgate/pixgate/test/internal/pgserver"
)

// EnvBackend chooses FerretDB's backend: "sqlite" (the default) or "postgresql". With
// "postgresql" the test binary starts one PostgreSQL server of its own from the machine's
// binaries (initdb and postgres on PATH, or under `pg_config --bindir`, or
// /usr/lib/postgresql/*/bin), its files in a temporary directory, and every FerretDB it starts
// keeps a database of its own there. The server listens on the loopback and on Docker's
// default bridge, with a random password, and is stopped and removed by Main.
const EnvBackend = "PIXGATE_TEST_FERRETDB_BACKEND"

// backend is the FerretDB backend EnvBackend asks for.
func backend() (string, error) {
	switch b := os.Getenv(EnvBackend); b {
	case "", "sqlite":
		return "sqlite", nil
	case "postgresql":
		return b, nil
	default:
		return "", fmt.Errorf("%s=%q: want sqlite or postgresql", EnvBackend, b)
	}
}

// postgresURL is the PostgreSQL database of a new FerretDB, as host reaches it ("" for the
// test process), or "" when FerretDB keeps its data in SQLite (EnvBackend).
func postgresURL(ctx context.Context, host string, docker bool) (string, error) {
	b, err := backend()
	if err != nil || b != "postgresql" {
		return "", err
	}
	s, err := sharedPostgres(ctx, docker)
	if err != nil {
		return "", err
	}
	db, err := s.newDatabase(ctx)
	if err != nil {
		return "", err
	}
	return s.URL(host, db), nil
}

// postgresHost is the name under which FerretDB containers reach the test binary's PostgreSQL
// server (Docker's host-gateway: the default bridge's address on this host).
const postgresHost = "pixgate-test-postgres"

// pgServer is the test binary's PostgreSQL server.
type pgServer struct {
	*pgserver.Server
	dir string
	dbs atomic.Int64
}

var (
	pgOnce sync.Once
	pg     *pgServer
	pgErr  error
)

// sharedPostgres starts the test binary's PostgreSQL server on first use.
func sharedPostgres(ctx context.Context, docker bool) (*pgServer, error) {
	pgOnce.Do(func() {
		pg, pgErr = startPostgres(ctx, docker)
		if pg != nil {
			sharedCleanup = append(sharedCleanup, pg.stop)
		}
	})
	return pg, pgErr
}

func startPostgres(ctx context.Context, docker bool) (*pgServer, error) {
	var o pgserver.Options
	if docker {
		bridge, err := bridgeAddress(ctx)
		if err != nil {
			return nil, err
		}
		o.Listen = []string{bridge}
	}
	// Containers come from Docker's networks, whatever their subnet; the password guards it.
	o.HBA = []string{"host all all 0.0.0.0/0 scram-sha-256"}
	// Test data is thrown away with the server: durability only costs time.
	o.Settings = []string{"max_connections=500", "fsync=off", "synchronous_commit=off", "full_page_writes=off"}
	dir, err := os.MkdirTemp("", "pixgate-postgres-")
	if err != nil {
		return nil, err
	}
	srv, err := pgserver.Start(ctx, dir, o)
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("%s=postgresql: %w", EnvBackend, err)
	}
	return &pgServer{Server: srv, dir: dir}, nil
}

// newDatabase creates a database for one FerretDB and answers its name.
func (s *pgServer) newDatabase(ctx context.Context) (string, error) {
	name := fmt.Sprintf("ferretdb_%d", s.dbs.Add(1))
	if err := s.CreateDatabase(ctx, name); err != nil {
		return "", err
	}
	return name, nil
}

// stop ends the server and removes its files.
func (s *pgServer) stop() {
	s.Stop()
	os.RemoveAll(s.dir)
}

// bridgeAddress is the address of Docker's default bridge on this host: where host-gateway
// leads from a container.
func bridgeAddress(ctx context.Context) (string, error) {
	cli, err := testcontainers.NewDockerClientWithOpts(ctx)
	if err != nil {
		return "", err
	}
	defer cli.Close()
	res, err := cli.NetworkInspect(ctx, "bridge", client.NetworkInspectOptions{})
	if err != nil {
		return "", fmt.Errorf("inspect Docker's bridge network: %w", err)
	}
	for _, c := range res.Network.IPAM.Config {
		if c.Gateway.IsValid() && c.Gateway.Is4() {
			return c.Gateway.String(), nil
		}
	}
	// An engine may leave the gateway out of the network's description: the bridge's
	// interface on this host has it.
	name := res.Network.Options["com.docker.network.bridge.name"]
	if name == "" {
		name = "docker0"
	}
	iface, err := net.InterfaceByName(name)
	if err != nil {
		return "", fmt.Errorf("docker's bridge network names no gateway, and its interface %s: %w", name, err)
	}
	addrs, err := iface.Addrs()
	if err != nil {
		return "", err
	}
	for _, a := range addrs {
		if ip, ok := a.(*net.IPNet); ok && ip.IP.To4() != nil {
			return ip.IP.String(), nil
		}
	}
	return "", fmt.Errorf("docker's bridge interface %s has no IPv4 address", name)
}
