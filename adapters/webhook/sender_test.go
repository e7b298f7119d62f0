package webhook_test

import (
	"bytes"
	"context"
	"encoding/pem"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/pixgate/pixgate/adapters/webhook"
	"github.com/pixgate/pixgate/ports"
)

const (
	secretA = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	secretB = "whsec_c2Vjb25kLXNlY3JldC1vZi10aGUtYWNjb3VudA=="
)

func TestSignReproducesTheStandardWebhooksTestVector(t *testing.T) {
	// The vector of the official Go library's own test, TestWebhookSign (libraries/go/webhook_test.go).
	got, err := webhook.Sign([]string{"whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"}, "msg_p5jXN8AQM9LWM0D4loKWxJek",
		time.Unix(1614265330, 0), []byte(`{"test": 2432232314}`))
	if err != nil {
		t.Fatal(err)
	}
	if want := "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="; got != want {
		t.Fatalf("Sign = %q, want %q", got, want)
	}
}

func TestSignRefusesMalformedSecretsWithoutShowingThem(t *testing.T) {
	for name, secrets := range map[string][]string{
		"no secret at all":            nil,
		"a secret without the prefix": {"MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"},
		"a secret that is not base64": {"whsec_%%%not-base64%%%"},
		"an empty key":                {"whsec_"},
		"a bad secret beside a good":  {secretA, "whsec_%%%"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := webhook.Sign(secrets, "id", time.Now(), []byte("{}"))
			if err == nil {
				t.Fatal("Sign accepted it")
			}
			if strings.Contains(err.Error(), "MfKQ9r8") || strings.Contains(err.Error(), "%%%") {
				t.Fatalf("error shows the secret: %v", err)
			}
		})
	}
}

// received is one request a receiver got.
type received struct {
	method, path string
	header       http.Header
	body         []byte
}

// receiver is a real HTTPS server on loopback that keeps what it receives.
type receiver struct {
	srv    *httptest.Server
	caFile string
	mu     sync.Mutex
	got    []received
}

func newReceiver(t *testing.T, handle func(w http.ResponseWriter, r *http.Request)) *receiver {
	t.Helper()
	rc := &receiver{}
	rc.srv = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		rc.got = append(rc.got, received{method: r.Method, path: r.URL.Path, header: r.Header.Clone(), body: body})
		rc.mu.Unlock()
		handle(w, r)
	}))
	t.Cleanup(rc.srv.Close)
	rc.caFile = filepath.Join(t.TempDir(), "ca.pem")
	pemBytes := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: rc.srv.Certificate().Raw})
	if err := os.WriteFile(rc.caFile, pemBytes, 0o600); err != nil {
		t.Fatal(err)
	}
	return rc
}

func (rc *receiver) requests() []received {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]received(nil), rc.got...)
}

func (rc *receiver) port() string {
	_, port, _ := net.SplitHostPort(rc.srv.Listener.Addr().String())
	return port
}

// url names the receiver as example.com (a name its certificate holds), which the test
// resolver maps to loopback.
func (rc *receiver) url(path string) string { return "https://example.com:" + rc.port() + path }

// staticResolver answers fixed addresses for names; any other name does not exist.
type staticResolver map[string][]string

func (r staticResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	var out []netip.Addr
	for _, s := range r[host] {
		out = append(out, netip.MustParseAddr(s))
	}
	if len(out) == 0 {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	return out, nil
}

// dialLog is the sender's low-level dialer in tests: it connects to loopback only, and fails the
// test if asked for anything else unless the test expects it (then it records the address and
// refuses to connect), so no test ever reaches beyond this machine.
type dialLog struct {
	t         *testing.T
	expectOut bool
	mu        sync.Mutex
	addrs     []string
}

func (d *dialLog) dial(ctx context.Context, network, address string) (net.Conn, error) {
	d.mu.Lock()
	d.addrs = append(d.addrs, address)
	d.mu.Unlock()
	ap, err := netip.ParseAddrPort(address)
	if err != nil || !ap.Addr().Unmap().IsLoopback() {
		if !d.expectOut {
			d.t.Errorf("the sender dialed %s, beyond loopback", address)
		}
		return nil, errors.New("test dialer: no network beyond loopback")
	}
	var nd net.Dialer
	return nd.DialContext(ctx, network, address)
}

func (d *dialLog) dialed() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]string(nil), d.addrs...)
}

