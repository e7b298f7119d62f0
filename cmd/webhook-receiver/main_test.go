package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pixgate/pixgate/adapters/webhook"
)

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestReceiverServesTLSForItsNameAndVerifiesSignatures(t *testing.T) {
	dir := t.TempDir()
	caFile, secretFile := filepath.Join(dir, "ca.pem"), filepath.Join(dir, "whsec.txt")
	const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	if err := os.WriteFile(secretFile, []byte(secret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	out := &syncBuffer{}
	addrs := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"-addr", "127.0.0.1:0", "-ca-out", caFile, "-secret-file", secretFile}, out, loopbackResolver, func(a string) { addrs <- a })
	}()
	addr := <-addrs
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("run: %v", err)
		}
	})

	pemBytes, err := os.ReadFile(caFile)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pemBytes)
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: pool},
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, network, addr) // hooks.localtest.me is loopback
		},
	}}
	post := func(sigSecret string) {
		body := []byte(`{"id":"evt","type":"transaction.paid","data":{"id":"tx-1","status":"PAID"}}`)
		now := time.Now()
		sig, err := webhook.Sign([]string{sigSecret}, "msg_"+sigSecret[6:10], now, body)
		if err != nil {
			t.Fatal(err)
		}
		req, _ := http.NewRequest("POST", "https://hooks.localtest.me/pix", bytes.NewReader(body))
		req.Header.Set("webhook-id", "msg_"+sigSecret[6:10])
		req.Header.Set("webhook-timestamp", strconv.FormatInt(now.Unix(), 10))
		req.Header.Set("webhook-signature", sig)
		res, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusNoContent {
			t.Fatalf("status %d", res.StatusCode)
		}
	}
	post(secret)
	post("whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD")
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 4 || !strings.Contains(lines[2], "transaction.paid  tx-1 PAID") || !strings.HasSuffix(lines[2], "signature verified") ||
		!strings.Contains(lines[3], "signature INVALID") {
		t.Fatalf("output:\n%s", out.String())
	}
}

// loopbackResolver resolves every name to 127.0.0.1, as hooks.localtest.me does online.
func loopbackResolver(context.Context, string) ([]string, error) { return []string{"127.0.0.1"}, nil }

func TestReceiverRefusesANameThatDoesNotLeadHereAndSaysWhatToDo(t *testing.T) {
	notFound := func(_ context.Context, host string) ([]string, error) {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	elsewhere := func(context.Context, string) ([]string, error) { return []string{"203.0.113.7"}, nil }
	for name, c := range map[string]struct {
		resolve func(context.Context, string) ([]string, error)
		want    string
	}{
		"a name that does not resolve":      {notFound, "does not resolve"},
		"a name that resolves to elsewhere": {elsewhere, "resolves to 203.0.113.7"},
	} {
		t.Run(name, func(t *testing.T) {
			caFile := filepath.Join(t.TempDir(), "ca.pem")
			out := &syncBuffer{}
			err := run(context.Background(), []string{"-addr", "127.0.0.1:0", "-ca-out", caFile}, out, c.resolve, nil)
			if err == nil {
				t.Fatal("the receiver started")
			}
			for _, hint := range []string{c.want, "hooks.localtest.me", "/etc/hosts", "-host NAME"} {
				if !strings.Contains(err.Error(), hint) {
					t.Fatalf("the refusal lacks %q: %v", hint, err)
				}
			}
			if _, statErr := os.Stat(caFile); statErr == nil {
				t.Fatal("a certificate was written for a receiver that did not start")
			}
		})
	}
}

func TestReceiverHelpSucceeds(t *testing.T) {
	if err := run(context.Background(), []string{"-h"}, &syncBuffer{}, loopbackResolver, nil); err != nil {
		t.Fatalf("-h: %v", err)
	}
}
