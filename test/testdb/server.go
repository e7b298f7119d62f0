package testdb

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/network"
	"github.com/moby/moby/client"
	"github.com/testcontainers/testcontainers-go"
	tcnetwork "github.com/testcontainers/testcontainers-go/network"
	"go.mongodb.org/mongo-driver/v2/bson"
	mdb "go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// Environment variables the suites read.
const (
	// EnvMongoImage names an image to run instead of the FerretDB one built here, e.g.
	// "mongo:7", where a registry is reachable. It must run a MongoDB-compatible server on
	// port 27017 with its default command.
	EnvMongoImage = "PIXGATE_TEST_MONGO_IMAGE"
	// EnvRequireDocker set to "1" makes a missing Docker engine fail the suites instead of
	// falling back to FerretDB in the test process.
	EnvRequireDocker = "PIXGATE_TEST_REQUIRE_DOCKER"
)

const mongoPort = "27017/tcp"

// containerLifetime bounds how long a FerretDB container may run: a container the suite
// fails to remove (its binary killed by the test timeout) stops by itself.
const containerLifetime = "1h"

// Server is a MongoDB-compatible database started for the tests: a container (FerretDB built
// here, or the image EnvMongoImage names) or, without Docker, FerretDB inside the test
// process.
type Server struct {
	uri    string
	ferret bool
	alias  string // the server's name on its Docker network, if it joined one

	ctr  *testcontainers.DockerContainer
	proc *inProcess
}

// URI is the connection string of the server, for the test process.
func (s *Server) URI() string { return s.uri }

// NetworkURI is the connection string of the server for another container on the Docker
// network it joined (Options.Network).
func (s *Server) NetworkURI() string { return "mongodb://" + s.alias + ":27017/" }

// FerretDB tells whether the server is FerretDB (slower than MongoDB, and without a query
// planner to explain).
func (s *Server) FerretDB() bool { return s.ferret }

// InProcess tells whether the server runs inside the test process (no Docker engine).
func (s *Server) InProcess() bool { return s.proc != nil }

// Stop stops the server, keeping its data; Start starts it again on the same address. Only a
// server started with Options.Restartable (or in process) keeps its address across the two.
func (s *Server) Stop(ctx context.Context) error {
	if s.proc != nil {
		s.proc.stop()
		return nil
	}
	timeout := 10 * time.Second
	return s.ctr.Stop(ctx, &timeout)
}

// Start starts a stopped server again and waits until it answers.
func (s *Server) Start(ctx context.Context) error {
	if s.proc != nil {
		return s.proc.start(ctx)
	}
	if err := s.ctr.Start(ctx); err != nil {
		return err
	}
	return waitReady(ctx, s.uri)
}

// Options tune a server started by Start.
type Options struct {
	// Restartable binds a fixed host port, so that the server keeps its address when it is
	// stopped and started again (Docker otherwise picks a new port at every start).
	Restartable bool
	// Network is a Docker network to join, where the server is reachable as Alias.
	Network string
	Alias   string
}

var setupOnce sync.Once

// setup makes testcontainers work where no registry is reachable: the reaper (Ryuk) is an
// image to pull, so it is disabled, and every test removes its own containers.
func setup() {
	setupOnce.Do(func() {
		if v := os.Getenv("TESTCONTAINERS_RYUK_DISABLED"); v != "true" {
			_ = os.Setenv("TESTCONTAINERS_RYUK_DISABLED", "true")
		}
	})
}

// DockerAvailable answers nil when a Docker engine answers.
func DockerAvailable(ctx context.Context) error {
	setup()
	dockerOnce.Do(func() {
		ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		cli, err := testcontainers.NewDockerClientWithOpts(ctx)
		if err != nil {
			dockerErr = err
			return
		}
		defer cli.Close()
		_, dockerErr = cli.Ping(ctx, client.PingOptions{})
	})
	return dockerErr
}

var (
	dockerOnce sync.Once
	dockerErr  error
)

// Start starts a server of the test's own, removed when the test ends. Without a Docker
// engine it starts FerretDB in the test process, unless EnvRequireDocker is set, or the options
// need Docker (a network), in which case the test fails or is skipped.
func Start(t testing.TB, o Options) *Server {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if err := DockerAvailable(ctx); err != nil {
		switch {
		case os.Getenv(EnvRequireDocker) == "1":
			t.Fatalf("no Docker engine answers (%v) and %s=1", err, EnvRequireDocker)
		case o.Network != "":
			t.Skipf("no Docker engine answers (%v): this test needs containers", err)
		}
		dir := t.TempDir()
		pgURL, err := postgresURL(ctx, "", false)
		if err != nil {
			t.Fatal(err)
		}
		p, err := startInProcess(ctx, dir, pgURL)
		if err != nil {
			t.Fatalf("start FerretDB in process: %v", err)
		}
		t.Cleanup(p.stop)
		return &Server{uri: p.uri(), ferret: true, proc: p}
	}
	s, err := startContainer(ctx, o, func(c *testcontainers.DockerContainer) { testcontainers.CleanupContainer(t, c) })
	if err != nil {
		t.Fatalf("start database container: %v", err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			logTail(t, s.ctr)
		}
	})
	return s
}

