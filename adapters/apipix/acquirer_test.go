package apipix_test

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pixgate/pixgate/adapters/apipix"
	"github.com/pixgate/pixgate/ports"
)

const token = "s3cr3t-acquirer-token-0123456789"

const e2e = "E12345678202611221200abcdefghijk"

// psp is an acquirer's API Pix over real TLS: it records what it was asked and answers with
// answer.
type psp struct {
	srv    *httptest.Server
	caFile string

	mu     sync.Mutex
	asked  []*http.Request
	bodies []map[string]any
	answer func(w http.ResponseWriter, r *http.Request)
}

func newPSP(t *testing.T) *psp {
	t.Helper()
	p := &psp{}
	p.srv = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		var body map[string]any
		_ = json.Unmarshal(raw, &body)
		p.mu.Lock()
		p.asked, p.bodies = append(p.asked, r), append(p.bodies, body)
		answer := p.answer
		p.mu.Unlock()
		answer(w, r)
	}))
	t.Cleanup(p.srv.Close)
	p.caFile = filepath.Join(t.TempDir(), "ca.pem")
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: p.srv.Certificate().Raw})
	if err := os.WriteFile(p.caFile, ca, 0o600); err != nil {
		t.Fatal(err)
	}
	p.answerJSON(200, `{"id":"r1","rtrId":"","valor":"10.00","status":"EM_PROCESSAMENTO"}`)
	return p
}

func (p *psp) answerJSON(status int, body string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.answer = func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}
}

func (p *psp) acquirer(t *testing.T, cfg apipix.Config) *apipix.Acquirer {
	t.Helper()
	if cfg.BaseURL == "" {
		cfg.BaseURL = p.srv.URL + "/api/v2/"
	}
	if cfg.Token == "" {
		cfg.Token = token
	}
	if cfg.CAFile == "" {
		cfg.CAFile = p.caFile
	}
	a, err := apipix.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func refund(reason string) ports.Devolution {
	return ports.Devolution{EndToEndID: e2e, ID: "r1", Amount: 1000, Reason: reason, Kind: ports.DevolutionRefund}
}

func TestTheDevolutionIsAPUTOfAPIPix(t *testing.T) {
	p := newPSP(t)
	a := p.acquirer(t, apipix.Config{})
	if _, err := a.RequestDevolution(context.Background(), refund("produto com defeito")); err != nil {
		t.Fatal(err)
	}
	r, body := p.asked[0], p.bodies[0]
	if r.Method != "PUT" || r.URL.Path != "/api/v2/pix/"+e2e+"/devolucao/r1" {
		t.Fatalf("asked %s %s", r.Method, r.URL.Path)
	}
	if r.Header.Get("Authorization") != "Bearer "+token || !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
		t.Fatalf("headers %v", r.Header)
	}
	if body["valor"] != "10.00" || body["natureza"] != "ORIGINAL" || body["descricao"] != "produto com defeito" || len(body) != 3 {
		t.Fatalf("body %v", body)
	}

	t.Run("without a reason there is no descricao", func(t *testing.T) {
		if _, err := a.RequestDevolution(context.Background(), refund("")); err != nil {
			t.Fatal(err)
		}
		if _, ok := p.bodies[1]["descricao"]; ok || len(p.bodies[1]) != 2 {
			t.Fatalf("body %v", p.bodies[1])
		}
	})
	t.Run("a long reason is cut at 140 characters", func(t *testing.T) {
		if _, err := a.RequestDevolution(context.Background(), refund(strings.Repeat("ã", 200))); err != nil {
			t.Fatal(err)
		}
		if got := p.bodies[2]["descricao"].(string); got != strings.Repeat("ã", 140) {
			t.Fatalf("descricao of %d characters", len([]rune(got)))
		}
	})
}

func TestTheAnswerMapsToTheDevolutionResult(t *testing.T) {
	cases := []struct {
		name   string
		status int
		body   string
		want   ports.DevolutionResult
	}{
		{"EM_PROCESSAMENTO", 201, `{"id":"r1","valor":"10.00","status":"EM_PROCESSAMENTO"}`, ports.DevolutionResult{Status: ports.DevolutionInProgress}},
		{"DEVOLVIDO with its rtrId", 200, `{"id":"r1","rtrId":"D12345678202611221200abcdefghijk","valor":"10.00","status":"DEVOLVIDO"}`,
			ports.DevolutionResult{Status: ports.DevolutionReturned, ReturnID: "D12345678202611221200abcdefghijk"}},
		{"NAO_REALIZADO with its motivo", 200, `{"id":"r1","valor":"10.00","status":"NAO_REALIZADO","motivo":"conta encerrada"}`,
			ports.DevolutionResult{Status: ports.DevolutionNotDone, Reason: "conta encerrada"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := newPSP(t)
			p.answerJSON(c.status, c.body)
			got, err := p.acquirer(t, apipix.Config{}).RequestDevolution(context.Background(), refund(""))
			if err != nil || got != c.want {
				t.Fatalf("got %+v, %v; want %+v", got, err, c.want)
			}
		})
	}
}

