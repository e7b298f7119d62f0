package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/pixgate/pixgate/test/internal/childproc"
)

// process is a server the harness started on loopback: `pixgate serve`, or the bare baseline.
type process struct {
	name    string
	base    string // http://127.0.0.1:port
	cmd     *exec.Cmd
	exited  chan struct{}
	waitErr error
	logPath string
}

// server is the `pixgate serve` process.
type server struct {
	*process
	// env is the environment it was started with beyond the harness's own, secrets elided,
	// as the report shows it.
	env []string
}

// build builds the main package pkg of the module in dir into out/name.
func build(ctx context.Context, dir, pkg, out, name string) (string, error) {
	bin := filepath.Join(out, name)
	if _, err := command(ctx, dir, "go", "build", "-o", bin, pkg); err != nil {
		return "", err
	}
	return bin, nil
}

// buildPixgate makes a temporary directory named after prefix and builds `pixgate serve` into
// it; remove deletes the directory and what it holds.
func buildPixgate(ctx context.Context, root, prefix string) (tmp, bin string, remove func(), err error) {
	if tmp, err = os.MkdirTemp("", prefix); err != nil {
		return "", "", nil, err
	}
	remove = func() { os.RemoveAll(tmp) }
	if bin, err = build(ctx, root, "./cmd/pixgate", tmp, "pixgate"); err != nil {
		remove()
		return "", "", nil, err
	}
	return tmp, bin, remove, nil
}

// account is a seeded client account of the load run.
type account struct{ name, clientID, secret string }

// newAccount makes credentials for PIXGATE_SEED_CLIENTS: a 52-character random secret in base32
// (no ':' or ';', which the variable uses as separators).
func newAccount(name string) account {
	return account{name: name, clientID: name + "-client", secret: rand.Text() + rand.Text()}
}

// freeLoopbackAddr asks the kernel for a free port on 127.0.0.1. The port is free again when
// the server binds it; nothing else on the machine races for it in practice.
func freeLoopbackAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// startProcess runs bin with args, the harness's environment less its PIXGATE_* and GOMAXPROCS
// variables plus settings, its output to logDir/name.log, and waits until GET health answers
// 200.
func startProcess(ctx context.Context, name, bin string, args, settings []string, logDir, base, health string) (*process, error) {
	p, err := spawnProcess(name, bin, args, settings, logDir)
	if err != nil {
		return nil, err
	}
	p.base = base
	deadline := time.Now().Add(30 * time.Second)
	for {
		res, err := setupClient.Get(base + health)
		if err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return p, nil
			}
		}
		select {
		case <-p.exited:
			return nil, fmt.Errorf("%s exited at start (%v); its log: %s", name, p.waitErr, p.tail())
		case <-ctx.Done():
			p.stop()
			return nil, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			p.stop()
			return nil, fmt.Errorf("%s did not answer %s within 30 s; its log: %s", name, health, p.tail())
		}
	}
}

// spawnProcess starts bin with args, the harness's environment less its PIXGATE_* and
// GOMAXPROCS variables plus settings, its output to logDir/name.log, without waiting for it to
// be ready.
func spawnProcess(name, bin string, args, settings []string, logDir string) (*process, error) {
	env := []string{}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "PIXGATE_") && !strings.HasPrefix(kv, "GOMAXPROCS=") {
			env = append(env, kv)
		}
	}
	p := &process{name: name, exited: make(chan struct{}), logPath: filepath.Join(logDir, name+".log")}
	logFile, err := os.Create(p.logPath)
	if err != nil {
		return nil, err
	}
	p.cmd = exec.Command(bin, args...)
	p.cmd.Env = append(env, settings...)
	p.cmd.Stdout, p.cmd.Stderr = logFile, logFile
	childproc.DieWithParent(p.cmd) // should the harness die without stopping it
	if err := p.cmd.Start(); err != nil {
		logFile.Close()
		return nil, err
	}
	go func() {
		p.waitErr = p.cmd.Wait()
		logFile.Close()
		close(p.exited)
	}()
	return p, nil
}

