package e2e_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/moby/moby/client"
	"github.com/testcontainers/testcontainers-go"
	tcnetwork "github.com/testcontainers/testcontainers-go/network"

	"github.com/pixgate/pixgate/test/testdb"
)

// The fixed parts of every stack.
const (
	apiPort = "8080/tcp"
	dbAlias = "db"

	// The seeded merchant account (PIXGATE_SEED_CLIENTS); the secret is for tests only.
	clientID     = "e2e-merchant"
	clientSecret = "e2e-merchant-secret-for-tests-only-000001"

	// The money of the suites: a fixed fee of 100 cents on each paid transaction, 150 on each
	// withdrawal, so that balances are easy to follow.
	txFee = 100
	wdFee = 150

	// validCPF is a document with correct check digits.
	validCPF = "529.982.247-25"
)

// runTag keeps external codes and idempotency keys of one run apart from another's.
var runTag = func() string {
	b := make([]byte, 3)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}()

// requireDocker skips the test when no Docker engine answers, or fails it when
// PIXGATE_TEST_REQUIRE_DOCKER=1: pixgate runs in a container, there is no fallback.
func requireDocker(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := testdb.DockerAvailable(ctx); err != nil {
		if os.Getenv(testdb.EnvRequireDocker) == "1" {
			t.Fatalf("no Docker engine answers (%v) and %s=1", err, testdb.EnvRequireDocker)
		}
		t.Skipf("no Docker engine answers (%v): the end-to-end suites run pixgate in a container", err)
	}
}

// pixgateImage is the image of cmd/pixgate (a static binary FROM scratch), built once per test
// binary.
func pixgateImage(t *testing.T) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	root, err := testdb.RootModuleDir()
	if err != nil {
		t.Fatal(err)
	}
	tag, err := testdb.Image(ctx, "pixgate-test/pixgate", root, "./cmd/pixgate")
	if err != nil {
		t.Fatalf("build the pixgate image: %v", err)
	}
	return tag
}

// stack is a Docker network of the test's own with a database container on it (reachable as
// "db") and the settings every pixgate container of the test shares.
type stack struct {
	t       *testing.T
	image   string
	network *testcontainers.DockerNetwork
	db      *testdb.Server
	env     map[string]string
}

// newStack starts the network and the database; startPixgate adds pixgate containers.
func newStack(t *testing.T) *stack {
	t.Helper()
	requireDocker(t)
	image := pixgateImage(t)
	nw := testdb.NewNetwork(t, "e2e-network")
	db := testdb.Start(t, testdb.Options{Restartable: true, Network: nw.Name, Alias: dbAlias})
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	return &stack{t: t, image: image, network: nw, db: db, env: map[string]string{
		"PIXGATE_ADDR":                   ":8080",
		"PIXGATE_LOG_LEVEL":              "warn",
		"PIXGATE_STORE":                  "mongo",
		"PIXGATE_MONGODB_URI":            db.NetworkURI(),
		"PIXGATE_MONGODB_DATABASE":       testdb.DatabaseName(t),
		"PIXGATE_CREDENTIAL_KEY":         hex.EncodeToString(key),
		"PIXGATE_SEED_CLIENTS":           "E2E merchant:" + clientID + ":" + clientSecret,
		"PIXGATE_SANDBOX":                "true",
		"PIXGATE_SANDBOX_SETTLE_SECONDS": "1",
		"PIXGATE_RATE_LIMIT_RPS":         "0",
		"PIXGATE_FEE_FIXED_CENTS":        fmt.Sprint(txFee),
		"PIXGATE_FEE_BASIS_POINTS":       "0",
		"PIXGATE_WITHDRAWAL_FEE_CENTS":   fmt.Sprint(wdFee),
	}}
}

// gateway is the address of the network's gateway: the test process, as the containers on
// the network reach it.
func (s *stack) gateway() string {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cli, err := testcontainers.NewDockerClientWithOpts(ctx)
	if err != nil {
		s.t.Fatal(err)
	}
	defer cli.Close()
	res, err := cli.NetworkInspect(ctx, s.network.ID, client.NetworkInspectOptions{})
	if err != nil {
		s.t.Fatalf("inspect the network: %v", err)
	}
	for _, c := range res.Network.IPAM.Config {
		if c.Gateway.IsValid() && c.Gateway.Is4() {
			return c.Gateway.String()
		}
	}
	s.t.Fatalf("network %s has no IPv4 gateway: %+v", s.network.Name, res.Network.IPAM.Config)
	return ""
}