type senderSetup struct {
	allowPrivate bool
	caFile       string
	timeout      time.Duration
	resolver     staticResolver
	expectOut    bool
}

func newSender(t *testing.T, s senderSetup) (*webhook.Sender, *dialLog) {
	t.Helper()
	log := &dialLog{t: t, expectOut: s.expectOut}
	if s.resolver == nil {
		s.resolver = staticResolver{"example.com": {"127.0.0.1"}}
	}
	snd, err := webhook.NewSender(webhook.Options{AllowPrivate: s.allowPrivate, CAFile: s.caFile,
		Timeout: s.timeout, Resolver: s.resolver, Dial: log.dial})
	if err != nil {
		t.Fatalf("NewSender: %v", err)
	}
	return snd, log
}

func message(url string, secrets ...string) ports.WebhookMessage {
	if len(secrets) == 0 {
		secrets = []string{secretA}
	}
	return ports.WebhookMessage{URL: url, EventID: "5a0d3e4c-1f7b-4c8e-9d2a-6b3f8e1c7a90", Timestamp: time.Now(),
		Body: []byte(`{"id":"5a0d3e4c-1f7b-4c8e-9d2a-6b3f8e1c7a90","type":"transaction.paid","data":{}}`), Secrets: secrets}
}

func verify(t *testing.T, secret string, r received) error {
	t.Helper()
	wh, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		t.Fatal(err)
	}
	return wh.Verify(r.body, r.header)
}

func TestSendDeliversASignedPOSTTheOfficialLibraryVerifies(t *testing.T) {
	t.Parallel()
	rc := newReceiver(t, func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) })
	snd, _ := newSender(t, senderSetup{allowPrivate: true, caFile: rc.caFile})
	m := message(rc.url("/hooks/pix?shop=1"))

	resp, err := snd.Send(context.Background(), m)
	if err != nil {
		t.Fatalf("Send: %v", err)
	}
	if resp.StatusCode != http.StatusNoContent {
		t.Fatalf("status = %d, want 204", resp.StatusCode)
	}
	got := rc.requests()
	if len(got) != 1 {
		t.Fatalf("receiver got %d requests, want 1", len(got))
	}
	r := got[0]
	if r.method != http.MethodPost || r.path != "/hooks/pix" {
		t.Errorf("request = %s %s, want POST /hooks/pix", r.method, r.path)
	}
	if ct := r.header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type = %q", ct)
	}
	if !bytes.Equal(r.body, m.Body) {
		t.Errorf("body = %s, want %s", r.body, m.Body)
	}
	if id := r.header.Get("webhook-id"); id != m.EventID {
		t.Errorf("webhook-id = %q, want %q", id, m.EventID)
	}
	if ts := r.header.Get("webhook-timestamp"); ts != strconv.FormatInt(m.Timestamp.Unix(), 10) {
		t.Errorf("webhook-timestamp = %q, want %d", ts, m.Timestamp.Unix())
	}
	if err := verify(t, secretA, r); err != nil {
		t.Errorf("the Standard Webhooks library refuses our signature: %v", err)
	}
	if err := verify(t, secretB, r); err == nil {
		t.Error("a signature verified with a secret that did not sign")
	}
}

func TestSendDuringARotationSignsWithBothSecrets(t *testing.T) {
	t.Parallel()
	rc := newReceiver(t, func(w http.ResponseWriter, _ *http.Request) {})
	snd, _ := newSender(t, senderSetup{allowPrivate: true, caFile: rc.caFile})

	if _, err := snd.Send(context.Background(), message(rc.url("/"), secretB, secretA)); err != nil {
		t.Fatalf("Send: %v", err)
	}
	r := rc.requests()[0]
	if sigs := strings.Fields(r.header.Get("webhook-signature")); len(sigs) != 2 {
		t.Fatalf("webhook-signature holds %d signatures, want 2: %q", len(sigs), sigs)
	}
	for _, secret := range []string{secretA, secretB} {
		if err := verify(t, secret, r); err != nil {
			t.Errorf("receiver holding secret %s… cannot verify: %v", secret[:10], err)
		}
	}
	if err := verify(t, "whsec_"+"dGhpcmQtc2VjcmV0LW5vdC1pbi11c2U=", r); err == nil {
		t.Error("a third secret verified")
	}
}