// startServer runs `pixgate serve` with the memory store, the sandbox, no rate limit and the
// given accounts, GOMAXPROCS as the machine (extra settings after those, so they win), and
// waits until /healthz answers.
func startServer(ctx context.Context, bin, logDir string, extra []string, accounts ...account) (*server, error) {
	addr, err := freeLoopbackAddr()
	if err != nil {
		return nil, err
	}
	var seeds, shownSeeds []string
	for _, a := range accounts {
		seeds = append(seeds, a.name+":"+a.clientID+":"+a.secret)
		shownSeeds = append(shownSeeds, a.name+":"+a.clientID+":<52 random characters>")
	}
	settings := []string{
		fmt.Sprintf("GOMAXPROCS=%d", runtime.NumCPU()),
		"PIXGATE_ADDR=" + addr,
		"PIXGATE_SANDBOX=true",
		"PIXGATE_STORE=memory",
		"PIXGATE_RATE_LIMIT_RPS=0",
	}
	// An extra setting replaces the default of the same key (exec keeps the last one anyway;
	// the report should not show both).
	for _, kv := range extra {
		k, _, _ := strings.Cut(kv, "=")
		settings = slices.DeleteFunc(settings, func(s string) bool { return strings.HasPrefix(s, k+"=") })
		settings = append(settings, kv)
	}
	shown := append([]string{}, settings...)
	for i, kv := range shown {
		if strings.HasPrefix(kv, "PIXGATE_CREDENTIAL_KEY=") {
			shown[i] = "PIXGATE_CREDENTIAL_KEY=<64 random hex digits>"
		}
	}
	shown = append(shown, "PIXGATE_SEED_CLIENTS='"+strings.Join(shownSeeds, ";")+"'")
	settings = append(settings, "PIXGATE_SEED_CLIENTS="+strings.Join(seeds, ";"))
	p, err := startProcess(ctx, "pixgate", bin, []string{"serve"}, settings, logDir, "http://"+addr, "/healthz")
	if err != nil {
		return nil, err
	}
	return &server{process: p, env: shown}, nil
}

// startBare runs the bare baseline answering body, as startServer runs pixgate.
func startBare(ctx context.Context, bin, logDir string, body []byte) (*process, error) {
	addr, err := freeLoopbackAddr()
	if err != nil {
		return nil, err
	}
	bodyFile := filepath.Join(logDir, "bare-body.json")
	if err := os.WriteFile(bodyFile, body, 0o600); err != nil {
		return nil, err
	}
	return startProcess(ctx, "bare", bin, []string{"-addr", addr, "-body", bodyFile},
		[]string{fmt.Sprintf("GOMAXPROCS=%d", runtime.NumCPU())}, logDir, "http://"+addr, "/transaction/fixed")
}