// startContainer runs the database container; cleanup is called right after Run, whatever
// Run answered, so that a container half started is removed too.
func startContainer(ctx context.Context, o Options, cleanup func(*testcontainers.DockerContainer)) (*Server, error) {
	image, ferret := os.Getenv(EnvMongoImage), false
	opts := []testcontainers.ContainerCustomizer{
		testcontainers.WithExposedPorts(mongoPort),
		WithLabels("database"),
	}
	if image == "" {
		var err error
		if image, err = FerretDBImage(ctx); err != nil {
			return nil, err
		}
		ferret = true
		opts = append(opts, testcontainers.WithCmdArgs("-lifetime", containerLifetime))
		pgURL, err := postgresURL(ctx, postgresHost, true)
		if err != nil {
			return nil, err
		}
		if pgURL != "" {
			opts = append(opts, testcontainers.WithCmdArgs("-postgresql-url", pgURL),
				testcontainers.WithHostConfigModifier(func(hc *container.HostConfig) {
					hc.ExtraHosts = append(hc.ExtraHosts, postgresHost+":host-gateway")
				}))
		}
	}
	if o.Restartable {
		port, err := freePort()
		if err != nil {
			return nil, err
		}
		opts = append(opts, testcontainers.WithHostConfigModifier(func(hc *container.HostConfig) {
			hc.PortBindings = network.PortMap{network.MustParsePort(mongoPort): {{HostPort: strconv.Itoa(port)}}}
		}))
	}
	if o.Network != "" {
		opts = append(opts, tcnetwork.WithNetworkName([]string{o.Alias}, o.Network))
	}
	c, err := testcontainers.Run(ctx, image, opts...)
	cleanup(c)
	if err != nil {
		return nil, err
	}
	host, port, err := Endpoint(ctx, c, mongoPort)
	if err != nil {
		return nil, err
	}
	s := &Server{uri: "mongodb://" + net.JoinHostPort(host, port) + "/", ferret: ferret, alias: o.Alias, ctr: c}
	if err := waitReady(ctx, s.uri); err != nil {
		return nil, err
	}
	return s, nil
}

// Endpoint is the host and port where the test process reaches a container's port.
// testcontainers guesses the host from the environment; inside a container without a
// reachable gateway (this project's CI) its guess fails, so the candidates (an override in
// TESTCONTAINERS_HOST_OVERRIDE, testcontainers' guess, the loopback address) are dialled and
// the first that answers, in that order, wins.
func Endpoint(ctx context.Context, c *testcontainers.DockerContainer, port string) (string, string, error) {
	mapped, err := c.MappedPort(ctx, port)
	if err != nil {
		return "", "", err
	}
	p := mapped.Port()
	var hosts []string
	if h := os.Getenv("TESTCONTAINERS_HOST_OVERRIDE"); h != "" {
		hosts = append(hosts, h)
	}
	if h, err := c.Host(ctx); err == nil {
		hosts = append(hosts, h)
	}
	hosts = append(hosts, "127.0.0.1")
	ok := make([]bool, len(hosts))
	var wg sync.WaitGroup
	for i, h := range hosts {
		wg.Go(func() {
			conn, err := net.DialTimeout("tcp", net.JoinHostPort(h, p), 2*time.Second)
			if err == nil {
				ok[i] = true
				conn.Close()
			}
		})
	}
	wg.Wait()
	for i, h := range hosts {
		if ok[i] {
			return h, p, nil
		}
	}
	return "", "", fmt.Errorf("port %s of the container answers on none of %v", p, hosts)
}

