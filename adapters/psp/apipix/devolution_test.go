package apipix_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/pixgate/pixgate/adapters/psp"
	"github.com/pixgate/pixgate/adapters/psp/apipix"
	"github.com/pixgate/pixgate/adapters/psp/psptest"
	"github.com/pixgate/pixgate/ports"
)

func refund(e2e, reason string) ports.Devolution {
	return ports.Devolution{EndToEndID: e2e, ID: "r1", Amount: 1000, Reason: reason, Kind: ports.DevolutionRefund}
}

func TestTheDevolutionIsAPUTOfAPIPixOverMutualTLS(t *testing.T) {
	t.Parallel()
	p := psptest.New(t, psptest.Config{})
	c := newClient(t, p, nil)
	e2e := paidPix(t, p, c, "10.00")
	res, err := c.RequestDevolution(context.Background(), refund(e2e, "produto com defeito"))
	if err != nil || res != (ports.DevolutionResult{Status: ports.DevolutionInProgress}) {
		t.Fatalf("RequestDevolution = %+v, %v; want EM_PROCESSAMENTO", res, err)
	}
	d, ok := p.Devolution(e2e, "r1")
	if !ok || d.Valor != "10.00" || d.Natureza != "ORIGINAL" || d.Descricao != "produto com defeito" {
		t.Fatalf("the PSP holds %+v, want 10.00 ORIGINAL with the reason", d)
	}

	t.Run("without a reason there is no descricao", func(t *testing.T) {
		e2e := paidPix(t, p, c, "10.00")
		if _, err := c.RequestDevolution(context.Background(), refund(e2e, "")); err != nil {
			t.Fatal(err)
		}
		if d, _ := p.Devolution(e2e, "r1"); d.Descricao != "" {
			t.Fatalf("descricao %q", d.Descricao)
		}
	})
	t.Run("a long reason is cut at 140 characters", func(t *testing.T) {
		e2e := paidPix(t, p, c, "10.00")
		if _, err := c.RequestDevolution(context.Background(), refund(e2e, strings.Repeat("ã", 200))); err != nil {
			t.Fatal(err)
		}
		if d, _ := p.Devolution(e2e, "r1"); d.Descricao != strings.Repeat("ã", 140) {
			t.Fatalf("descricao of %d characters", len([]rune(d.Descricao)))
		}
	})
}

func TestTheAnswerMapsToTheDevolutionResult(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		status, motivo string
		want           ports.DevolutionStatus
	}{
		{psptest.DevolutionInProgress, "", ports.DevolutionInProgress},
		{psptest.DevolutionReturned, "", ports.DevolutionReturned},
		{psptest.DevolutionNotDone, "conta encerrada", ports.DevolutionNotDone},
	} {
		t.Run(c.status, func(t *testing.T) {
			t.Parallel()
			p := psptest.New(t, psptest.Config{})
			if err := p.SetDevolutionAnswer(c.status, c.motivo); err != nil {
				t.Fatal(err)
			}
			a := newClient(t, p, nil)
			e2e := paidPix(t, p, a, "10.00")
			got, err := a.RequestDevolution(context.Background(), refund(e2e, ""))
			d, _ := p.Devolution(e2e, "r1")
			if err != nil || got.Status != c.want || got.ReturnID != map[bool]string{true: d.RtrID}[c.want == ports.DevolutionReturned] || got.Reason != c.motivo {
				t.Fatalf("got %+v, %v; want %s (the PSP holds %+v)", got, err, c.want, d)
			}
		})
	}
}

func TestAnAnswerThatIsNoDevolutionOfTheRequestIsAnError(t *testing.T) {
	t.Parallel()
	p := psptest.New(t, psptest.Config{})
	c := newClient(t, p, nil)
	for name, body := range map[string]string{
		"DEVOLVIDO without rtrId": `{"id":"r1","valor":"10.00","status":"DEVOLVIDO"}`,
		"another devolution id":   `{"id":"r2","valor":"10.00","status":"EM_PROCESSAMENTO"}`,
		"another amount":          `{"id":"r1","valor":"9.99","status":"EM_PROCESSAMENTO"}`,
		"an unknown status":       `{"id":"r1","valor":"10.00","status":"REALIZADO"}`,
		"no JSON":                 `<html>maintenance</html>`,
	} {
		t.Run(name, func(t *testing.T) {
			e2e := paidPix(t, p, c, "10.00")
			p.Inject(psptest.Fault{Status: http.StatusCreated, ContentType: "application/json", Body: []byte(body)}.On(psptest.OpDevolutionPut), 1)
			if got, err := c.RequestDevolution(context.Background(), refund(e2e, "")); err == nil {
				t.Fatalf("answered %+v", got)
			}
		})
	}
}