// stop ends the process with SIGTERM (then SIGKILL after 10 s) and waits for it.
func (p *process) stop() error {
	select {
	case <-p.exited:
		return p.waitErr
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(10 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.exited
	}
	return p.waitErr
}

// clockTicks is USER_HZ, the unit of the CPU times of /proc/<pid>/stat: 100 on every Linux
// architecture Go supports.
const clockTicks = 100

// cpu is the CPU time (user and system) the process and its children have used so far, from
// /proc (treeCPU); 0 when unknown (a nil process, or no /proc).
func (p *process) cpu() time.Duration {
	if p == nil {
		return 0
	}
	return treeCPU(p.cmd.Process.Pid, 0)
}

// treeCPU is the CPU time of process pid and of its live children, theirs included (pixgate
// serve draws its QR images in a child process), read from /proc: utime and stime of each, and
// cutime and cstime for children that ended and were waited for. A process that is gone
// counts 0.
func treeCPU(pid, depth int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	s := string(b)
	if i := strings.LastIndexByte(s, ')'); i >= 0 {
		s = s[i+1:]
	}
	// After the command: state is field 3, utime field 14, stime 15, cutime 16, cstime 17.
	f := strings.Fields(s)
	if len(f) < 15 {
		return 0
	}
	var ticks int64
	for _, field := range f[11:15] {
		n, _ := strconv.ParseInt(field, 10, 64)
		ticks += n
	}
	total := time.Duration(ticks) * time.Second / clockTicks
	if depth < 3 {
		for _, child := range childPIDs(pid) {
			total += treeCPU(child, depth+1)
		}
	}
	return total
}

// childPIDs lists the live children of pid, from each of its threads' children file.
func childPIDs(pid int) []int {
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil {
		return nil
	}
	var out []int
	for _, t := range tasks {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/children", pid, t.Name()))
		if err != nil {
			continue
		}
		for _, c := range strings.Fields(string(b)) {
			if n, err := strconv.Atoi(c); err == nil {
				out = append(out, n)
			}
		}
	}
	return out
}

// alive reports an error when the process has exited.
func (p *process) alive() error {
	select {
	case <-p.exited:
		return fmt.Errorf("%s exited during the run (%v); its log: %s", p.name, p.waitErr, p.tail())
	default:
		return nil
	}
}

// tail is the end of the process's log, for error messages.
func (p *process) tail() string {
	b, _ := os.ReadFile(p.logPath)
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return string(b)
}

// setupClient is the HTTP client of everything that is not measured (tokens, seeding).
var setupClient = &http.Client{
	Timeout:   30 * time.Second,
	Transport: &http.Transport{MaxIdleConnsPerHost: 64, Proxy: nil},
}

// token obtains an access token for a with client credentials (HTTP Basic).
func (s *server) token(ctx context.Context, a account) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.base+"/auth/token",
		strings.NewReader(url.Values{"grant_type": {"client_credentials"}}.Encode()))
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(a.clientID, a.secret)
	res, err := setupClient.Do(req)
	if err != nil {
		return "", err
	}
	defer res.Body.Close()
	var body struct {
		AccessToken string `json:"access_token"`
	}
	if err := json.NewDecoder(res.Body).Decode(&body); err != nil || res.StatusCode != http.StatusOK || body.AccessToken == "" {
		return "", fmt.Errorf("token for %s: status %d, %v", a.clientID, res.StatusCode, err)
	}
	return body.AccessToken, nil
}

// createMany POSTs n transactions with workers requests in flight, body(i) for the i-th, and
// returns their ids in order. It is the seeding path, not a measurement.
func (s *server) createMany(ctx context.Context, token string, n, workers int, body func(i int) []byte) ([]string, error) {
	ids := make([]string, n)
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for range workers {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= n || ctx.Err() != nil {
					return
				}
				id, err := s.create(ctx, token, body(i))
				if err != nil {
					errs <- err
					next.Store(int64(n)) // stop the others
					return
				}
				ids[i] = id
			}
		})
	}
	wg.Wait()
	close(errs)
	if err := errors.Join(<-errs, ctx.Err()); err != nil {
		return nil, err
	}
	return ids, nil
}

func (s *server) create(ctx context.Context, token string, body []byte) (string, error) {
	res, raw, err := s.do(ctx, http.MethodPost, "/transaction", token, body)
	if err != nil {
		return "", err
	}
	if res.StatusCode != http.StatusCreated {
		return "", fmt.Errorf("POST /transaction: status %d: %.300s", res.StatusCode, raw)
	}
	var created struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(raw, &created); err != nil || created.ID == "" {
		return "", fmt.Errorf("POST /transaction: no id in %.300s", raw)
	}
	return created.ID, nil
}

// do sends one request and reads its whole answer.
func (s *server) do(ctx context.Context, method, path, token string, body []byte) (*http.Response, []byte, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, s.base+path, rd)
	if err != nil {
		return nil, nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := setupClient.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	return res, raw, err
}
