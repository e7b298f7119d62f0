package main

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/pixgate/pixgate/adapters/psp/psptest"
)

// The webhook of pixgate's key kept registered at the PSP (PIXGATE_ACQUIRER_WEBHOOK_*), against
// the fake PSP. Helpers here start with "wr".

const wrURL = "https://callbacks.pixgate.example/acquirer"

// wrJob is the registration job of e, failing the test when there is none.
func wrJob(t *testing.T, e *env) job {
	t.Helper()
	for _, j := range e.app.jobs {
		if j.name == acquirerWebhookJobName {
			return j
		}
	}
	t.Fatalf("no job %q", acquirerWebhookJobName)
	return job{}
}

func wrRun(t *testing.T, j job) {
	t.Helper()
	if _, err := j.run(context.Background()); err != nil {
		t.Fatalf("the registration job: %v", err)
	}
}

func TestTheWebhookIsRegisteredAtStartWithoutHoldingTheStart(t *testing.T) {
	t.Parallel()
	t.Run("registered at start", func(t *testing.T) {
		t.Parallel()
		p := psptest.New(t, psptest.Config{})
		vars := dvPSPVars(p)
		vars["PIXGATE_ACQUIRER_WEBHOOK_URL"], vars["PIXGATE_QR_PROCESS"] = wrURL, "false"
		s := lgServe(t, vars)
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			if hook, ok := p.Webhook(p.Chave); ok && hook.WebhookURL == wrURL {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("no webhook registered 10 s after the start:\n%s", s.stderr)
			}
		}
		if n := p.Requests(psptest.OpWebhookPut); n != 1 {
			t.Fatalf("%d PUTs, want 1", n)
		}
		if err := s.stop(); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("a PSP that is down neither holds the start nor /readyz, and the failure is logged", func(t *testing.T) {
		t.Parallel()
		p := psptest.New(t, psptest.Config{})
		p.Inject(psptest.Fault{Status: http.StatusServiceUnavailable, RetryAfter: "0"}, -1)
		vars := dvPSPVars(p)
		vars["PIXGATE_ACQUIRER_WEBHOOK_URL"], vars["PIXGATE_QR_PROCESS"], vars["PIXGATE_ACQUIRER_TIMEOUT"] = wrURL, "false", "1s"
		s := lgServe(t, vars)
		if r := s.call("health.ready", "GET", "/readyz", "", nil); r.status != http.StatusOK {
			t.Fatalf("/readyz %d while the PSP is down, want 200", r.status)
		}
		for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			if strings.Contains(s.stderr.String(), acquirerWebhookJobName) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the failed registration was not logged:\n%s", s.stderr)
			}
		}
		if err := s.stop(); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(s.stderr.String(), p.ClientSecret) {
			t.Fatal("the client secret reached the log")
		}
	})
}

func TestWebhookRegistrationRuns(t *testing.T) {
	t.Parallel()
	p := psptest.New(t, psptest.Config{})
	vars := dvPSPVars(p)
	vars["PIXGATE_ACQUIRER_WEBHOOK_URL"] = wrURL
	e := newEnv(t, vars)
	j := wrJob(t, e)
	if j.pace.Interval != time.Hour {
		t.Fatalf("the registration runs every %s, want every hour", j.pace.Interval)
	}

	wrRun(t, j)
	if hook, _ := p.Webhook(p.Chave); hook.WebhookURL != wrURL || p.Requests(psptest.OpWebhookPut) != 1 {
		t.Fatalf("after the first run the PSP holds %q after %d PUTs, want %s after 1", hook.WebhookURL, p.Requests(psptest.OpWebhookPut), wrURL)
	}
	t.Run("an equal registration is not written again", func(t *testing.T) {
		gets := p.Requests(psptest.OpWebhookGet)
		wrRun(t, j)
		if p.Requests(psptest.OpWebhookPut) != 1 || p.Requests(psptest.OpWebhookGet) != gets+1 {
			t.Fatalf("%d PUTs and %d GETs more, want none and 1", p.Requests(psptest.OpWebhookPut)-1, p.Requests(psptest.OpWebhookGet)-gets)
		}
	})
	t.Run("a different registration is replaced", func(t *testing.T) {
		if err := e.app.psp.RegisterWebhook(context.Background(), "https://elsewhere.example/hooks"); err != nil {
			t.Fatal(err)
		}
		wrRun(t, j)
		if hook, _ := p.Webhook(p.Chave); hook.WebhookURL != wrURL || p.Requests(psptest.OpWebhookPut) != 3 {
			t.Fatalf("the PSP holds %q after %d PUTs, want %s after 3", hook.WebhookURL, p.Requests(psptest.OpWebhookPut), wrURL)
		}
	})
}

func TestTheWebhookURLDefaultsToThePublicURL(t *testing.T) {
	t.Parallel()
	p := psptest.New(t, psptest.Config{})
	vars := dvPSPVars(p)
	vars["PIXGATE_PUBLIC_URL"] = "https://pay.pixgate.example/"
	e := newEnv(t, vars)
	wrRun(t, wrJob(t, e))
	if hook, _ := p.Webhook(p.Chave); hook.WebhookURL != "https://pay.pixgate.example/acquirer" {
		t.Fatalf("registered %q, want PIXGATE_PUBLIC_URL followed by /acquirer", hook.WebhookURL)
	}
}

func TestWebhookRegistrationOffMakesNoCall(t *testing.T) {
	t.Parallel()
	p := psptest.New(t, psptest.Config{})
	vars := dvPSPVars(p)
	vars["PIXGATE_ACQUIRER_WEBHOOK_URL"], vars["PIXGATE_ACQUIRER_WEBHOOK_REGISTER"] = wrURL, "false"
	e := newEnv(t, vars)
	for _, j := range e.app.jobs {
		if j.name == acquirerWebhookJobName {
			t.Fatal("a registration job with PIXGATE_ACQUIRER_WEBHOOK_REGISTER=false")
		}
	}
	if n := p.Requests(psptest.OpWebhookGet) + p.Requests(psptest.OpWebhookPut); n != 0 {
		t.Fatalf("%d webhook calls", n)
	}
}

func TestWithThePSPEachWithdrawalNamesItsAcquirer(t *testing.T) {
	t.Parallel()
	p := psptest.New(t, psptest.Config{})
	vars := dvPSPVars(p)
	vars["PIXGATE_ACQUIRER_NAME"] = "PSP_TESTE"
	e := acqEnv(t, vars)
	_, tok := e.account()
	e.dvPaidAt(tok, p)
	r := e.do("POST", "/withdrawal", tok, map[string]any{"amount": 500, "pixKey": map[string]any{"key": "maria@example.com", "type": "EMAIL"}})
	if r.status != http.StatusCreated {
		t.Fatalf("POST /withdrawal: %d %s", r.status, r.body)
	}
	if got := r.json(t)["acquirer"]; got != "PSP_TESTE" {
		t.Fatalf("acquirer %v, want PIXGATE_ACQUIRER_NAME", got)
	}
}
