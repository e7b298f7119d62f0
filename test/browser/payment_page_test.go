package browser_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"iter"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/pixgate/pixgate/test/internal/childproc"
)

const (
	envRequireBrowser = "PIXGATE_TEST_REQUIRE_BROWSER"
	envChromium       = "PIXGATE_TEST_CHROMIUM"
	envArtifacts      = "PIXGATE_TEST_ARTIFACTS"
)

// chromium finds the browser, or skips (fails with PIXGATE_TEST_REQUIRE_BROWSER=1).
func chromium(t *testing.T) string {
	t.Helper()
	path := os.Getenv(envChromium)
	if path == "" {
		path = "/usr/bin/chromium"
	}
	if _, err := os.Stat(path); err != nil {
		if os.Getenv(envRequireBrowser) == "1" {
			t.Fatalf("Chromium is required (%s=1) but %s is missing: apt-get install -y chromium", envRequireBrowser, path)
		}
		t.Skipf("no Chromium at %s (apt-get install -y chromium, or set %s); %s=1 makes this a failure", path, envChromium, envRequireBrowser)
	}
	return path
}

// artifacts is where screenshots go.
func artifacts(t *testing.T) string {
	t.Helper()
	dir := os.Getenv(envArtifacts)
	if dir == "" {
		return t.TempDir()
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// server is a `pixgate serve` child process on loopback, sandbox on, memory store, with one
// seeded account.
type server struct {
	base, clientID, secret string
	log                    *lockedBuffer // its stderr
}

func startPixgate(t *testing.T) *server {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	bin := filepath.Join(t.TempDir(), "pixgate")
	build := exec.CommandContext(ctx, "go", "build", "-o", bin, "github.com/pixgate/pixgate/cmd/pixgate")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building pixgate: %v\n%s", err, out)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	s := &server{base: "http://" + addr, clientID: "browser-client", secret: rand.Text() + rand.Text(), log: &lockedBuffer{}}
	cmd := exec.Command(bin, "serve")
	cmd.Env = append(os.Environ(), "PIXGATE_ADDR="+addr, "PIXGATE_SANDBOX=true", "PIXGATE_STORE=memory",
		"PIXGATE_SEED_CLIENTS=Padaria Pão Quente:"+s.clientID+":"+s.secret, "PIXGATE_LOG_LEVEL=warn")
	cmd.Stdout, cmd.Stderr = io.Discard, s.log
	childproc.DieWithParent(cmd) // should this binary die without its cleanups
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
		}
	})
	for deadline := time.Now().Add(30 * time.Second); ; {
		res, err := http.Get(s.base + "/healthz")
		if err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return s
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("pixgate did not answer /healthz within 30 s")
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// lockedBuffer collects a child's output, written by exec's copying goroutine.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// call sends a JSON request with the account's token and decodes the answer.
func (s *server) call(t *testing.T, method, path, token string, body any, want int) map[string]any {
	t.Helper()
	var rd io.Reader
	if body != nil {
		raw, _ := json.Marshal(body)
		rd = bytes.NewReader(raw)
	}
	req, _ := http.NewRequest(method, s.base+path, rd)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	if res.StatusCode != want {
		t.Fatalf("%s %s: %d %s", method, path, res.StatusCode, raw)
	}
	var m map[string]any
	_ = json.Unmarshal(raw, &m)
	return m
}

func (s *server) token(t *testing.T) string {
	t.Helper()
	form := url.Values{"grant_type": {"client_credentials"}, "client_id": {s.clientID}, "client_secret": {s.secret}}
	res, err := http.PostForm(s.base+"/auth/token", form)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	if err := json.NewDecoder(res.Body).Decode(&tok); err != nil || tok.AccessToken == "" {
		t.Fatalf("token: %d %v", res.StatusCode, err)
	}
	return tok.AccessToken
}

func (s *server) charge(t *testing.T, token string, amount, expirationSeconds int) (id, paymentURL string) {
	t.Helper()
	m := s.call(t, "POST", "/transaction", token, map[string]any{
		"amount": amount, "paymentMethod": "PIX", "pix": map[string]any{"expirationSeconds": expirationSeconds},
		"customer": map[string]any{"name": "Maria Pagadora", "email": "maria@example.com.br", "document": "529.982.247-25"},
	}, http.StatusCreated)
	return m["id"].(string), m["paymentUrl"].(string)
}

// browser starts headless Chromium with the flags CI uses, one tab at width x height, whose
// language (Accept-Language) is lang.
func browser(t *testing.T, path string, width, height int, lang string) context.Context {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(path), chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.Flag("disable-background-networking", true), chromedp.WindowSize(width, height),
		chromedp.Flag("lang", lang), chromedp.Flag("accept-lang", lang))
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(alloc)
	t.Cleanup(func() { cancel(); cancelAlloc() })
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(int64(width), int64(height))); err != nil {
		t.Fatalf("starting Chromium: %v", err)
	}
	return ctx
}