// waitReady pings uri until it answers, for a minute at most.
func waitReady(ctx context.Context, uri string) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	c, err := mdb.Connect(options.Client().ApplyURI(uri).SetServerSelectionTimeout(time.Second).SetConnectTimeout(time.Second))
	if err != nil {
		return err
	}
	defer c.Disconnect(context.Background())
	for {
		err := c.Database("admin").RunCommand(ctx, bson.D{{Key: "ping", Value: 1}}).Err()
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("database at %s did not answer: %w", uri, err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// logTail prints the end of a container's log, for a failed test.
func logTail(t testing.TB, c *testcontainers.DockerContainer) {
	if c == nil {
		return
	}
	rc, err := c.Logs(context.Background())
	if err != nil {
		return
	}
	defer rc.Close()
	b, _ := io.ReadAll(rc)
	const keep = 4000
	if len(b) > keep {
		b = b[len(b)-keep:]
	}
	t.Logf("last log of the database container:\n%s", b)
}

// The shared server of a test binary: started on first use, removed by Main.
var (
	sharedOnce    sync.Once
	shared        *Server
	sharedErr     error
	sharedCleanup []func()
	mainCalled    bool
)

// Main runs a test binary's tests, then removes its shared server and runs cleanups. Call it
// from TestMain:
//
//	func TestMain(m *testing.M) { testdb.Main(m) }
//
// Each test removes what it started in its cleanups, pass or fail; but a binary that reaches
// its -timeout panics without running them, and one interrupted (SIGINT, SIGTERM) just dies.
// So Main removes every container and network of this binary (LabelProcess) itself shortly
// before the timeout (the tests still running then fail, as they were about to), and when
// interrupted before it exits.
func Main(m *testing.M, cleanups ...func()) {
	setup()
	mainCalled = true
	if !flag.Parsed() {
		flag.Parse()
	}
	stop := guard(testTimeout())
	code := m.Run()
	stop()
	for _, f := range sharedCleanup {
		f()
	}
	for _, f := range cleanups {
		f()
	}
	os.Exit(code)
}

// testTimeout is the binary's -test.timeout (0: none).
func testTimeout() time.Duration {
	f := flag.Lookup("test.timeout")
	if f == nil {
		return 0
	}
	d, _ := time.ParseDuration(f.Value.String())
	return d
}

// guard removes this binary's containers and networks shortly before timeout ends, or when the
// binary is interrupted (then it exits); stop ends the guard.
func guard(timeout time.Duration) (stop func()) {
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGINT, syscall.SIGTERM)
	var near <-chan time.Time
	if timeout > 0 {
		// Enough to remove a few containers on a busy machine, and never most of the run.
		near = time.After(timeout - min(time.Minute, timeout/10))
	}
	done := make(chan struct{})
	go func() {
		select {
		case <-done:
		case <-near:
			removeOwnNow("the test timeout is near")
		case s := <-signals:
			removeOwnNow("interrupted by " + s.String())
			os.Exit(2)
		}
	}()
	return sync.OnceFunc(func() {
		signal.Stop(signals)
		close(done)
	})
}

// removeOwnNow is removeOwn, telling standard error why and what.
func removeOwnNow(why string) {
	ctx, cancel := context.WithTimeout(context.Background(), 45*time.Second)
	defer cancel()
	removed, err := removeOwn(ctx)
	fmt.Fprintf(os.Stderr, "testdb: %s: removed what this test binary started and had not removed: %v\n", why, removed)
	if err != nil {
		fmt.Fprintln(os.Stderr, "testdb: removing what this test binary started:", err)
	}
}

// Shared returns the test binary's shared server, starting it on first use. Tests sharing it
// keep apart by using a database each (OpenStore does). It needs Main.
func Shared(t testing.TB) *Server {
	t.Helper()
	if !mainCalled {
		t.Fatal("testdb.Shared needs testdb.Main in the package's TestMain")
	}
	sharedOnce.Do(func() { shared, sharedErr = startShared() })
	if sharedErr != nil {
		if errors.Is(sharedErr, errDockerRequired) {
			t.Fatal(sharedErr)
		}
		t.Fatalf("start the shared database: %v", sharedErr)
	}
	return shared
}

var errDockerRequired = errors.New("no Docker engine answers and " + EnvRequireDocker + "=1")

func startShared() (*Server, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if err := DockerAvailable(ctx); err != nil {
		if os.Getenv(EnvRequireDocker) == "1" {
			return nil, fmt.Errorf("%w: %v", errDockerRequired, err)
		}
		dir, err := os.MkdirTemp("", "pixgate-ferretdb-")
		if err != nil {
			return nil, err
		}
		sharedCleanup = append(sharedCleanup, func() { os.RemoveAll(dir) })
		pgURL, err := postgresURL(ctx, "", false)
		if err != nil {
			return nil, err
		}
		p, err := startInProcess(ctx, dir, pgURL)
		if err != nil {
			return nil, err
		}
		sharedCleanup = append([]func(){p.stop}, sharedCleanup...)
		return &Server{uri: p.uri(), ferret: true, proc: p}, nil
	}
	return startContainer(ctx, Options{}, func(c *testcontainers.DockerContainer) {
		sharedCleanup = append(sharedCleanup, func() {
			if err := testcontainers.TerminateContainer(c); err != nil {
				fmt.Fprintln(os.Stderr, "testdb: remove the shared database container:", err)
			}
		})
	})
}
