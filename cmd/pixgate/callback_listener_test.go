package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pixgate/pixgate/adapters/psp"
	"github.com/pixgate/pixgate/adapters/psp/apipix"
	"github.com/pixgate/pixgate/adapters/psp/psptest"
)

// The PSP's mutual-TLS callback listener (PIXGATE_ACQUIRER_CALLBACK_ADDR), over real TLS:
// the fake PSP posts its callbacks with a client certificate of its CA, which the listener
// is told to trust. Helpers here start with "cb".

// cbVars are the listener's settings for a PSP whose CA is ca: a server certificate of that
// CA for loopback (the fake trusts its own CA), and that CA for the clients.
func cbVars(t *testing.T, ca *psptest.CA) map[string]string {
	t.Helper()
	server := ca.IssueServer(t, "127.0.0.1", "localhost")
	return map[string]string{
		envCallbackAddr: "127.0.0.1:0", envCallbackCert: server.CertFile, envCallbackKey: server.KeyFile,
		envCallbackClientCA: ca.CertFile,
	}
}

// cbListen serves e's callback listener on loopback as serve does and answers its base URL.
func cbListen(t *testing.T, e *env) string {
	t.Helper()
	return cbServe(t, e, cbLoopback(t))
}

func cbLoopback(t *testing.T) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return ln
}

// cbServe serves e's callback listener on ln as serve does and answers its base URL.
func cbServe(t *testing.T, e *env, ln net.Listener) string {
	t.Helper()
	if e.app.callback == nil {
		t.Fatal("no callback listener was wired")
	}
	srv := e.app.callback.httpServer(slog.New(slog.NewJSONHandler(io.Discard, nil)))
	go func() { _ = srv.ServeTLS(ln, "", "") }()
	t.Cleanup(func() { _ = srv.Close() })
	return "https://" + ln.Addr().String()
}

// cbClient posts over TLS trusting ca for the server, presenting cert (none when nil).
func cbClient(ca *psptest.CA, cert *psptest.Certificate) *http.Client {
	cfg := &tls.Config{RootCAs: ca.Pool(), MinVersion: tls.VersionTLS12}
	if cert != nil {
		cfg.Certificates = []tls.Certificate{cert.TLS}
	}
	return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: cfg}}
}

func cbPost(c *http.Client, url string, body any) (*http.Response, []byte, error) {
	raw, _ := json.Marshal(body)
	res, err := c.Post(url, "application/json", bytes.NewReader(raw))
	if err != nil {
		return nil, nil, err
	}
	defer res.Body.Close()
	out, err := io.ReadAll(res.Body)
	return res, out, err
}

func TestCallbackListenerAppliesACallbackFromThePSPsCertificateWithoutASecret(t *testing.T) {
	t.Parallel()
	psp := psptest.New(t, psptest.Config{})
	// No PIXGATE_ACQUIRER_SECRET: the listener works on its own.
	e := newEnv(t, cbVars(t, psp.CA))
	base := cbListen(t, e)
	_, tok := e.account()
	id := e.lcCreate(tok)

	d := psp.Deliver(base+"/acquirer/pix", map[string]any{"pix": []any{acqPix(acqTxID(t, id), acqE2E)}})
	if d.Err != nil || d.Status != http.StatusOK {
		t.Fatalf("callback: status %d, %v", d.Status, d.Err)
	}
	lcHistory(t, e.lcGet(tok, id).json(t), "PENDING", "PIX_QRCODE_GENERATED", "PAID")
	// The main address still has no acquirer route without the secret.
	problemOf(t, e.do("POST", "/acquirer/pix", "", map[string]any{"pix": []any{}}), http.StatusNotFound, "not_found")
}