func TestAFailedPUTIsNotRepeatedAndItsErrorNeverShowsASecret(t *testing.T) {
	t.Parallel()
	for _, status := range []int{400, 403, 404, 409, 500, 503} {
		t.Run(http.StatusText(status), func(t *testing.T) {
			t.Parallel()
			p := psptest.New(t, psptest.Config{})
			c := newClient(t, p, nil)
			e2e := paidPix(t, p, c, "10.00")
			body := `{"title":"Requisição inválida","detail":"client secret ` + p.ClientSecret + ` recusado"}`
			p.Inject(psptest.Fault{Status: status, RetryAfter: "0", ContentType: "application/problem+json", Body: []byte(body)}.On(psptest.OpDevolutionPut), 1)
			_, err := c.RequestDevolution(context.Background(), refund(e2e, ""))
			if err == nil {
				t.Fatalf("%d was taken for an answer", status)
			}
			if strings.Contains(err.Error(), p.ClientSecret) || !strings.Contains(err.Error(), "Requisição inválida") {
				t.Fatalf("%d: %v", status, err)
			}
			if n := p.Requests(psptest.OpDevolutionPut); n != 1 {
				t.Fatalf("%d: the PUT was sent %d times; a reused id answers 400, so it must be sent once", status, n)
			}
		})
	}
}

func TestAReusedDevolutionIDIsRefusedByThePSP(t *testing.T) {
	t.Parallel()
	p := psptest.New(t, psptest.Config{})
	c := newClient(t, p, nil)
	e2e := paidPix(t, p, c, "20.00")
	if _, err := c.RequestDevolution(context.Background(), refund(e2e, "")); err != nil {
		t.Fatal(err)
	}
	if _, err := c.RequestDevolution(context.Background(), refund(e2e, "")); !errors.Is(err, ports.ErrDevolutionRefused) {
		t.Fatalf("second PUT with the same id: %v, want the PSP's refusal", err)
	}
}

func TestASlowPSPTimesOut(t *testing.T) {
	t.Parallel()
	p := psptest.New(t, psptest.Config{})
	c := newClient(t, p, func(cfg *apipix.Config) { cfg.Transport.Timeout = 300 * time.Millisecond })
	e2e := paidPix(t, p, c, "10.00")
	p.Inject(psptest.Slow(time.Minute).On(psptest.OpDevolutionPut), 1)
	start := time.Now()
	_, err := c.RequestDevolution(context.Background(), refund(e2e, ""))
	if !errors.Is(err, psp.ErrOutcomeUnknown) || time.Since(start) > 5*time.Second {
		t.Fatalf("err = %v after %s", err, time.Since(start))
	}
}

func TestTokensAreRenewedAsTheyExpire(t *testing.T) {
	t.Parallel()
	p := psptest.New(t, psptest.Config{TokenLifetime: 2 * time.Second})
	c := newClient(t, p, nil)
	deadline := time.Now().Add(15 * time.Second)
	for p.Requests(psptest.OpToken) < 2 {
		if time.Now().After(deadline) {
			t.Fatalf("no second token in 15 s (%d token requests)", p.Requests(psptest.OpToken))
		}
		e2e := paidPix(t, p, c, "1.00")
		if _, err := c.RequestDevolution(context.Background(), ports.Devolution{EndToEndID: e2e, ID: "r1", Amount: 100}); err != nil {
			t.Fatal(err)
		}
	}
	if n := p.Answered("", http.StatusUnauthorized); n != 0 {
		t.Fatalf("%d calls answered 401: a token was sent after it expired", n)
	}
}