func TestSendReportsAnswersThatAreNotSuccess(t *testing.T) {
	t.Parallel()
	retryAt := time.Now().Add(2 * time.Hour).UTC()
	cases := []struct {
		name           string
		handle         func(w http.ResponseWriter, r *http.Request)
		wantStatus     int
		wantRetryAfter time.Duration
		tolerance      time.Duration
	}{
		{
			name:       "a 500 comes back as a status, without error",
			handle:     func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusInternalServerError) },
			wantStatus: http.StatusInternalServerError,
		},
		{
			name: "a 503 with Retry-After in seconds carries the delay",
			handle: func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Retry-After", "120")
				w.WriteHeader(http.StatusServiceUnavailable)
			},
			wantStatus: http.StatusServiceUnavailable, wantRetryAfter: 2 * time.Minute,
		},
		{
			name: "a 429 with Retry-After as an HTTP date carries the delay until then",
			handle: func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Retry-After", retryAt.Format(http.TimeFormat))
				w.WriteHeader(http.StatusTooManyRequests)
			},
			wantStatus: http.StatusTooManyRequests, wantRetryAfter: 2 * time.Hour, tolerance: 5 * time.Second,
		},
		{
			name:       "a 410 Gone comes back as such",
			handle:     func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusGone) },
			wantStatus: http.StatusGone,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rc := newReceiver(t, tc.handle)
			snd, _ := newSender(t, senderSetup{allowPrivate: true, caFile: rc.caFile})
			resp, err := snd.Send(context.Background(), message(rc.url("/")))
			if err != nil {
				t.Fatalf("Send: %v", err)
			}
			if resp.StatusCode != tc.wantStatus {
				t.Errorf("status = %d, want %d", resp.StatusCode, tc.wantStatus)
			}
			if diff := resp.RetryAfter - tc.wantRetryAfter; diff < -tc.tolerance || diff > tc.tolerance {
				t.Errorf("RetryAfter = %v, want %v", resp.RetryAfter, tc.wantRetryAfter)
			}
		})
	}
}

func TestSendGivesEachAnswerItsVerdict(t *testing.T) {
	t.Parallel()
	cases := []struct {
		status int
		want   ports.WebhookVerdict
	}{
		{200, ports.WebhookDelivered}, {204, ports.WebhookDelivered},
		{299, ports.WebhookDelivered}, {301, ports.WebhookRetry}, {307, ports.WebhookRetry},
		{400, ports.WebhookRetry}, {404, ports.WebhookRetry}, {410, ports.WebhookGone},
		{429, ports.WebhookRetry}, {500, ports.WebhookRetry},
	}
	for _, tc := range cases {
		t.Run(strconv.Itoa(tc.status), func(t *testing.T) {
			t.Parallel()
			rc := newReceiver(t, func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(tc.status) })
			snd, _ := newSender(t, senderSetup{allowPrivate: true, caFile: rc.caFile})
			resp, err := snd.Send(context.Background(), message(rc.url("/")))
			if err != nil {
				t.Fatalf("Send: %v", err)
			}
			if resp.Verdict != tc.want {
				t.Errorf("status %d: verdict %d, want %d", resp.StatusCode, resp.Verdict, tc.want)
			}
		})
	}
}

func TestSendDoesNotFollowARedirect(t *testing.T) {
	t.Parallel()
	rc := newReceiver(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/hook" {
			http.Redirect(w, r, "/elsewhere", http.StatusTemporaryRedirect)
		}
	})
	snd, _ := newSender(t, senderSetup{allowPrivate: true, caFile: rc.caFile})

	resp, err := snd.Send(context.Background(), message(rc.url("/hook")))
	if err != nil {
		t.Fatalf("Send: %v", err)
	}
	if resp.StatusCode != http.StatusTemporaryRedirect {
		t.Errorf("status = %d, want the 307 itself", resp.StatusCode)
	}
	for _, r := range rc.requests() {
		if r.path != "/hook" {
			t.Errorf("the redirect was followed to %s", r.path)
		}
	}
}