func TestCallbackListenerRoutes(t *testing.T) {
	t.Parallel()
	psp := psptest.New(t, psptest.Config{})
	e := newEnv(t, cbVars(t, psp.CA))
	base := cbListen(t, e)
	client := cbClient(psp.CA, psp.CallbackClient)
	for _, c := range []struct {
		name, method, path string
		body               string
		want               int
	}{
		{"the probe of a URL being registered answers 200", "POST", "/acquirer", `{}`, http.StatusOK},
		{"a probe with any body answers 200", "POST", "/acquirer", `{"evento":"teste_webhook"}`, http.StatusOK},
		{"an empty batch answers 200", "POST", "/acquirer/pix", `{"pix":[]}`, http.StatusOK},
		{"a body that is not JSON answers 422", "POST", "/acquirer/pix", `{"pix":`, http.StatusUnprocessableEntity},
		{"the API's routes are not there: 404", "POST", "/transaction", `{}`, http.StatusNotFound},
		{"the operational routes are not there: 404", "GET", "/metrics", ``, http.StatusNotFound},
		{"a path below the callback's: 404", "POST", "/acquirer/pix/extra", `{}`, http.StatusNotFound},
		{"another method on the callback: 405", "GET", "/acquirer/pix", ``, http.StatusMethodNotAllowed},
	} {
		t.Run(c.name, func(t *testing.T) {
			var body io.Reader
			if c.body != "" {
				body = strings.NewReader(c.body)
			}
			req, _ := http.NewRequest(c.method, base+c.path, body)
			req.Header.Set("Content-Type", "application/json")
			res, err := client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			raw, _ := io.ReadAll(res.Body)
			res.Body.Close()
			if res.StatusCode != c.want {
				t.Fatalf("status %d, want %d\n%s", res.StatusCode, c.want, raw)
			}
		})
	}
	t.Run("the probe applies nothing", func(t *testing.T) {
		_, tok := e.account()
		id := e.lcCreate(tok)
		res, raw, err := cbPost(client, base+"/acquirer", map[string]any{"pix": []any{acqPix(acqTxID(t, id), acqE2E)}})
		if err != nil || res.StatusCode != http.StatusOK {
			t.Fatalf("probe: %v %v %s", res, err, raw)
		}
		lcHistory(t, e.lcGet(tok, id).json(t), "PENDING", "PIX_QRCODE_GENERATED")
	})
	t.Run("a body over the main address's limit answers 413", func(t *testing.T) {
		big := `{"pix":[],"x":"` + strings.Repeat("a", 1<<20) + `"}`
		res, err := client.Post(base+"/acquirer/pix", "application/json", strings.NewReader(big))
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusRequestEntityTooLarge {
			t.Fatalf("status %d, want 413", res.StatusCode)
		}
	})
}

func TestCallbackListenerRefusesClientsWithoutTheCAsCertificate(t *testing.T) {
	t.Parallel()
	psp := psptest.New(t, psptest.Config{})
	e := newEnv(t, cbVars(t, psp.CA))
	base := cbListen(t, e)
	_, tok := e.account()
	id := e.lcCreate(tok)
	body := map[string]any{"pix": []any{acqPix(acqTxID(t, id), acqE2E)}}
	other := psptest.NewCA(t, "another CA")
	for _, c := range []struct {
		name   string
		client *http.Client
	}{
		{"no client certificate", cbClient(psp.CA, nil)},
		{"a client certificate of another CA", cbClient(psp.CA, other.IssueClient(t, "impostor"))},
		{"a server certificate of the PSP's CA, not one for clients", cbClient(psp.CA, psp.CA.IssueServer(t, "127.0.0.1"))},
	} {
		t.Run(c.name+" fails the handshake", func(t *testing.T) {
			res, raw, err := cbPost(c.client, base+"/acquirer/pix", body)
			if err == nil {
				t.Fatalf("answered %d %s; want a failed handshake", res.StatusCode, raw)
			}
		})
	}
	lcHistory(t, e.lcGet(tok, id).json(t), "PENDING", "PIX_QRCODE_GENERATED")
}