func TestTLSTrustsOnlyTheConfiguredCAAndPresentsTheClientCertificate(t *testing.T) {
	t.Parallel()
	p := psptest.New(t, psptest.Config{})
	untrusting := newClient(t, p, func(cfg *apipix.Config) { cfg.Transport.CAFiles = nil })
	if _, err := untrusting.RequestDevolution(context.Background(), refund("E12345678202611221200abcdefghijk", "")); err == nil {
		t.Fatal("a PSP whose CA is not trusted was answered")
	}
	other := psptest.NewCA(t, "another CA").IssueClient(t, "pixgate")
	stranger := newClient(t, p, func(cfg *apipix.Config) {
		cfg.Transport.CertFile, cfg.Transport.KeyFile = other.CertFile, other.KeyFile
	})
	if _, err := stranger.RequestDevolution(context.Background(), refund("E12345678202611221200abcdefghijk", "")); err == nil {
		t.Fatal("a client certificate of another CA was accepted")
	}
	if n := p.Requests(""); n != 0 {
		t.Fatalf("%d requests reached the PSP without mutual TLS", n)
	}
	withP12 := newClient(t, p, func(cfg *apipix.Config) {
		cfg.Transport.CertFile, cfg.Transport.KeyFile = "", ""
		cfg.Transport.P12File, cfg.Transport.P12Password = p.Client.P12File, p.Client.P12Password
	})
	e2e := paidPix(t, p, withP12, "10.00")
	if _, err := withP12.RequestDevolution(context.Background(), refund(e2e, "")); err != nil {
		t.Fatalf("with the PKCS#12 bundle: %v", err)
	}
}

func TestRedirectsAreNotFollowed(t *testing.T) {
	t.Parallel()
	p := psptest.New(t, psptest.Config{})
	c := newClient(t, p, nil)
	e2e := paidPix(t, p, c, "10.00")
	p.Inject(psptest.Fault{Status: http.StatusTemporaryRedirect, ContentType: "text/plain", Body: []byte("elsewhere")}.On(psptest.OpDevolutionPut), 1)
	if _, err := c.RequestDevolution(context.Background(), refund(e2e, "")); err == nil {
		t.Fatal("a redirect was taken for an answer")
	}
	if n := p.Requests(""); n != 3 { // the token, the cob, the devolution
		t.Fatalf("%d requests", n)
	}
}

func TestADevolutionThatWouldLeaveItsPathIsRefusedBeforeAnythingIsSent(t *testing.T) {
	t.Parallel()
	p := psptest.New(t, psptest.Config{})
	c := newClient(t, p, nil)
	for _, d := range []ports.Devolution{
		{EndToEndID: "../../admin", ID: "r1", Amount: 1},
		{EndToEndID: "E12345678202611221200abcdefghijk", ID: "r1/../x", Amount: 1},
		{EndToEndID: "E12345678202611221200abcdefghijk", ID: "r1", Amount: 0},
	} {
		if _, err := c.RequestDevolution(context.Background(), d); err == nil {
			t.Fatalf("%+v was sent", d)
		}
	}
	if n := p.Requests(""); n != 0 {
		t.Fatalf("%d requests reached the PSP", n)
	}
}

func TestNewNeedsTheKeyAndUsableTransportSettings(t *testing.T) {
	t.Parallel()
	p := psptest.New(t, psptest.Config{})
	for name, edit := range map[string]func(*apipix.Config){
		"no key":      func(c *apipix.Config) { c.Key = " " },
		"an http URL": func(c *apipix.Config) { c.Transport.APIURL = "http://psp.example/v2" },
		"no secret":   func(c *apipix.Config) { c.Transport.ClientSecret = "" },
		"no key file": func(c *apipix.Config) { c.Transport.KeyFile = "/no/such/key.pem" },
		"wrong P12": func(c *apipix.Config) {
			c.Transport.CertFile, c.Transport.KeyFile, c.Transport.P12File, c.Transport.P12Password = "", "", p.Client.P12File, "wrong"
		},
		"no certificate": func(c *apipix.Config) { c.Transport.CertFile, c.Transport.KeyFile = "", "" },
	} {
		t.Run(name, func(t *testing.T) {
			cfg := apipix.Config{Key: p.Chave, Transport: psp.Config{APIURL: p.APIURL, ClientID: p.ClientID, ClientSecret: p.ClientSecret,
				CertFile: p.Client.CertFile, KeyFile: p.Client.KeyFile}}
			edit(&cfg)
			_, err := apipix.New(cfg)
			if err == nil {
				t.Fatal("accepted")
			}
			if strings.Contains(err.Error(), p.ClientSecret) || strings.Contains(err.Error(), p.Client.P12Password) {
				t.Fatalf("the error shows a secret: %v", err)
			}
		})
	}
}