func TestSendGivesUpOnAReceiverThatDoesNotAnswerInTime(t *testing.T) {
	t.Parallel()
	rc := newReceiver(t, func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(10 * time.Second):
		}
	})
	snd, _ := newSender(t, senderSetup{allowPrivate: true, caFile: rc.caFile, timeout: 300 * time.Millisecond})

	start := time.Now()
	_, err := snd.Send(context.Background(), message(rc.url("/")))
	if err == nil {
		t.Fatal("Send succeeded")
	}
	if elapsed := time.Since(start); elapsed > 3*time.Second {
		t.Errorf("Send took %v, beyond its timeout", elapsed)
	}
	if !strings.Contains(err.Error(), "no answer within 300ms") {
		t.Errorf("error = %q, want it to tell the timeout", err)
	}
}

func TestSendReportsAConnectionClosedWithoutAnswer(t *testing.T) {
	t.Parallel()
	rc := newReceiver(t, func(w http.ResponseWriter, _ *http.Request) {
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			conn.Close()
		}
	})
	snd, _ := newSender(t, senderSetup{allowPrivate: true, caFile: rc.caFile})

	_, err := snd.Send(context.Background(), message(rc.url("/")))
	if err == nil {
		t.Fatal("Send succeeded")
	}
	if strings.Contains(err.Error(), "example.com") {
		t.Errorf("error %q repeats the URL", err)
	}
}

func TestSendRefusesAReceiverWhoseCertificateIsNotTrusted(t *testing.T) {
	t.Parallel()
	rc := newReceiver(t, func(http.ResponseWriter, *http.Request) {})
	snd, _ := newSender(t, senderSetup{allowPrivate: true}) // no CA file

	_, err := snd.Send(context.Background(), message(rc.url("/")))
	if err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("Send error = %v, want a certificate error", err)
	}
	if n := len(rc.requests()); n != 0 {
		t.Errorf("receiver got %d requests", n)
	}
}

func TestSendRefusesPrivateDestinationsUnlessAllowed(t *testing.T) {
	t.Parallel()
	rc := newReceiver(t, func(http.ResponseWriter, *http.Request) {})
	port := rc.port()
	resolver := staticResolver{
		"example.com":     {"127.0.0.1"},
		"intranet.test":   {"10.0.0.1"},
		"metadata.test":   {"169.254.169.254"},
		"cgnat.test":      {"100.64.0.7"},
		"mapped.test":     {"::ffff:127.0.0.1"},
		"mapped-10.test":  {"::ffff:10.0.0.1"},
		"ula.test":        {"fd00::1"},
		"everything.test": {"127.0.0.1", "10.1.2.3", "::1", "fe80::1", "ff02::1", "0.0.0.0"},
	}
	urls := []string{
		"https://example.com:" + port + "/",
		"https://intranet.test/",
		"https://metadata.test/latest/meta-data/",
		"https://cgnat.test/",
		"https://mapped.test:" + port + "/",
		"https://mapped-10.test/",
		"https://ula.test/",
		"https://everything.test:" + port + "/",
		"https://127.0.0.1:" + port + "/",
		"https://[::1]:" + port + "/",
		"https://[::ffff:127.0.0.1]:" + port + "/",
		"https://[::ffff:a9fe:a9fe]/",
		"https://[64:ff9b::a00:1]/",   // NAT64 of 10.0.0.1
		"https://[2002:c0a8:101::1]/", // 6to4 of 192.168.1.1
		"https://192.168.1.1/",
		"https://172.16.5.4/",
		"https://224.0.0.1/",
		"https://0.0.0.0:" + port + "/",
		"https://[::]:" + port + "/",
	}
	snd, log := newSender(t, senderSetup{caFile: rc.caFile, resolver: resolver})
	for _, u := range urls {
		t.Run(u+" is refused", func(t *testing.T) {
			_, err := snd.Send(context.Background(), message(u))
			if !errors.Is(err, ports.ErrWebhookAddressRefused) {
				t.Errorf("Send error = %v, want ErrWebhookAddressRefused", err)
			}
		})
	}
	if d := log.dialed(); len(d) != 0 {
		t.Errorf("the sender dialed %v", d)
	}
	if n := len(rc.requests()); n != 0 {
		t.Errorf("receiver got %d requests", n)
	}

	t.Run("with AllowPrivate the loopback receiver gets its webhook", func(t *testing.T) {
		allowed, _ := newSender(t, senderSetup{allowPrivate: true, caFile: rc.caFile, resolver: resolver})
		resp, err := allowed.Send(context.Background(), message(rc.url("/")))
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("Send = %v, %v; want 200", resp.StatusCode, err)
		}
	})
}

