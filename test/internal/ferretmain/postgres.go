package main

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
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pixgate/pixgate/test/internal/childproc"
)

// postgres is a PostgreSQL server of ferretmain's own (-postgresql-dir): its cluster in
// dir/data, made by initdb at the first start and kept across starts, listening on a free
// loopback port with a password kept in dir/password (0600). It runs as a child process and
// stops with ferretmain.
type postgres struct {
	dir      string
	port     int
	password string
	cmd      *exec.Cmd
	exited   chan struct{}
}

// postgresDatabase is the database FerretDB keeps its data in.
const postgresDatabase = "ferretdb"

// startPostgres starts the server in dir (initialising it on first use) and makes sure
// postgresDatabase exists.
func startPostgres(ctx context.Context, dir string) (*postgres, error) {
	bin, err := postgresBinDir()
	if err != nil {
		return nil, err
	}
	// PostgreSQL refuses to run as root: run as root, it runs as the postgres user that
	// Debian's package creates.
	cred, err := postgresCredential()
	if err != nil {
		return nil, err
	}
	// The parents stay open to the postgres user; the cluster's own directory is its alone.
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return nil, err
	}
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
		return nil, err
	}
	s := &postgres{dir: dir, exited: make(chan struct{})}
	data, pwfile := filepath.Join(dir, "data"), filepath.Join(dir, "password")
	if _, err := os.Stat(filepath.Join(data, "PG_VERSION")); errors.Is(err, os.ErrNotExist) {
		if err := initPostgres(ctx, bin, dir, data, pwfile, cred); err != nil {
			return nil, err
		}
	} else if err != nil {
		return nil, err
	}
	pw, err := os.ReadFile(pwfile)
	if err != nil {
		return nil, fmt.Errorf("the password of the PostgreSQL cluster in %s: %w", data, err)
	}
	s.password = strings.TrimSpace(string(pw))
	if s.port, err = freePort(); err != nil {
		return nil, err
	}
	s.cmd = exec.Command(filepath.Join(bin, "postgres"), "-D", data, "-p", strconv.Itoa(s.port),
		"-c", "listen_addresses=127.0.0.1", "-c", "unix_socket_directories=", "-c", "max_connections=200")
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	childproc.DieWithParent(s.cmd)
	log, err := os.OpenFile(filepath.Join(dir, "postgres.log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return nil, err
	}
	s.cmd.Stdout, s.cmd.Stderr = log, log
	if err := s.cmd.Start(); err != nil {
		log.Close()
		return nil, fmt.Errorf("start postgres: %w", err)
	}
	go func() {
		_ = s.cmd.Wait()
		log.Close()
		close(s.exited)
	}()
	if err := s.createDatabase(ctx); err != nil {
		s.stop()
		return nil, err
	}
	return s, nil
}

// initPostgres makes a new cluster in data, owned by cred's user when one is given, with a
// random password for the user pixgate.
func initPostgres(ctx context.Context, bin, dir, data, pwfile string, cred *syscall.Credential) error {
	if err := os.WriteFile(pwfile, []byte(rand.Text()+"\n"), 0o600); err != nil {
		return err
	}
	if cred != nil {
		for _, p := range []string{dir, pwfile} {
			if err := os.Chown(p, int(cred.Uid), int(cred.Gid)); err != nil {
				return err
			}
		}
	}
	initdb := exec.CommandContext(ctx, filepath.Join(bin, "initdb"), "-D", data, "-U", "pixgate", "--pwfile", pwfile,
		"--auth", "scram-sha-256", "--encoding", "UTF8", "--locale", "C")
	initdb.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	if out, err := initdb.CombinedOutput(); err != nil {
		os.RemoveAll(data)
		if cred != nil {
			return fmt.Errorf("initdb as the postgres user (PostgreSQL refuses root), who must be able to reach %s: %w\n%s", dir, err, out)
		}
		return fmt.Errorf("initdb: %w\n%s", err, out)
	}
	return nil
}

// url is the address of database db.
func (s *postgres) url(db string) string {
	u := url.URL{Scheme: "postgres", User: url.UserPassword("pixgate", s.password),
		Host: net.JoinHostPort("127.0.0.1", strconv.Itoa(s.port)), Path: "/" + db}
	return u.String()
}

// createDatabase waits for the server to answer, for a minute at most, and creates
// postgresDatabase unless it exists.
func (s *postgres) createDatabase(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	for {
		conn, err := pgx.Connect(ctx, s.url("postgres"))
		if err == nil {
			defer conn.Close(context.Background())
			var exists bool
			if err := conn.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)", postgresDatabase).Scan(&exists); err != nil {
				return err
			}
			if !exists {
				if _, err := conn.Exec(ctx, "CREATE DATABASE "+postgresDatabase); err != nil {
					return fmt.Errorf("create database %s: %w", postgresDatabase, err)
				}
			}
			return nil
		}
		select {
		case <-s.exited:
			return fmt.Errorf("postgres exited: see %s", filepath.Join(s.dir, "postgres.log"))
		case <-ctx.Done():
			return fmt.Errorf("postgres did not answer: %w", err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// stop ends the server (a fast shutdown, then SIGKILL after 20 s), keeping its files.
func (s *postgres) stop() {
	_ = s.cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-s.exited:
	case <-time.After(20 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.exited
	}
}

// postgresBinDir finds PostgreSQL's programs: initdb on PATH, under `pg_config --bindir`, or
// the newest /usr/lib/postgresql/*/bin (where Debian's package puts them).
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
	for i := len(dirs) - 1; i >= 0; i-- {
		if fileExists(filepath.Join(dirs[i], "initdb")) {
			return dirs[i], nil
		}
	}
	return "", errors.New("no PostgreSQL programs found (initdb on PATH, pg_config --bindir, /usr/lib/postgresql/*/bin): apt-get install postgresql, or run without -postgresql-dir for SQLite")
}

// havePostgres tells whether PostgreSQL's programs are installed (-sqlite-fallback).
func havePostgres() bool {
	_, err := postgresBinDir()
	return err == nil
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
		return nil, fmt.Errorf("PostgreSQL refuses to run as root, and there is no postgres user to run it as: %w", err)
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

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