// pixgate is one pixgate container of a stack, and a client of its API logged in as the
// seeded merchant.
type pixgate struct {
	t *testing.T // the test its helpers fail; on gives a subtest its own
	*instance
}

// instance is the container and the client's state, shared by the pixgate values of a test
// and its subtests.
type instance struct {
	alias string
	ctr   *testcontainers.DockerContainer
	hc    *http.Client

	mu    sync.Mutex
	base  string // http://host:port, as the test process reaches the API
	token string
}

// on is p for a subtest: its helpers fail t.
func (p *pixgate) on(t *testing.T) *pixgate { return &pixgate{t: t, instance: p.instance} }

// startPixgate runs a pixgate container on the stack's network with the stack's settings
// and extra ones, waits until /readyz answers 200 and gets a token.
func (s *stack) startPixgate(alias string, extra map[string]string, opts ...testcontainers.ContainerCustomizer) *pixgate {
	t := s.t
	t.Helper()
	env := map[string]string{}
	for k, v := range s.env {
		env[k] = v
	}
	for k, v := range extra {
		env[k] = v
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	all := append([]testcontainers.ContainerCustomizer{
		testcontainers.WithExposedPorts(apiPort),
		testcontainers.WithEnv(env),
		testdb.WithLabels("e2e-pixgate"),
		tcnetwork.WithNetworkName([]string{alias}, s.network.Name),
	}, opts...)
	ctr, err := testcontainers.Run(ctx, s.image, all...)
	testcontainers.CleanupContainer(t, ctr)
	if err != nil {
		t.Fatalf("run pixgate: %v", err)
	}
	p := &pixgate{t: t, instance: &instance{alias: alias, ctr: ctr, hc: &http.Client{
		Timeout:   30 * time.Second,
		Transport: &http.Transport{MaxIdleConnsPerHost: 64, IdleConnTimeout: 30 * time.Second},
	}}}
	t.Cleanup(func() {
		if t.Failed() {
			p.logTail()
		}
	})
	p.waitReady(ctx)
	p.login()
	return p
}

// waitReady waits, for two minutes at most, until the container's /readyz answers 200, and
// notes where the API answers (its published port changes at every start).
func (p *pixgate) waitReady(ctx context.Context) {
	p.t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	last := "no answer yet"
	for time.Now().Before(deadline) {
		state, err := p.ctr.State(ctx)
		if err == nil && !state.Running && state.Status != "created" {
			p.t.Fatalf("pixgate %s exited (code %d, %s) instead of serving:\n%s", p.alias, state.ExitCode, state.Status, p.logs(3000))
		}
		if host, port, err := testdb.Endpoint(ctx, p.ctr, apiPort); err != nil {
			last = err.Error()
		} else {
			base := "http://" + host + ":" + port
			res, err := p.hc.Get(base + "/readyz")
			if err == nil {
				io.Copy(io.Discard, res.Body)
				res.Body.Close()
				if res.StatusCode == http.StatusOK {
					p.mu.Lock()
					p.base = base
					p.mu.Unlock()
					return
				}
				last = fmt.Sprintf("/readyz answered %d", res.StatusCode)
			} else {
				last = err.Error()
			}
		}
		time.Sleep(250 * time.Millisecond)
	}
	p.t.Fatalf("pixgate %s not ready after 2 minutes (%s):\n%s", p.alias, last, p.logs(3000))
}

// login gets a token for the seeded merchant with client credentials.
func (p *pixgate) login() {
	p.t.Helper()
	p.loginAs(clientID, clientSecret)
}

// as is a client of p's container logged in as another account's client (one of
// PIXGATE_SEED_CLIENTS), for tests with several merchants.
func (p *pixgate) as(id, secret string) *pixgate {
	p.t.Helper()
	m := &pixgate{t: p.t, instance: &instance{alias: p.alias, ctr: p.ctr, hc: p.hc, base: p.url("")}}
	m.loginAs(id, secret)
	return m
}

// loginAs gets a token for a client with client credentials.
func (p *pixgate) loginAs(id, secret string) {
	p.t.Helper()
	form := url.Values{"grant_type": {"client_credentials"}, "client_id": {id}, "client_secret": {secret}}
	res, err := p.hc.PostForm(p.url("/auth/token"), form)
	if err != nil {
		p.t.Fatalf("POST /auth/token: %v", err)
	}
	defer res.Body.Close()
	var tok struct {
		AccessToken string `json:"access_token"`
		TokenType   string `json:"token_type"`
	}
	raw, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusOK || json.Unmarshal(raw, &tok) != nil || tok.AccessToken == "" || tok.TokenType != "Bearer" {
		p.t.Fatalf("POST /auth/token: %d %s", res.StatusCode, raw)
	}
	p.mu.Lock()
	p.token = tok.AccessToken
	p.mu.Unlock()
}

func (p *pixgate) url(path string) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.base + path
}

