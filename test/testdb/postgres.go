package testdb

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/moby/moby/client"
	"github.com/testcontainers/testcontainers-go"

	"github.com/pixgate/pixgate/test/internal/childproc"
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
	return s.url(host, db), nil
}

// postgresHost is the name under which FerretDB containers reach the test binary's PostgreSQL
// server (Docker's host-gateway: the default bridge's address on this host).
const postgresHost = "pixgate-test-postgres"

// pgServer is the test binary's PostgreSQL server.
type pgServer struct {
	port     int
	password string
	bridge   string // Docker's default bridge address, where containers reach it ("" without Docker)
	dir      string
	cmd      *exec.Cmd
	exited   chan struct{}
	dbs      atomic.Int64
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
	bin, err := postgresBinDir()
	if err != nil {
		return nil, err
	}
	s := &pgServer{password: rand.Text(), exited: make(chan struct{})}
	if docker {
		if s.bridge, err = bridgeAddress(ctx); err != nil {
			return nil, err
		}
	}
	if s.dir, err = os.MkdirTemp("", "pixgate-postgres-"); err != nil {
		return nil, err
	}
	started := false
	defer func() {
		if !started {
			os.RemoveAll(s.dir)
		}
	}()
	// PostgreSQL refuses to run as root: a test run as root runs it as the postgres user.
	cred, err := postgresCredential()
	if err != nil {
		return nil, err
	}
	data := filepath.Join(s.dir, "data")
	pwfile := filepath.Join(s.dir, "pw")
	if err := os.WriteFile(pwfile, []byte(s.password+"\n"), 0o600); err != nil {
		return nil, err
	}
	if cred != nil {
		for _, p := range []string{s.dir, pwfile} {
			if err := os.Chown(p, int(cred.Uid), int(cred.Gid)); err != nil {
				return nil, err
			}
		}
	}
	initdb := exec.CommandContext(ctx, filepath.Join(bin, "initdb"), "-D", data, "-U", "pixgate", "--pwfile", pwfile,
		"--auth", "scram-sha-256", "--encoding", "UTF8", "--locale", "C")
	initdb.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	if out, err := initdb.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("initdb: %w\n%s", err, out)
	}
	// Containers come from Docker's networks, whatever their subnet; the password guards it.
	hba, err := os.OpenFile(filepath.Join(data, "pg_hba.conf"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return nil, err
	}
	_, err = hba.WriteString("host all all 0.0.0.0/0 scram-sha-256\n")
	if err := errors.Join(err, hba.Close()); err != nil {
		return nil, err
	}
	if s.port, err = freePort(); err != nil {
		return nil, err
	}
	listen := "127.0.0.1"
	if s.bridge != "" {
		listen += "," + s.bridge
	}
	s.cmd = exec.Command(filepath.Join(bin, "postgres"), "-D", data, "-p", strconv.Itoa(s.port),
		"-c", "listen_addresses="+listen, "-c", "unix_socket_directories="+s.dir,
		"-c", "max_connections=500", "-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off")
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	childproc.DieWithParent(s.cmd)
	log, err := os.Create(filepath.Join(s.dir, "postgres.log"))
	if err != nil {
		return nil, err
	}
	s.cmd.Stdout, s.cmd.Stderr = log, log
	if err := s.cmd.Start(); err != nil {
		log.Close()
		return nil, fmt.Errorf("start postgres: %w", err)
	}
	started = true
	go func() {
		_ = s.cmd.Wait()
		log.Close()
		close(s.exited)
	}()
	if err := s.waitReady(ctx); err != nil {
		s.stop()
		return nil, err
	}
	return s, nil
}

// url is the address of database db for the test process (host "") or for a container.
func (s *pgServer) url(host, db string) string {
	if host == "" {
		host = "127.0.0.1"
	}
	u := url.URL{Scheme: "postgres", User: url.UserPassword("pixgate", s.password),
		Host: net.JoinHostPort(host, strconv.Itoa(s.port)), Path: "/" + db}
	return u.String()
}

func (s *pgServer) waitReady(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	for {
		conn, err := pgx.Connect(ctx, s.url("", "postgres"))
		if err == nil {
			return conn.Close(ctx)
		}
		select {
		case <-s.exited:
			log, _ := os.ReadFile(filepath.Join(s.dir, "postgres.log"))
			return fmt.Errorf("postgres exited: %s", log)
		case <-ctx.Done():
			return fmt.Errorf("postgres did not answer: %w", err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// newDatabase creates a database for one FerretDB and answers its name.
func (s *pgServer) newDatabase(ctx context.Context) (string, error) {
	name := fmt.Sprintf("ferretdb_%d", s.dbs.Add(1))
	conn, err := pgx.Connect(ctx, s.url("", "postgres"))
	if err != nil {
		return "", err
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		return "", fmt.Errorf("create database %s: %w", name, err)
	}
	return name, nil
}

// stop ends the server (a fast shutdown, then SIGKILL after 20 s) and removes its files.
func (s *pgServer) stop() {
	_ = s.cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-s.exited:
	case <-time.After(20 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.exited
	}
	os.RemoveAll(s.dir)
}

// postgresBinDir finds PostgreSQL's programs.
func postgresBinDir() (string, error) {
	if p, err := exec.LookPath("initdb"); err == nil {
		return filepath.Dir(p), nil
	}
	if out, err := exec.Command("pg_config", "--bindir").Output(); err == nil {
		if dir := strings.TrimSpace(string(out)); fileExists(filepath.Join(dir, "initdb")) {
			return dir, nil
		}
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	for i := len(dirs) - 1; i >= 0; i-- { // the newest version
		if fileExists(filepath.Join(dirs[i], "initdb")) {
			return dirs[i], nil
		}
	}
	return "", fmt.Errorf("%s=postgresql: no PostgreSQL programs found (initdb on PATH, pg_config --bindir, /usr/lib/postgresql/*/bin)", EnvBackend)
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// postgresCredential is who runs PostgreSQL: nil (this process's user), or the postgres user
// when this process is root.
func postgresCredential() (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, fmt.Errorf("%s=postgresql as root needs a postgres user to run PostgreSQL: %w", EnvBackend, err)
	}
	uid, err := strconv.ParseUint(u.Uid, 10, 32)
	if err != nil {
		return nil, err
	}
	gid, err := strconv.ParseUint(u.Gid, 10, 32)
	if err != nil {
		return nil, err
	}
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
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