func TestSendDialsPublicAddressesOnlyOnceChecked(t *testing.T) {
	t.Parallel()
	resolver := staticResolver{
		"shop.test":  {"93.184.216.34"},
		"mixed.test": {"10.0.0.1", "127.0.0.1", "2606:4700::1111"},
	}
	snd, log := newSender(t, senderSetup{resolver: resolver, expectOut: true})
	for _, u := range []string{"https://shop.test/hook", "https://mixed.test:8443/hook"} {
		if _, err := snd.Send(context.Background(), message(u)); errors.Is(err, ports.ErrWebhookAddressRefused) {
			t.Errorf("%s: refused a public destination: %v", u, err)
		}
	}
	want := []string{"93.184.216.34:443", "[2606:4700::1111]:8443"}
	if got := log.dialed(); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("dialed %v, want %v only", got, want)
	}
}

func TestSendRefusesWhatIsNotAnHTTPSURL(t *testing.T) {
	t.Parallel()
	snd, log := newSender(t, senderSetup{allowPrivate: true})
	for _, u := range []string{"http://example.com/hook", "ftp://example.com/", "/relative", "https://", "::"} {
		if _, err := snd.Send(context.Background(), message(u)); err == nil {
			t.Errorf("%q was sent", u)
		}
	}
	if d := log.dialed(); len(d) != 0 {
		t.Errorf("dialed %v", d)
	}
}

func TestSendAnswersTheContextErrorWhenCanceled(t *testing.T) {
	t.Parallel()
	rc := newReceiver(t, func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() })
	snd, _ := newSender(t, senderSetup{allowPrivate: true, caFile: rc.caFile})
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if _, err := snd.Send(ctx, message(rc.url("/"))); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Send error = %v, want the context's", err)
	}
}

func TestNewSenderRefusesABadCAFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.pem")
	if err := os.WriteFile(empty, []byte("not a certificate\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for name, path := range map[string]string{"a missing file": filepath.Join(dir, "missing.pem"), "a file without PEM": empty} {
		t.Run(name, func(t *testing.T) {
			if _, err := webhook.NewSender(webhook.Options{CAFile: path}); err == nil {
				t.Error("NewSender accepted it")
			}
		})
	}
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 11, 22, 11, 0, 0, 0, time.UTC)
	cases := []struct {
		name  string
		value string
		want  time.Duration
		ok    bool
	}{
		{"seconds are a delay", "120", 2 * time.Minute, true},
		{"zero seconds are no delay", "0", 0, true},
		{"an HTTP date is the delay until then", "Sun, 22 Nov 2026 12:30:00 GMT", 90 * time.Minute, true},
		{"a past date is no delay", "Sun, 22 Nov 2026 10:00:00 GMT", 0, true},
		{"a huge number is capped, not overflowed", "99999999999999999999999", 366 * 24 * time.Hour, true},
		{"an empty value asks nothing", "", 0, false},
		{"a negative number is unreadable", "-5", 0, false},
		{"garbage is unreadable", "soon", 0, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := webhook.ParseRetryAfter(tc.value, now)
			if got != tc.want || ok != tc.ok {
				t.Errorf("ParseRetryAfter(%q) = %v, %v; want %v, %v", tc.value, got, ok, tc.want, tc.ok)
			}
		})
	}
}