func TestAnAnswerThatIsNoDevolutionOfTheRequestIsAnError(t *testing.T) {
	for name, body := range map[string]string{
		"DEVOLVIDO without rtrId": `{"id":"r1","valor":"10.00","status":"DEVOLVIDO"}`,
		"another devolution id":   `{"id":"r2","valor":"10.00","status":"EM_PROCESSAMENTO"}`,
		"another amount":          `{"id":"r1","valor":"9.99","status":"EM_PROCESSAMENTO"}`,
		"an unknown status":       `{"id":"r1","valor":"10.00","status":"REALIZADO"}`,
		"no JSON":                 `<html>maintenance</html>`,
	} {
		t.Run(name, func(t *testing.T) {
			p := newPSP(t)
			p.answerJSON(200, body)
			if got, err := p.acquirer(t, apipix.Config{}).RequestDevolution(context.Background(), refund("")); err == nil {
				t.Fatalf("answered %+v", got)
			}
		})
	}
}

func TestAnErrorStatusIsAnErrorThatNeverShowsTheToken(t *testing.T) {
	for _, status := range []int{400, 401, 403, 404, 409, 500, 503} {
		p := newPSP(t)
		p.answerJSON(status, `{"title":"Requisição inválida","detail":"header Authorization: Bearer `+token+` recusado"}`)
		_, err := p.acquirer(t, apipix.Config{}).RequestDevolution(context.Background(), refund(""))
		if err == nil {
			t.Fatalf("%d was taken for an answer", status)
		}
		if strings.Contains(err.Error(), token) || !strings.Contains(err.Error(), "Requisição inválida") {
			t.Fatalf("%d: %v", status, err)
		}
	}
}

func TestASlowAcquirerTimesOut(t *testing.T) {
	p := newPSP(t)
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	p.mu.Lock()
	p.answer = func(http.ResponseWriter, *http.Request) { <-release }
	p.mu.Unlock()
	start := time.Now()
	_, err := p.acquirer(t, apipix.Config{Timeout: 200 * time.Millisecond}).RequestDevolution(context.Background(), refund(""))
	if err == nil || time.Since(start) > 5*time.Second {
		t.Fatalf("err = %v after %s", err, time.Since(start))
	}
	if strings.Contains(err.Error(), token) {
		t.Fatalf("the error shows the token: %v", err)
	}
}

func TestTLSTrustsTheSystemAndTheCAFileOnly(t *testing.T) {
	p := newPSP(t)
	pool, err := apipix.New(apipix.Config{BaseURL: p.srv.URL, Token: token})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pool.RequestDevolution(context.Background(), refund("")); err == nil {
		t.Fatal("a server whose CA is not trusted was answered")
	}
	if len(p.asked) != 0 {
		t.Fatal("the request reached an untrusted server")
	}
	if _, err := p.acquirer(t, apipix.Config{}).RequestDevolution(context.Background(), refund("")); err != nil {
		t.Fatalf("with the CA file: %v", err)
	}
}

func TestRedirectsAreNotFollowed(t *testing.T) {
	p := newPSP(t)
	p.mu.Lock()
	p.answer = func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/elsewhere") {
			w.WriteHeader(200)
			_, _ = io.WriteString(w, `{"id":"r1","valor":"10.00","status":"EM_PROCESSAMENTO"}`)
			return
		}
		http.Redirect(w, r, "/elsewhere", http.StatusTemporaryRedirect)
	}
	p.mu.Unlock()
	if _, err := p.acquirer(t, apipix.Config{}).RequestDevolution(context.Background(), refund("")); err == nil {
		t.Fatal("a redirect was followed")
	}
	if len(p.asked) != 1 {
		t.Fatalf("%d requests", len(p.asked))
	}
}

func TestADevolutionThatWouldLeaveItsPathIsRefused(t *testing.T) {
	p := newPSP(t)
	a := p.acquirer(t, apipix.Config{})
	for _, d := range []ports.Devolution{
		{EndToEndID: "../../admin", ID: "r1", Amount: 1},
		{EndToEndID: e2e, ID: "r1/../x", Amount: 1},
		{EndToEndID: e2e, ID: "r1", Amount: 0},
	} {
		if _, err := a.RequestDevolution(context.Background(), d); err == nil {
			t.Fatalf("%+v was sent", d)
		}
	}
	if len(p.asked) != 0 {
		t.Fatalf("%d requests reached the acquirer", len(p.asked))
	}
}

func TestConfigurationErrors(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.pem")
	_ = os.WriteFile(bad, []byte("not a certificate"), 0o600)
	for name, cfg := range map[string]apipix.Config{
		"an http URL":            {BaseURL: "http://psp.example.com", Token: token},
		"a URL with credentials": {BaseURL: "https://u:p@psp.example.com", Token: token},
		"a URL with a query":     {BaseURL: "https://psp.example.com/?a=b", Token: token},
		"no token":               {BaseURL: "https://psp.example.com"},
		"a token with a space":   {BaseURL: "https://psp.example.com", Token: "a b"},
		"a missing CA file":      {BaseURL: "https://psp.example.com", Token: token, CAFile: "/no/such/file.pem"},
		"a CA file without PEM":  {BaseURL: "https://psp.example.com", Token: token, CAFile: bad},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := apipix.New(cfg)
			if err == nil {
				t.Fatal("accepted")
			}
			if strings.Contains(err.Error(), token) {
				t.Fatalf("the error shows the token: %v", err)
			}
		})
	}
}