func TestCallbackSettingsComeTogether(t *testing.T) {
	t.Parallel()
	ca := psptest.NewCA(t, "settings CA")
	full := cbVars(t, ca)
	without := func(name string) map[string]string {
		v := map[string]string{}
		for k, x := range full {
			if k != name {
				v[k] = x
			}
		}
		return v
	}
	for _, c := range []struct {
		name, variable string
		vars           map[string]string
	}{
		{"an address without a certificate", envCallbackCert, without(envCallbackCert)},
		{"an address without a key", envCallbackKey, without(envCallbackKey)},
		{"an address without client CAs", envCallbackClientCA, without(envCallbackClientCA)},
		{"files without an address", envCallbackCert, without(envCallbackAddr)},
		{"an address that is not host:port", envCallbackAddr, map[string]string{envCallbackAddr: "8443"}},
		{"the main address", envCallbackAddr, map[string]string{envCallbackAddr: ":8080", envCallbackCert: "c", envCallbackKey: "k", envCallbackClientCA: "ca"}},
		{"a webhook URL over http", "PIXGATE_ACQUIRER_WEBHOOK_URL", map[string]string{"PIXGATE_ACQUIRER_WEBHOOK_URL": "http://pixgate.example/acquirer"}},
		{"a webhook URL with a query", "PIXGATE_ACQUIRER_WEBHOOK_URL", map[string]string{"PIXGATE_ACQUIRER_WEBHOOK_URL": "https://pixgate.example/acquirer?x=1"}},
		{"registration neither true nor false", "PIXGATE_ACQUIRER_WEBHOOK_REGISTER", map[string]string{"PIXGATE_ACQUIRER_WEBHOOK_REGISTER": "yes"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := loadVars(c.vars)
			if err == nil || !strings.HasPrefix(err.Error(), c.variable+":") || strings.Contains(err.Error(), "\n") {
				t.Fatalf("err = %v, want one line naming %s", err, c.variable)
			}
		})
	}
	if _, err := loadVars(full); err != nil {
		t.Fatalf("the full settings: %v", err)
	}
}

func TestCallbackFilesThatCannotBeUsedStopTheStartNamingTheVariable(t *testing.T) {
	t.Parallel()
	ca := psptest.NewCA(t, "files CA")
	other := ca.IssueServer(t, "127.0.0.1")
	dir := t.TempDir()
	garbage := filepath.Join(dir, "garbage.pem")
	if err := os.WriteFile(garbage, []byte("not a PEM file"), 0o600); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing.pem")
	for _, c := range []struct {
		name, variable string
		set            map[string]string
	}{
		{"a missing certificate", envCallbackCert, map[string]string{envCallbackCert: missing}},
		{"a missing key", envCallbackKey, map[string]string{envCallbackKey: missing}},
		{"a missing CA file", envCallbackClientCA, map[string]string{envCallbackClientCA: missing}},
		{"a certificate file without a certificate", envCallbackCert, map[string]string{envCallbackCert: garbage}},
		{"a key file without a key", envCallbackKey, map[string]string{envCallbackKey: garbage}},
		{"a CA file without a certificate", envCallbackClientCA, map[string]string{envCallbackClientCA: garbage}},
		{"the key of another certificate", envCallbackKey, map[string]string{envCallbackKey: other.KeyFile}},
		{"a directory for the key", envCallbackKey, map[string]string{envCallbackKey: dir}},
	} {
		t.Run(c.name, func(t *testing.T) {
			vars := cbVars(t, ca)
			for k, v := range c.set {
				vars[k] = v
			}
			cfg, err := loadVars(vars)
			if err != nil {
				t.Fatal(err)
			}
			_, err = newApp(context.Background(), cfg, slog.New(slog.NewJSONHandler(io.Discard, nil)))
			if err == nil || !strings.HasPrefix(err.Error(), c.variable+":") || strings.Contains(err.Error(), "\n") {
				t.Fatalf("err = %v, want one line naming %s", err, c.variable)
			}
			if strings.Contains(err.Error(), "PRIVATE KEY") {
				t.Fatalf("the error shows a key: %v", err)
			}
		})
	}
}

