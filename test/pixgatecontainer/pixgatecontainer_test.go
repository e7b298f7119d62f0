package pixgatecontainer_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/moby/moby/client"
	"github.com/testcontainers/testcontainers-go"
	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"

	"github.com/pixgate/pixgate/test/pixgatecontainer"
	"github.com/pixgate/pixgate/test/testdb"
)

// envRequireDocker set to 1 makes a missing Docker engine fail the tests instead of skipping
// them (CI sets it, so that the container path is never skipped silently).
const envRequireDocker = "PIXGATE_TEST_REQUIRE_DOCKER"

// TestMain runs the tests as every suite of this module does (testdb.Main: no reaper, since
// its image cannot be pulled, and the binary's containers removed should it time out or be
// interrupted), then removes the test image.
func TestMain(m *testing.M) {
	testdb.Main(m, func() {
		if err := removeImage(); err != nil {
			fmt.Fprintln(os.Stderr, "removing the test image:", err)
		}
	})
}

// requireDocker skips the test when no Docker engine answers, or fails it under
// PIXGATE_TEST_REQUIRE_DOCKER=1.
func requireDocker(t *testing.T) {
	t.Helper()
	dockerOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		cli, err := testcontainers.NewDockerClientWithOpts(ctx)
		if err != nil {
			dockerErr = err
			return
		}
		defer cli.Close()
		_, dockerErr = cli.Ping(ctx, client.PingOptions{})
	})
	if dockerErr != nil {
		if os.Getenv(envRequireDocker) == "1" {
			t.Fatalf("no Docker engine answers (%v) and %s=1", dockerErr, envRequireDocker)
		}
		t.Skipf("no Docker engine answers: %v", dockerErr)
	}
}

var (
	dockerOnce sync.Once
	dockerErr  error
)

// The image of the test binary: pixgate's Dockerfile.scratch, built once under a tag of its
// own and removed by TestMain.
var (
	imageOnce sync.Once
	imageTag  string
	imageErr  error
)

func pixgateImage(t *testing.T) string {
	t.Helper()
	requireDocker(t)
	imageOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		start := time.Now()
		if imageTag, imageErr = buildImage(ctx); imageErr != nil {
			return
		}
		built := time.Since(start)
		imageErr = pointAtReachableHost(ctx, imageTag)
		t.Logf("built %s in %s; published ports probed in %s (TESTCONTAINERS_HOST_OVERRIDE=%q)", imageTag,
			built.Round(time.Millisecond), (time.Since(start) - built).Round(time.Millisecond), os.Getenv("TESTCONTAINERS_HOST_OVERRIDE"))
	})
	if imageErr != nil {
		t.Fatal(imageErr)
	}
	return imageTag
}

// buildImage builds Dockerfile.scratch as `make image` does: a static binary, the host's CA
// bundle and the unprivileged user, FROM scratch, so that no registry is needed.
func buildImage(ctx context.Context) (string, error) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		return "", err
	}
	dockerfile, err := os.ReadFile(filepath.Join(root, "Dockerfile.scratch"))
	if err != nil {
		return "", fmt.Errorf("pixgate's Dockerfile.scratch: %w", err)
	}
	work, err := os.MkdirTemp("", "pixgatecontainer-image-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(work)

	tool, err := exec.LookPath("go")
	if err != nil {
		tool = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	build := exec.CommandContext(ctx, tool, "build", "-trimpath", "-ldflags=-s -w", "-o", filepath.Join(work, "pixgate"), "./cmd/pixgate")
	build.Dir = root
	build.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux")
	if out, err := build.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./cmd/pixgate: %w\n%s", err, out)
	}
	ca, err := os.ReadFile("/etc/ssl/certs/ca-certificates.crt")
	if err != nil {
		return "", fmt.Errorf("the host's CA bundle: %w", err)
	}
	files := map[string][]byte{
		"Dockerfile":          dockerfile,
		"ca-certificates.crt": ca,
		"passwd":              []byte("pixgate:x:65532:65532:pixgate:/nonexistent:/sbin/nologin\n"),
		"group":               []byte("pixgate:x:65532:\n"),
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(work, name), content, 0o644); err != nil {
			return "", err
		}
	}

	var suffix [6]byte
	_, _ = rand.Read(suffix[:])
	p, err := testcontainers.NewDockerProvider()
	if err != nil {
		return "", err
	}
	defer p.Close()
	tag, err := p.BuildImage(ctx, &testcontainers.ContainerRequest{FromDockerfile: testcontainers.FromDockerfile{
		Context: work, Dockerfile: "Dockerfile", Repo: "pixgate-test/pixgatecontainer", Tag: hex.EncodeToString(suffix[:]),
		KeepImage: true, BuildLogWriter: io.Discard,
	}})
	if err != nil {
		return "", fmt.Errorf("docker build Dockerfile.scratch: %w", err)
	}
	return tag, nil
}