// stop stops pixgate with SIGTERM (its graceful shutdown), keeping the container.
func (p *pixgate) stop() {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	timeout := 20 * time.Second
	if err := p.ctr.Stop(ctx, &timeout); err != nil {
		p.t.Fatalf("stop pixgate: %v", err)
	}
	if state, err := p.ctr.State(ctx); err == nil && state.ExitCode != 0 {
		p.t.Errorf("pixgate exited with code %d after SIGTERM, want 0", state.ExitCode)
	}
}

// kill sends SIGKILL to pixgate (docker kill --signal KILL) and waits until it is gone.
func (p *pixgate) kill() {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cli, err := testcontainers.NewDockerClientWithOpts(ctx)
	if err != nil {
		p.t.Fatal(err)
	}
	defer cli.Close()
	if _, err := cli.ContainerKill(ctx, p.ctr.GetContainerID(), client.ContainerKillOptions{Signal: "KILL"}); err != nil {
		p.t.Fatalf("docker kill --signal KILL: %v", err)
	}
	for {
		state, err := p.ctr.State(ctx)
		if err != nil {
			p.t.Fatalf("state after the kill: %v", err)
		}
		if !state.Running {
			return
		}
		select {
		case <-ctx.Done():
			p.t.Fatal("pixgate still runs a minute after SIGKILL")
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// start starts the stopped or killed container again, waits until it is ready and gets a
// fresh token (the signing key is generated at every start).
func (p *pixgate) start() {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if err := p.ctr.Start(ctx); err != nil {
		p.t.Fatalf("start pixgate again: %v", err)
	}
	p.waitReady(ctx)
	p.login()
}

func (p *pixgate) logs(keep int) string {
	rc, err := p.ctr.Logs(context.Background())
	if err != nil {
		return "(no logs: " + err.Error() + ")"
	}
	defer rc.Close()
	b, _ := io.ReadAll(rc)
	if len(b) > keep {
		b = b[len(b)-keep:]
	}
	return string(b)
}

// logLines are the lines of pixgate's log that contain s (a request id, say).
func (p *pixgate) logLines(s string) []string {
	var out []string
	for _, line := range strings.Split(p.logs(1<<30), "\n") {
		if strings.Contains(line, s) {
			out = append(out, line)
		}
	}
	return out
}

func (p *pixgate) logTail() {
	p.t.Logf("last log of pixgate %s:\n%s", p.alias, p.logs(6000))
}

// reply is an answer of the API.
type reply struct {
	status int
	header http.Header
	body   []byte
}

func (r reply) String() string { return fmt.Sprintf("%d %s", r.status, bytes.TrimSpace(r.body)) }

// object decodes a JSON object answer.
func (r reply) object(t *testing.T) map[string]any {
	t.Helper()
	m, err := r.decode()
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// decode decodes a JSON object answer, for goroutines that may not fail the test at once.
func (r reply) decode() (map[string]any, error) {
	var m map[string]any
	if err := json.Unmarshal(r.body, &m); err != nil {
		return nil, fmt.Errorf("answer is not a JSON object (%v): %s", err, r)
	}
	return m, nil
}

// problem is the code of a problem answer, or "" when the answer is none.
func (r reply) problem() string {
	if !strings.HasPrefix(r.header.Get("Content-Type"), "application/problem+json") {
		return ""
	}
	var p struct {
		Code string `json:"code"`
	}
	_ = json.Unmarshal(r.body, &p)
	return p.Code
}

// call sends a request with the merchant's token; body is sent as is (a string) or as JSON.
// headers are name, value pairs; an "Authorization" among them replaces the token (empty:
// none). Safe for concurrent use; transport errors are returned.
func (p *pixgate) call(ctx context.Context, method, path string, body any, headers ...string) (reply, error) {
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	default:
		raw, err := json.Marshal(b)
		if err != nil {
			return reply{}, err
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequestWithContext(ctx, method, p.url(path), rd)
	if err != nil {
		return reply{}, err
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	p.mu.Lock()
	req.Header.Set("Authorization", "Bearer "+p.token)
	p.mu.Unlock()
	for i := 0; i+1 < len(headers); i += 2 {
		if headers[i] == "Authorization" && headers[i+1] == "" {
			req.Header.Del("Authorization")
			continue
		}
		req.Header.Set(headers[i], headers[i+1])
	}
	res, err := p.hc.Do(req)
	if err != nil {
		return reply{}, err
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	if err != nil {
		return reply{}, err
	}
	return reply{status: res.StatusCode, header: res.Header, body: raw}, nil
}

// do is call for the test's own goroutine: a transport error fails the test.
func (p *pixgate) do(method, path string, body any, headers ...string) reply {
	p.t.Helper()
	r, err := p.call(context.Background(), method, path, body, headers...)
	if err != nil {
		p.t.Fatalf("%s %s: %v", method, path, err)
	}
	return r
}

// want sends a request and fails the test unless it answers status; it returns the answer.
func (p *pixgate) want(status int, method, path string, body any, headers ...string) reply {
	p.t.Helper()
	r := p.do(method, path, body, headers...)
	if r.status != status {
		p.t.Fatalf("%s %s: %s, want %d", method, path, r, status)
	}
	return r
}

// chargeBody is a creation request of amount, findable by externalCode and by the customer's
// document.
func chargeBody(amount int64, externalCode string) map[string]any {
	return map[string]any{
		"amount": amount, "paymentMethod": "PIX", "externalCode": externalCode,
		"customer": map[string]any{"name": "Maria da Silva", "email": "maria@example.com", "document": validCPF},
		"items":    []any{map[string]any{"title": "Camiseta", "unitPrice": amount}},
		"pix":      map[string]any{"expirationSeconds": 3600},
	}
}

// charge creates a transaction and returns its 201 body.
func (p *pixgate) charge(amount int64, externalCode string) map[string]any {
	p.t.Helper()
	r := p.want(http.StatusCreated, "POST", "/transaction", chargeBody(amount, externalCode))
	m := r.object(p.t)
	if id, _ := m["id"].(string); id == "" || r.header.Get("Location") != "/transaction/"+id || m["status"] != "PIX_QRCODE_GENERATED" {
		p.t.Fatalf("POST /transaction: Location %q, body %s", r.header.Get("Location"), r.body)
	}
	return m
}

// sandbox sends POST /sandbox/{kind}/{id}/{step}, wants 200 and returns the resource.
func (p *pixgate) sandbox(kind, id, step string) map[string]any {
	p.t.Helper()
	return p.want(http.StatusOK, "POST", "/sandbox/"+kind+"/"+id+"/"+step, nil).object(p.t)
}

func withdrawalBody(amount int64) map[string]any {
	return map[string]any{"amount": amount, "pixKey": map[string]any{"key": "maria@example.com", "type": "EMAIL"}}
}

// balance is GET /balance as [available, blocked, pending].
func (p *pixgate) balance() [3]int64 {
	p.t.Helper()
	m := p.want(http.StatusOK, "GET", "/balance", nil).object(p.t)
	return [3]int64{cents(m["available"]), cents(m["blocked"]), cents(m["pending"])}
}

func (p *pixgate) wantBalance(step string, available, blocked, pending int64) {
	p.t.Helper()
	if got, want := p.balance(), [3]int64{available, blocked, pending}; got != want {
		p.t.Fatalf("%s: balance [available blocked pending] = %v, want %v", step, got, want)
	}
}

// waitBalance polls GET /balance until it is [available blocked pending], for within at most.
// A change made in the background (the sandbox settling a refund) is visible in its resource a
// moment before its entries are (the MongoDB adapter posts them right after storing it): a
// test that waited for a status waits for the balance too.
func (p *pixgate) waitBalance(step string, available, blocked, pending int64, within time.Duration) {
	p.t.Helper()
	want := [3]int64{available, blocked, pending}
	eventually(p.t, within, step, func() (bool, string) {
		got := p.balance()
		return got == want, fmt.Sprintf("balance [available blocked pending] = %v, want %v", got, want)
	})
}

// waitStatus polls GET path until the resource's status is status, for timeout at most.
func (p *pixgate) waitStatus(path, status string, timeout time.Duration) map[string]any {
	p.t.Helper()
	var last map[string]any
	eventually(p.t, timeout, path+" to be "+status, func() (bool, string) {
		last = p.want(http.StatusOK, "GET", path, nil).object(p.t)
		return last["status"] == status, fmt.Sprint("status ", last["status"])
	})
	return last
}

func cents(v any) int64 {
	f, _ := v.(float64)
	return int64(f)
}

// eventually polls cond every 200 ms until it holds, and fails the test after within.
func eventually(t *testing.T, within time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		ok, state := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("still waiting for %s after %v: %s", what, within, state)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