// TestCallbackListenerStartsAndStopsWithTheServer runs serve with the listener: it serves the
// PSP's probe once the API serves, and SIGTERM (the context's end) closes it with the rest.
func TestCallbackListenerStartsAndStopsWithTheServer(t *testing.T) {
	t.Parallel()
	psp := psptest.New(t, psptest.Config{})
	vars := cbVars(t, psp.CA)
	vars["PIXGATE_QR_PROCESS"] = "false"
	s := lgServe(t, vars)
	addr := cbLoggedAddr(t, s.stderr)
	if d := psp.Deliver("https://"+addr+"/acquirer", struct{}{}); d.Err != nil || d.Status != http.StatusOK {
		t.Fatalf("probe: %d %v", d.Status, d.Err)
	}
	if err := s.stop(); err != nil {
		t.Fatalf("serve: %v", err)
	}
	conn, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err == nil {
		conn.Close()
		t.Fatalf("the callback listener still accepts connections after the shutdown")
	}
}

// cbLoggedAddr waits (10 s at most) for serve's log line that gives the callback listener's
// address: serve's log is written out by a goroutine of its own.
func cbLoggedAddr(t *testing.T, logs *syncBuffer) string {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		for _, line := range strings.Split(logs.String(), "\n") {
			var l struct {
				Msg  string `json:"msg"`
				Addr string `json:"addr"`
			}
			if json.Unmarshal([]byte(line), &l) == nil && l.Msg == "acquirer callbacks served with mutual TLS" && l.Addr != "" {
				return l.Addr
			}
		}
	}
	t.Fatalf("no log line gives the callback listener's address:\n%s", logs)
	return ""
}

// TestThePSPProbesRegistersAndPostsThroughTheCallbackListener is the whole way of a PSP's
// notification: pixgate registers its webhook URL (the listener's address), the PSP probes it
// before accepting it, and a PIX paid at the PSP is posted there over mutual TLS.
func TestThePSPProbesRegistersAndPostsThroughTheCallbackListener(t *testing.T) {
	t.Parallel()
	p := psptest.New(t, psptest.Config{ProbeWebhook: true})
	ln := cbLoopback(t)
	vars := dvPSPVars(p)
	for k, v := range cbVars(t, p.CA) {
		vars[k] = v
	}
	url := "https://" + ln.Addr().String() + "/acquirer"
	vars["PIXGATE_ACQUIRER_WEBHOOK_URL"] = url
	e := newEnv(t, vars)
	cbServe(t, e, ln)

	wrRun(t, wrJob(t, e))
	if hook, ok := p.Webhook(p.Chave); !ok || hook.WebhookURL != url {
		t.Fatalf("the PSP holds %+v, want %s", hook, url)
	}
	txid := rand.Text()
	cob := map[string]any{"calendario": map[string]int{"expiracao": 3600}, "valor": map[string]string{"original": "10.00"}, "chave": p.Chave}
	if err := e.app.psp.Transport().Do(context.Background(), psp.Request{Operation: apipix.OpCobPut, Method: http.MethodPut,
		Path: []string{"cob", txid}, Body: cob}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Pay(txid, psptest.Payment{}); err != nil {
		t.Fatal(err)
	}
	deliveries := p.Deliveries()
	if len(deliveries) != 2 || deliveries[0].URL != url || deliveries[0].Status != http.StatusOK ||
		deliveries[1].URL != url+"/pix" || deliveries[1].Status != http.StatusOK {
		t.Fatalf("deliveries %+v; want the probe of %s and the callback to its /pix, both 200", deliveries, url)
	}
}