func removeImage() error {
	if imageTag == "" {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cli, err := testcontainers.NewDockerClientWithOpts(ctx)
	if err != nil {
		return err
	}
	defer cli.Close()
	_, err = cli.ImageRemove(ctx, imageTag, client.ImageRemoveOptions{Force: true, PruneChildren: true})
	return err
}

// pointAtReachableHost makes sure testcontainers reaches published ports. Inside a container
// it guesses the host to be the Docker network's gateway, or the default gateway when the
// network lists none; where the Docker engine runs beside the tests (this project's CI) that
// guess answers nothing, and the loopback does. A container of the image tells which: the
// first of the guess and the loopback where /healthz answers wins, and the loopback is set as
// TESTCONTAINERS_HOST_OVERRIDE (read by every container started afterwards). An override
// already set is left alone.
func pointAtReachableHost(ctx context.Context, img string) error {
	if os.Getenv("TESTCONTAINERS_HOST_OVERRIDE") != "" {
		return nil
	}
	probe, err := testcontainers.Run(ctx, img, testcontainers.WithExposedPorts(pixgatecontainer.Port),
		testcontainers.WithEnv(map[string]string{"PIXGATE_SANDBOX": "true"}), testdb.WithLabels("pixgatecontainer-probe"))
	defer func() { _ = testcontainers.TerminateContainer(probe) }()
	if err != nil {
		return fmt.Errorf("probe container: %w", err)
	}
	guess, err := probe.Host(ctx)
	if err != nil {
		return err
	}
	port, err := probe.MappedPort(ctx, pixgatecontainer.Port)
	if err != nil {
		return err
	}
	hc := &http.Client{Timeout: time.Second}
	answers := func(host string) bool {
		res, err := hc.Get("http://" + net.JoinHostPort(host, port.Port()) + "/healthz")
		if err != nil {
			return false
		}
		res.Body.Close()
		return res.StatusCode == http.StatusOK
	}
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if answers(guess) {
			return nil
		}
		if answers("127.0.0.1") {
			return os.Setenv("TESTCONTAINERS_HOST_OVERRIDE", "127.0.0.1")
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("the probe container's port %s answers neither on %s nor on the loopback", port.Port(), guess)
}

// api is an *http.Client of one account against the container.
type api struct {
	t    *testing.T
	base string
	http *http.Client
}

func (a api) do(method, path, body string) (int, map[string]any) {
	a.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, a.base+path, rd)
	if err != nil {
		a.t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := a.http.Do(req)
	if err != nil {
		a.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	if err != nil {
		a.t.Fatal(err)
	}
	var m map[string]any
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &m); err != nil {
			a.t.Fatalf("%s %s answered %d with a body that is not a JSON object: %s", method, path, res.StatusCode, raw)
		}
	}
	return res.StatusCode, m
}

func TestRunPaysATransactionThroughTheSandbox(t *testing.T) {
	img := pixgateImage(t)
	t.Parallel()
	ctx := context.Background()
	const secret = "loja-exemplo-secret-0123456789-abcdef"
	ctr, err := pixgatecontainer.Run(ctx, img, pixgatecontainer.WithClient("Loja Exemplo", "loja-exemplo", secret), testdb.WithLabels("pixgatecontainer"))
	testcontainers.CleanupContainer(t, ctr)
	if err != nil {
		t.Fatal(err)
	}
	base, err := ctr.BaseURL(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ts := ctr.TokenSource(ctx)

	t.Run("the token source gets a bearer token that expires in an hour, not in decades", func(t *testing.T) {
		tok, err := ts.Token()
		if err != nil {
			t.Fatal(err)
		}
		if tok.AccessToken == "" || !strings.EqualFold(tok.TokenType, "Bearer") {
			t.Fatalf("token %q of type %q", tok.AccessToken, tok.TokenType)
		}
		if left := time.Until(tok.Expiry); left < 59*time.Minute || left > time.Hour {
			t.Fatalf("the token expires in %s, want an hour (PIXGATE_TOKEN_TTL's default)", left)
		}
	})

	a := api{t: t, base: base, http: oauth2.NewClient(ctx, ts)}
	status, created := a.do("POST", "/transaction", `{"amount": 2590, "paymentMethod": "PIX", "externalCode": "pedido-1",
		"customer": {"name": "Maria da Silva", "email": "maria@example.com", "document": "529.982.247-25"},
		"items": [{"title": "Camiseta", "unitPrice": 2590}], "pix": {"expirationSeconds": 900}}`)
	if status != http.StatusCreated {
		t.Fatalf("POST /transaction: %d %v", status, created)
	}
	id, _ := created["id"].(string)
	pix, _ := created["pixResponse"].(map[string]any)
	if uri, _ := pix["uri"].(string); id == "" || created["status"] != "PIX_QRCODE_GENERATED" || uri == "" {
		t.Fatalf("created %v", created)
	}
	if status, paid := a.do("POST", "/sandbox/transaction/"+id+"/pay", ""); status != http.StatusOK {
		t.Fatalf("POST /sandbox/transaction/{id}/pay: %d %v", status, paid)
	}
	status, got := a.do("GET", "/transaction/"+id, "")
	if status != http.StatusOK || got["status"] != "PAID" || got["amount"] != float64(2590) {
		t.Fatalf("GET /transaction/{id}: %d status %v amount %v", status, got["status"], got["amount"])
	}
}

func TestRunSeedsEveryClientWithItsScopes(t *testing.T) {
	img := pixgateImage(t)
	t.Parallel()
	ctx := context.Background()
	const writer, reader = "writer-secret-0123456789-abcdefghijklm", "reader-secret-0123456789-abcdefghijklm"
	ctr, err := pixgatecontainer.Run(ctx, img, testdb.WithLabels("pixgatecontainer"),
		pixgatecontainer.WithClient("Escritor", "escritor", writer),
		pixgatecontainer.WithClient("Leitor", "leitor", reader, "transaction:read"),
		pixgatecontainer.WithEnv(map[string]string{"PIXGATE_RATE_LIMIT_RPS": "0"}))
	testcontainers.CleanupContainer(t, ctr)
	if err != nil {
		t.Fatal(err)
	}
	base, err := ctr.BaseURL(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := ctr.Clients(); len(got) != 2 || got[1].ID != "leitor" || len(got[1].Scopes) != 1 {
		t.Fatalf("Clients() = %+v", got)
	}

	t.Run("the image runs as the unprivileged user", func(t *testing.T) {
		info, err := ctr.Inspect(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if info.Config.User != "65532:65532" {
			t.Fatalf("the container runs as %q, want 65532:65532", info.Config.User)
		}
	})
	t.Run("a reader may list but not create", func(t *testing.T) {
		a := api{t: t, base: base, http: oauth2.NewClient(ctx, ctr.ClientTokenSource(ctx, "leitor", reader))}
		if status, _ := a.do("GET", "/transaction", ""); status != http.StatusOK {
			t.Fatalf("GET /transaction: %d", status)
		}
		if status, body := a.do("POST", "/transaction", `{"amount": 100, "paymentMethod": "PIX", "pix": {}}`); status != http.StatusForbidden || body["code"] != "insufficient_scope" {
			t.Fatalf("POST /transaction: %d %v", status, body)
		}
	})
	t.Run("the writer, TokenSource's account, creates", func(t *testing.T) {
		a := api{t: t, base: base, http: oauth2.NewClient(ctx, ctr.TokenSource(ctx))}
		if status, body := a.do("POST", "/transaction", `{"amount": 100, "paymentMethod": "PIX", "pix": {}}`); status != http.StatusCreated {
			t.Fatalf("POST /transaction: %d %v", status, body)
		}
	})
	t.Run("a wrong secret is an OAuth invalid_client error", func(t *testing.T) {
		_, err := ctr.ClientTokenSource(ctx, "escritor", "not-the-secret-0123456789-abcdefghijk").Token()
		var re *oauth2.RetrieveError
		if !errors.As(err, &re) || re.ErrorCode != "invalid_client" || re.Response.StatusCode != http.StatusUnauthorized {
			t.Fatalf("err = %v", err)
		}
	})
}

func TestWithClientRefusesWhatPixgateWouldRefuse(t *testing.T) {
	cases := []struct {
		name string
		opt  pixgatecontainer.Option
	}{
		{"a secret shorter than 32 characters", pixgatecontainer.WithClient("Loja", "loja", "short")},
		{"a client id with a colon", pixgatecontainer.WithClient("Loja", "lo:ja", strings.Repeat("s", 32))},
		{"a name with a semicolon", pixgatecontainer.WithClient("Lo;ja", "loja", strings.Repeat("s", 32))},
		{"a secret with a colon", pixgatecontainer.WithClient("Loja", "loja", strings.Repeat("s", 32)+":x")},
		{"a scope with a comma", pixgatecontainer.WithClient("Loja", "loja", strings.Repeat("s", 32), "a,b")},
	}
	for _, c := range cases {
		t.Run(c.name+" fails Run before any container starts", func(t *testing.T) {
			ctr, err := pixgatecontainer.Run(context.Background(), "pixgate:never-started", c.opt)
			if err == nil || ctr != nil {
				t.Fatalf("Run = %v, %v; want an error and no container", ctr, err)
			}
			if strings.Contains(err.Error(), strings.Repeat("s", 32)) {
				t.Fatalf("the error shows the secret: %v", err)
			}
		})
	}
}

// pixgateTokenEndpoint answers token requests as pixgate does: expires_in is the Unix time of
// expiry, expires_in_sec the lifetime.
func pixgateTokenEndpoint(t *testing.T, lifetime time.Duration) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		_ = json.NewEncoder(w).Encode(map[string]any{
			"access_token": "header.payload.signature", "token_type": "Bearer", "refresh_expires_in": 0,
			"not-before-policy": 0, "scope": "transaction:read", "expires_in": time.Now().Add(lifetime).Unix(),
			"expires_in_sec": int64(lifetime / time.Second),
		})
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestFixExpiryReadsTheLifetimeWhereOAuthLibrariesReadAUnixTime(t *testing.T) {
	srv := pixgateTokenEndpoint(t, 10*time.Minute)
	cfg := clientcredentials.Config{ClientID: "id", ClientSecret: "secret", TokenURL: srv.URL}
	requested := time.Now()
	tok, err := cfg.Token(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if time.Until(tok.Expiry) < 24*time.Hour {
		t.Fatalf("x/oauth2 now reads expires_in right (expiry in %s): FixExpiry may have become needless", time.Until(tok.Expiry))
	}
	tok, err = pixgatecontainer.FixExpiry(tok, requested)
	if err != nil {
		t.Fatal(err)
	}
	if want := requested.Add(10 * time.Minute); !tok.Expiry.Equal(want) || tok.ExpiresIn != 600 {
		t.Fatalf("Expiry %s ExpiresIn %d, want %s and 600", tok.Expiry, tok.ExpiresIn, want)
	}
}

func TestFixExpiryFallsBackToTheUnixTime(t *testing.T) {
	at := time.Now().Add(30 * time.Minute).Truncate(time.Second)
	tok := (&oauth2.Token{AccessToken: "x"}).WithExtra(map[string]any{"expires_in": float64(at.Unix())})
	tok, err := pixgatecontainer.FixExpiry(tok, time.Now())
	if err != nil || !tok.Expiry.Equal(at) {
		t.Fatalf("Expiry %s err %v, want %s", tok.Expiry, err, at)
	}
	if _, err := pixgatecontainer.FixExpiry(&oauth2.Token{AccessToken: "x"}, time.Now()); err == nil {
		t.Fatal("a token without any expiry was accepted")
	}
}
