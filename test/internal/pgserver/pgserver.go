// Package pgserver starts a PostgreSQL server from the machine's PostgreSQL programs (Debian's
// postgresql package, or any initdb and postgres it finds), as a child process of this one, for
// FerretDB to keep its data in: the test binaries' server (test/testdb) and ferretmain's
// -postgresql-dir. It knows nothing of FerretDB, MongoDB or containers.
//
// A server's directory holds its cluster (data/, made by initdb at the first start and kept
// across starts), the password of the user pixgate (password, 0600, random) and its log
// (postgres.log). The server listens on a free TCP port, with no Unix socket, and every
// connection gives the password (scram-sha-256).
package pgserver

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

// User is the database user a cluster is made with, and the one URL connects as.
const User = "pixgate"

// Options is what differs between the servers Start starts.
type Options struct {
	// Listen lists the addresses to listen on besides 127.0.0.1.
	Listen []string
	// Settings are more server settings, each "name=value" (postgres -c).
	Settings []string
	// HBA lines are appended to pg_hba.conf when the cluster is made.
	HBA []string
}

// Server is a running PostgreSQL server.
type Server struct {
	dir      string
	port     int
	password string
	cmd      *exec.Cmd
	exited   chan struct{}
}

// Start starts the server whose files are in dir (made when missing, its parents open to
// everyone and dir to its owner alone), making its cluster first when there is none, and
// answers once the server accepts connections (a minute at most). PostgreSQL refuses to run as
// root: run as root, Start runs it as the postgres user that Debian's package creates, and
// gives dir to that user.
func Start(ctx context.Context, dir string, o Options) (*Server, error) {
	bin, err := BinDir()
	if err != nil {
		return nil, err
	}
	cred, err := credential()
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return nil, err
	}
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
		return nil, err
	}
	s := &Server{dir: dir, exited: make(chan struct{})}
	data, pwfile := filepath.Join(dir, "data"), filepath.Join(dir, "password")
	if _, err := os.Stat(filepath.Join(data, "PG_VERSION")); errors.Is(err, os.ErrNotExist) {
		if err := initCluster(ctx, bin, dir, data, pwfile, cred, o.HBA); err != nil {
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
	args := []string{"-D", data, "-p", strconv.Itoa(s.port),
		"-c", "listen_addresses=" + strings.Join(append([]string{"127.0.0.1"}, o.Listen...), ","),
		"-c", "unix_socket_directories="}
	for _, kv := range o.Settings {
		args = append(args, "-c", kv)
	}
	s.cmd = exec.Command(filepath.Join(bin, "postgres"), args...)
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	childproc.DieWithParent(s.cmd)
	log, err := os.OpenFile(s.logPath(), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
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
	if err := s.waitReady(ctx); err != nil {
		s.Stop()
		return nil, err
	}
	return s, nil
}

// initCluster makes a new cluster in data, owned by cred's user when one is given, with a
// random password for User kept in pwfile, and hba appended to its pg_hba.conf.
func initCluster(ctx context.Context, bin, dir, data, pwfile string, cred *syscall.Credential, hba []string) error {
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
	initdb := exec.CommandContext(ctx, filepath.Join(bin, "initdb"), "-D", data, "-U", User, "--pwfile", pwfile,
		"--auth", "scram-sha-256", "--encoding", "UTF8", "--locale", "C")
	initdb.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	if out, err := initdb.CombinedOutput(); err != nil {
		os.RemoveAll(data)
		if cred != nil {
			return fmt.Errorf("initdb as the postgres user (PostgreSQL refuses root), who must be able to reach %s: %w\n%s", dir, err, out)
		}
		return fmt.Errorf("initdb: %w\n%s", err, out)
	}
	if len(hba) == 0 {
		return nil
	}
	f, err := os.OpenFile(filepath.Join(data, "pg_hba.conf"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	_, err = f.WriteString(strings.Join(hba, "\n") + "\n")
	return errors.Join(err, f.Close())
}

// URL is the address of database db, reached at host ("": 127.0.0.1).
func (s *Server) URL(host, db string) string {
	if host == "" {
		host = "127.0.0.1"
	}
	u := url.URL{Scheme: "postgres", User: url.UserPassword(User, s.password),
		Host: net.JoinHostPort(host, strconv.Itoa(s.port)), Path: "/" + db}
	return u.String()
}

func (s *Server) logPath() string { return filepath.Join(s.dir, "postgres.log") }

// waitReady waits for the server to accept connections, for a minute at most.
func (s *Server) waitReady(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	for {
		conn, err := pgx.Connect(ctx, s.URL("", "postgres"))
		if err == nil {
			return conn.Close(ctx)
		}
		select {
		case <-s.exited:
			return fmt.Errorf("postgres exited: see %s\n%s", s.logPath(), logTail(s.logPath()))
		case <-ctx.Done():
			return fmt.Errorf("postgres did not answer: %w", err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// logTail is the end of the log at p: enough to say why the server stopped, even when the log
// holds earlier starts too.
func logTail(p string) []byte {
	b, _ := os.ReadFile(p)
	const keep = 4000
	if len(b) > keep {
		b = b[len(b)-keep:]
	}
	return b
}

// CreateDatabase creates database name unless it exists.
func (s *Server) CreateDatabase(ctx context.Context, name string) error {
	conn, err := pgx.Connect(ctx, s.URL("", "postgres"))
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	var exists bool
	if err := conn.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)", name).Scan(&exists); err != nil {
		return err
	}
	if exists {
		return nil
	}
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
		return fmt.Errorf("create database %s: %w", name, err)
	}
	return nil
}

// Stop ends the server (a fast shutdown, then SIGKILL after 20 s), keeping its files.
func (s *Server) Stop() {
	_ = s.cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-s.exited:
	case <-time.After(20 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.exited
	}
}

// ErrNotInstalled: BinDir found no PostgreSQL programs.
var ErrNotInstalled = errors.New("no PostgreSQL programs found (initdb on PATH, pg_config --bindir, /usr/lib/postgresql/*/bin)")

// BinDir finds PostgreSQL's programs: initdb on PATH, under `pg_config --bindir`, or the newest
// /usr/lib/postgresql/*/bin (where Debian's package puts them). It fails with ErrNotInstalled.
func BinDir() (string, error) {
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
	return "", ErrNotInstalled
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// credential is who runs PostgreSQL: nil (this process's user), or the postgres user when this
// process is root.
func credential() (*syscall.Credential, error) {
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