// run runs one action, for 20 s at most.
func run[T any](t *testing.T, ctx context.Context, what string, a chromedp.Action[T]) T {
	t.Helper()
	return runFor(t, ctx, what, 20*time.Second, a)
}

func runFor[T any](t *testing.T, ctx context.Context, what string, limit time.Duration, a chromedp.Action[T]) T {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	v, err := chromedp.Run(ctx, a)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	return v
}

func screenshot(t *testing.T, ctx context.Context, dir, name string) {
	t.Helper()
	png := run(t, ctx, "screenshot "+name, chromedp.CaptureScreenshot())
	file := filepath.Join(dir, name)
	if err := os.WriteFile(file, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", file)
}

// TestPaymentPageInChromium opens a charge's paymentUrl in headless Chromium, reads the code
// through the page's DOM, clicks copy, pays the charge through the sandbox API and sees "Pago"
// without a reload; then sees a 60 s charge turn "Expirado" on its own. It takes screenshots
// at 390x844 (a phone) and 1280x800.
func TestPaymentPageInChromium(t *testing.T) {
	path := chromium(t)
	dir := artifacts(t)
	s := startPixgate(t)
	token := s.token(t)
	// The short charge starts first: it expires while the first one is paid.
	_, shortURL := s.charge(t, token, 990, 60)
	shortCreated := time.Now()
	id, payURL := s.charge(t, token, 123456, 900)
	if !strings.HasPrefix(payURL, s.base+"/pay/") {
		t.Fatalf("paymentUrl %q is not on the server %s", payURL, s.base)
	}

	phone := browser(t, path, 390, 844, "pt-BR")
	consoleCtx, stopConsole := context.WithCancel(phone)
	messages := chromedp.Console(consoleCtx)
	run(t, phone, "open the page", chromedp.Navigate(payURL))
	lang := run(t, phone, "read lang", chromedp.Evaluate[string](`document.documentElement.lang`))
	status := run(t, phone, "read the status", chromedp.Text(chromedp.ID("status")))
	amount := run(t, phone, "read the amount", chromedp.Text(chromedp.ID("amount")))
	merchant := run(t, phone, "read the merchant", chromedp.Text(chromedp.ID("merchant")))
	if lang != "pt-BR" || status != "Aguardando pagamento" || amount != "R$ 1.234,56" || merchant != "Padaria Pão Quente" {
		t.Fatalf("lang %q, status %q, amount %q, merchant %q", lang, status, amount, merchant)
	}
	code := run(t, phone, "read the code", chromedp.Value(chromedp.ID("code")))
	want := s.call(t, "GET", "/transaction/"+id, token, nil, http.StatusOK)["pixResponse"].(map[string]any)["uri"]
	if code != want {
		t.Fatalf("the page's code %q, the API's %q", code, want)
	}
	qrLoaded := run(t, phone, "check the QR image", chromedp.Evaluate[bool](`(function(){var i=document.getElementById("qr");return i.complete && i.naturalWidth > 0})()`))
	if !qrLoaded {
		t.Fatal("the QR image did not load")
	}
	overflow := run(t, phone, "check the width", chromedp.Evaluate[bool](`document.documentElement.scrollWidth > window.innerWidth`))
	if overflow {
		t.Error("the page is wider than a 390 px screen")
	}
	// The copy-and-paste box shows the whole code: nothing in it scrolls.
	const codeScrolls = `(function(){var c=document.getElementById("code");return c.scrollHeight > c.clientHeight || c.scrollWidth > c.clientWidth})()`
	if run(t, phone, "check the code box at 390 px", chromedp.Evaluate[bool](codeScrolls)) {
		t.Error("the code box scrolls on a 390 px screen")
	}
	screenshot(t, phone, dir, "payment-page-390x844.png")
	// The narrowest phones: 320 px wide, nothing to scroll sideways.
	run(t, phone, "narrow the screen", chromedp.EmulateViewport(320, 640))
	if run(t, phone, "check 320 px", chromedp.Evaluate[bool](`document.documentElement.scrollWidth > window.innerWidth`)) {
		t.Error("the page is wider than a 320 px screen")
	}
	if run(t, phone, "check the code box at 320 px", chromedp.Evaluate[bool](codeScrolls)) {
		t.Error("the code box scrolls on a 320 px screen")
	}
	run(t, phone, "widen the screen again", chromedp.EmulateViewport(390, 844))

	run(t, phone, "click copy", chromedp.Click(chromedp.ID("copy")))
	copied := run(t, phone, "read the copy result", chromedp.Poll[string](`document.getElementById("copy-result").textContent`,
		chromedp.WithPollingTimeout(5*time.Second)))
	if !strings.HasPrefix(copied, "Código copiado") {
		t.Fatalf("after the click: %q", copied)
	}

	// A marker that a reload would wipe.
	run(t, phone, "mark the document", chromedp.Evaluate[chromedp.Void](`window.pixgateNoReload = true`))
	s.call(t, "POST", "/sandbox/transaction/"+id+"/pay", token, nil, http.StatusOK)
	paidAt := time.Now()
	run(t, phone, "wait for Pago", chromedp.Poll[bool](`document.getElementById("status").textContent === "Pago"`,
		chromedp.WithPollingTimeout(5*time.Second)))
	if took := time.Since(paidAt); took > 2*time.Second {
		t.Errorf("Pago appeared %s after the payment; the page promises 2 s", took)
	}
	if kept := run(t, phone, "check no reload", chromedp.Evaluate[bool](`window.pixgateNoReload === true`)); !kept {
		t.Fatal("the page reloaded to show the payment")
	}
	if hidden := run(t, phone, "check the QR is put away", chromedp.Evaluate[bool](`document.getElementById("charge").hidden`)); !hidden {
		t.Error("the paid page still offers the QR code")
	}
	if shown := run(t, phone, "check the note on following the payment is put away",
		chromedp.Evaluate[bool](`document.getElementById("follows").offsetParent !== null`)); shown {
		t.Error("the paid page still says it updates itself when the payment is confirmed")
	}
	screenshot(t, phone, dir, "payment-page-paid-390x844.png")

	desktop := browser(t, path, 1280, 800, "pt-BR")
	run(t, desktop, "open the short charge", chromedp.Navigate(shortURL))
	if st := run(t, desktop, "read its status", chromedp.Text(chromedp.ID("status"))); st != "Aguardando pagamento" {
		t.Fatalf("the short charge reads %q", st)
	}
	screenshot(t, desktop, dir, "payment-page-1280x800.png")
	wait := time.Until(shortCreated.Add(70 * time.Second))
	t.Logf("waiting up to %s for the 60 s charge to expire", wait.Round(time.Second))
	runFor(t, desktop, "wait for Expirado", wait+5*time.Second, chromedp.Poll[bool](`document.getElementById("status").textContent === "Expirado"`,
		chromedp.WithPollingTimeout(wait)))
	screenshot(t, desktop, dir, "payment-page-expired-1280x800.png")

	// English, by the browser's own Accept-Language.
	en := browser(t, path, 1280, 800, "en-US")
	run(t, en, "open the paid page in English", chromedp.Navigate(payURL))
	if lang, st := run(t, en, "read lang", chromedp.Evaluate[string](`document.documentElement.lang`)),
		run(t, en, "read the status", chromedp.Text(chromedp.ID("status"))); lang != "en" || st != "Paid" {
		t.Errorf("English page: lang %q, status %q", lang, st)
	}

	// Nothing the page did was refused by its own Content-Security-Policy, and no script failed.
	run(t, phone, "leave", chromedp.Navigate("about:blank"))
	checkConsole(t, messages, stopConsole)
	if strings.Contains(s.log.String(), `"level":"ERROR"`) {
		t.Errorf("pixgate logged errors:\n%s", s.log)
	}
}

// checkConsole reads the console messages of the tab for a second more, then ends the
// subscription, and fails on a CSP violation or an uncaught exception.
func checkConsole(t *testing.T, messages iter.Seq2[chromedp.ConsoleMessage, error], stop context.CancelFunc) {
	t.Helper()
	done := make(chan struct{})
	var seen []string
	go func() {
		defer close(done)
		for m, err := range messages {
			if err != nil {
				return
			}
			text := fmt.Sprint(m)
			if m.IsException() || strings.Contains(text, "Content Security Policy") || strings.Contains(text, "Refused to") {
				seen = append(seen, text)
			}
		}
	}()
	time.Sleep(time.Second)
	stop()
	<-done
	if len(seen) > 0 {
		t.Errorf("the console shows:\n%s", strings.Join(seen, "\n"))
	}
}
