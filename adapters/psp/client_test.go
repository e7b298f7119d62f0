package psp_test

import (
	"context"
	"crypto/x509"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pixgate/pixgate/adapters/psp"
	"github.com/pixgate/pixgate/adapters/psp/psptest"
)

func TestMutualTLSReachesTheAPIWithEachFormOfTheCertificate(t *testing.T) {
	t.Parallel()
	p := psptest.New(t, psptest.Config{})
	for name, edit := range map[string]func(*psp.Config){
		"PEM certificate and key files": nil,
		"a PKCS#12 bundle and its password": func(c *psp.Config) {
			c.CertFile, c.KeyFile, c.P12File, c.P12Password = "", "", p.Client.P12File, p.Client.P12Password
		},
		"a PKCS#12 bundle with an empty password": func(c *psp.Config) {
			c.CertFile, c.KeyFile, c.P12File, c.P12Password = "", "", p.Client.WriteP12(t, ""), ""
		},
	} {
		t.Run(name, func(t *testing.T) {
			c, obs := newClient(t, p, edit)
			id := txid()
			cob, err := putCob(context.Background(), c, p, id, "12.34")
			if err != nil {
				t.Fatal(err)
			}
			if cob.TxID != id || cob.Valor.Original != "12.34" || cob.Status != psptest.CobActive || cob.PixCopiaECola == "" {
				t.Fatalf("answered %+v", cob)
			}
			got := obs.all()
			if len(got) != 2 || got[0].Operation != "token" || got[1].Operation != "cob_put" || got[1].Outcome != psp.OutcomeOK || got[1].Attempts != 1 {
				t.Fatalf("observations %+v", got)
			}
		})
	}
}

func TestHandshakesThatMustFail(t *testing.T) {
	t.Parallel()
	p := psptest.New(t, psptest.Config{})
	stranger := psptest.NewCA(t, "another CA").IssueClient(t, "pixgate")
	for name, edit := range map[string]func(*psp.Config){
		"a PSP whose CA pixgate does not trust": func(c *psp.Config) { c.CAFiles = nil },
		"a client certificate of another CA": func(c *psp.Config) {
			c.CertFile, c.KeyFile = stranger.CertFile, stranger.KeyFile
		},
	} {
		t.Run(name, func(t *testing.T) {
			c, _ := newClient(t, p, func(c *psp.Config) { edit(c); c.MaxAttempts = 1 })
			before := p.Requests("")
			_, err := putCob(context.Background(), c, p, txid(), "1.00")
			var e *psp.Error
			if !errors.As(err, &e) || e.Outcome != psp.OutcomeUnavailable || !errors.Is(err, psp.ErrOutcomeUnknown) || e.Status != 0 {
				t.Fatalf("err = %v", err)
			}
			if p.Requests("") != before {
				t.Fatal("a request went through the failed handshake")
			}
			if name == "a PSP whose CA pixgate does not trust" {
				if !errors.As(err, new(x509.UnknownAuthorityError)) {
					t.Fatalf("err = %v, want the unknown authority", err)
				}
			}
		})
	}
}

func TestTokensAreRenewedAheadOfTheirExpiryDuringARun(t *testing.T) {
	t.Parallel()
	const lifetime = time.Second
	p := psptest.New(t, psptest.Config{TokenLifetime: lifetime})
	c, _ := newClient(t, p, nil)
	ctx := context.Background()
	id := txid()
	start := time.Now()
	if _, err := putCob(ctx, c, p, id, "5.00"); err != nil {
		t.Fatal(err)
	}
	calls := 1
	for time.Since(start) < 3500*time.Millisecond && calls < 2000 {
		if _, err := getCob(ctx, c, id); err != nil {
			t.Fatalf("call %d, %s in: %v", calls, time.Since(start), err)
		}
		calls++
		time.Sleep(20 * time.Millisecond) // paces the run; nothing waits on it
	}
	elapsed := time.Since(start)
	tokens, rejected := p.Requests(psptest.OpToken), p.Answered("", http.StatusUnauthorized)
	// A token lives a second at the PSP: a run of over three seconds needs at least three.
	// It is renewed a fifth of its life ahead, so fetches are at least 0.8 s apart, but for
	// those a 401 asked for (a machine slow enough to let one expire on the way).
	if most := 1 + int(elapsed/(800*time.Millisecond)) + rejected; tokens < 3 || tokens > most {
		t.Fatalf("%d token requests for %d calls in %s (%d answered 401); want 3 to %d", tokens, calls, elapsed, rejected, most)
	}
}

func TestFiftyConcurrentCallsFetchOneToken(t *testing.T) {
	t.Parallel()
	p := psptest.New(t, psptest.Config{TokenLifetime: time.Minute})
	c, obs := newClient(t, p, nil)
	start := make(chan struct{})
	errs := make(chan error, 50)
	var wg sync.WaitGroup
	for range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			_, err := putCob(context.Background(), c, p, txid(), "1.00")
			errs <- err
		}()
	}
	close(start)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if n := p.Requests(psptest.OpToken); n != 1 {
		t.Fatalf("%d token requests, want 1", n)
	}
	if n := p.Cobs(); n != 50 {
		t.Fatalf("%d cobs, want 50", n)
	}
	tokenObs := 0
	for _, o := range obs.all() {
		if o.Operation == "token" {
			tokenObs++
		}
	}
	if tokenObs != 1 {
		t.Fatalf("%d token fetches observed", tokenObs)
	}
}

func TestA401DropsTheTokenAndRetriesOnceWithAFreshOne(t *testing.T) {
	t.Parallel()
	p := psptest.New(t, psptest.Config{TokenLifetime: time.Minute})
	c, obs := newClient(t, p, nil)
	ctx := context.Background()
	if _, err := putCob(ctx, c, p, txid(), "1.00"); err != nil {
		t.Fatal(err)
	}

	t.Run("one 401: the call succeeds on its second request", func(t *testing.T) {
		p.Inject(psptest.Unauthorized().On(psptest.OpCobPut), 1)
		tokens, puts := p.Requests(psptest.OpToken), p.Requests(psptest.OpCobPut)
		id := txid()
		if _, err := putCob(ctx, c, p, id, "2.00"); err != nil {
			t.Fatal(err)
		}
		if got := p.Requests(psptest.OpToken) - tokens; got != 1 {
			t.Fatalf("%d token requests, want 1", got)
		}
		if got := p.Requests(psptest.OpCobPut) - puts; got != 2 {
			t.Fatalf("%d PUTs, want 2", got)
		}
		if _, ok := p.Cob(id); !ok {
			t.Fatal("no cob")
		}
		if last := obs.all()[len(obs.all())-1]; last.Outcome != psp.OutcomeOK || last.Attempts != 2 {
			t.Fatalf("observed %+v", last)
		}
	})

	t.Run("a second 401 is unauthorized, and nothing more is sent", func(t *testing.T) {
		p.Inject(psptest.Unauthorized().On(psptest.OpCobPut), 2)
		puts := p.Requests(psptest.OpCobPut)
		_, err := putCob(ctx, c, p, txid(), "3.00")
		var e *psp.Error
		if !errors.As(err, &e) || !errors.Is(err, psp.ErrUnauthorized) || errors.Is(err, psp.ErrRefused) || errors.Is(err, psp.ErrOutcomeUnknown) || e.Status != 401 {
			t.Fatalf("err = %v", err)
		}
		if got := p.Requests(psptest.OpCobPut) - puts; got != 2 {
			t.Fatalf("%d PUTs, want 2", got)
		}
	})

	t.Run("revoked tokens: twenty calls at once fetch one new token", func(t *testing.T) {
		p.RevokeTokens()
		tokens := p.Requests(psptest.OpToken)
		var wg sync.WaitGroup
		errs := make(chan error, 20)
		for range 20 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, err := putCob(ctx, c, p, txid(), "4.00")
				errs <- err
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
		if got := p.Requests(psptest.OpToken) - tokens; got != 1 {
			t.Fatalf("%d token requests, want 1", got)
		}
	})
}

func TestTheTokenRequestTakesTheShapeThePSPWants(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		psp    psptest.TokenStyle
		client psp.TokenRequest
		ok     bool
	}{
		"form to a PSP that takes forms":   {psptest.TokenForm, psp.TokenForm, true},
		"JSON to a PSP that takes JSON":    {psptest.TokenJSON, psp.TokenJSON, true},
		"the default to a form PSP":        {psptest.TokenForm, "", true},
		"form to a PSP that wants JSON":    {psptest.TokenJSON, psp.TokenForm, false},
		"JSON to a PSP that wants a form":  {psptest.TokenForm, psp.TokenJSON, false},
		"JSON to a PSP that takes either":  {psptest.TokenForm | psptest.TokenJSON, psp.TokenJSON, true},
		"form to a PSP that takes either":  {psptest.TokenForm | psptest.TokenJSON, psp.TokenForm, true},
		"JSON with scopes, which it omits": {psptest.TokenJSON, psp.TokenJSON, true},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			p := psptest.New(t, psptest.Config{TokenStyles: tc.psp})
			c, _ := newClient(t, p, func(c *psp.Config) {
				c.TokenRequest = tc.client
				if strings.Contains(name, "scopes") {
					c.Scopes = []string{"cob.write"}
				}
			})
			id := txid()
			_, err := putCob(context.Background(), c, p, id, "1.00")
			if tc.ok && err != nil {
				t.Fatal(err)
			}
			if tc.ok && strings.Contains(name, "scopes") {
				// Asked for, cob.write alone would not read the cob back.
				if _, err := getCob(context.Background(), c, id); err != nil {
					t.Fatalf("the JSON token request asked for scopes: %v", err)
				}
			}
			if !tc.ok && (!errors.Is(err, psp.ErrUnauthorized) || !strings.Contains(err.Error(), "invalid_request")) {
				t.Fatalf("err = %v, want the token endpoint's refusal", err)
			}
		})
	}
}

func TestScopesAreAskedForInTheFormStyle(t *testing.T) {
	t.Parallel()
	p := psptest.New(t, psptest.Config{})
	ctx := context.Background()
	writer, _ := newClient(t, p, func(c *psp.Config) { c.Scopes = []string{"cob.write"} })
	id := txid()
	if _, err := putCob(ctx, writer, p, id, "1.00"); err != nil {
		t.Fatal(err)
	}
	_, err := getCob(ctx, writer, id)
	var e *psp.Error
	if !errors.As(err, &e) || e.Status != 403 || !errors.Is(err, psp.ErrRefused) || e.Problem.Title != "Acesso Negado" {
		t.Fatalf("reading with a cob.write token: %v", err)
	}
	reader, _ := newClient(t, p, func(c *psp.Config) { c.Scopes = []string{"cob.write", "cob.read"} })
	if _, err := getCob(ctx, reader, id); err != nil {
		t.Fatal(err)
	}
	unknown, _ := newClient(t, p, func(c *psp.Config) { c.Scopes = []string{"cob.fly"} })
	if _, err := getCob(ctx, unknown, id); !errors.Is(err, psp.ErrUnauthorized) || !strings.Contains(err.Error(), "invalid_scope") {
		t.Fatalf("an unknown scope: %v", err)
	}
}

func TestWrongCredentialsAreUnauthorized(t *testing.T) {
	t.Parallel()
	p := psptest.New(t, psptest.Config{})
	c, obs := newClient(t, p, func(c *psp.Config) { c.ClientSecret = "not-the-secret" })
	_, err := putCob(context.Background(), c, p, txid(), "1.00")
	var e *psp.Error
	if !errors.As(err, &e) || e.Outcome != psp.OutcomeUnauthorized || e.Status != 401 || !strings.Contains(err.Error(), "invalid_client") {
		t.Fatalf("err = %v", err)
	}
	if n := p.Requests(psptest.OpToken); n != 1 {
		t.Fatalf("%d token requests: a refusal is not retried", n)
	}
	if p.Requests(psptest.OpCobPut) != 0 {
		t.Fatal("the API was called without a token")
	}
	got := obs.all()
	if len(got) != 2 || got[0].Operation != "token" || got[0].Outcome != psp.OutcomeUnauthorized || got[1].Outcome != psp.OutcomeUnauthorized || got[1].Attempts != 0 {
		t.Fatalf("observations %+v", got)
	}
}

func TestRetries(t *testing.T) {
	t.Parallel()
	p := psptest.New(t, psptest.Config{TokenLifetime: time.Minute})
	ctx := context.Background()

	t.Run("503 twice then 201: the body is sent again and Retry-After honoured", func(t *testing.T) {
		c, obs := newClient(t, p, nil)
		p.Inject(psptest.Unavailable("1").On(psptest.OpCobPut), 2)
		puts := p.Requests(psptest.OpCobPut)
		id := txid()
		start := time.Now()
		cob, err := putCob(ctx, c, p, id, "7.50")
		if err != nil {
			t.Fatal(err)
		}
		if waited := time.Since(start); waited < 2*time.Second {
			t.Fatalf("answered after %s: Retry-After: 1, twice, was not honoured", waited)
		}
		if got := p.Requests(psptest.OpCobPut) - puts; got != 3 {
			t.Fatalf("%d PUTs, want 3", got)
		}
		if stored, _ := p.Cob(id); stored.Valor.Original != "7.50" || cob.Valor.Original != "7.50" {
			t.Fatalf("the third PUT's body did not hold the cob: %+v", stored)
		}
		if last := obs.all()[len(obs.all())-1]; last.Attempts != 3 || last.Outcome != psp.OutcomeOK {
			t.Fatalf("observed %+v", last)
		}
	})

	t.Run("503 without end: the attempts run out and the outcome is unknown", func(t *testing.T) {
		c, _ := newClient(t, p, func(c *psp.Config) { c.MaxAttempts = 3 })
		p.Inject(psptest.Unavailable("").On(psptest.OpCobPut), -1)
		defer p.ClearFaults()
		puts := p.Requests(psptest.OpCobPut)
		_, err := putCob(ctx, c, p, txid(), "1.00")
		var e *psp.Error
		if !errors.As(err, &e) || !errors.Is(err, psp.ErrOutcomeUnknown) || e.Status != 503 || e.Attempts != 3 || e.Problem.Title != "Serviço Indisponível" {
			t.Fatalf("err = %v", err)
		}
		if got := p.Requests(psptest.OpCobPut) - puts; got != 3 {
			t.Fatalf("%d PUTs, want 3", got)
		}
	})

	t.Run("a Retry-After beyond the call's time: the call ends at once", func(t *testing.T) {
		c, _ := newClient(t, p, func(c *psp.Config) { c.Timeout = 20 * time.Second })
		p.Inject(psptest.Unavailable("60").On(psptest.OpCobPut), 1)
		start := time.Now()
		_, err := putCob(ctx, c, p, txid(), "1.00")
		var e *psp.Error
		if !errors.As(err, &e) || e.Status != 503 || e.RetryAfter != time.Minute || !errors.Is(err, psp.ErrOutcomeUnknown) {
			t.Fatalf("err = %v", err)
		}
		if took := time.Since(start); took > 15*time.Second {
			t.Fatalf("took %s: it waited for a retry it had no time for", took)
		}
	})

	t.Run("a request not marked retryable is sent once", func(t *testing.T) {
		c, _ := newClient(t, p, nil)
		p.Inject(psptest.Unavailable("0").On(psptest.OpCobPut), 1)
		puts := p.Requests(psptest.OpCobPut)
		err := c.Do(ctx, psp.Request{Operation: "cob_put", Method: http.MethodPut, Path: []string{"cob", txid()},
			Body: map[string]any{"calendario": map[string]any{}, "valor": map[string]any{"original": "1.00"}, "chave": p.Chave}}, nil)
		if !errors.Is(err, psp.ErrOutcomeUnknown) {
			t.Fatalf("err = %v", err)
		}
		if got := p.Requests(psptest.OpCobPut) - puts; got != 1 {
			t.Fatalf("%d PUTs, want 1", got)
		}
	})

	for _, fault := range []struct {
		name  string
		fault psptest.Fault
	}{
		{"a connection dropped without an answer is retried", psptest.HangUp()},
		{"429 is retried", psptest.Fault{Status: http.StatusTooManyRequests, RetryAfter: "0"}},
		{"502 is retried", psptest.Answer(http.StatusBadGateway)},
	} {
		t.Run(fault.name, func(t *testing.T) {
			c, _ := newClient(t, p, nil)
			p.Inject(fault.fault.On(psptest.OpCobPut), 1)
			puts := p.Requests(psptest.OpCobPut)
			if _, err := putCob(ctx, c, p, txid(), "1.00"); err != nil {
				t.Fatal(err)
			}
			if got := p.Requests(psptest.OpCobPut) - puts; got != 2 {
				t.Fatalf("%d PUTs, want 2", got)
			}
		})
	}

	t.Run("a token endpoint answering 503 is asked again", func(t *testing.T) {
		c, _ := newClient(t, p, nil)
		p.Inject(psptest.Unavailable("0").On(psptest.OpToken), 1)
		tokens := p.Requests(psptest.OpToken)
		if _, err := putCob(ctx, c, p, txid(), "1.00"); err != nil {
			t.Fatal(err)
		}
		if got := p.Requests(psptest.OpToken) - tokens; got != 2 {
			t.Fatalf("%d token requests, want 2", got)
		}
	})
}

func TestRefusalsAreNotRetried(t *testing.T) {
	t.Parallel()
	p := psptest.New(t, psptest.Config{})
	c, obs := newClient(t, p, nil)
	ctx := context.Background()

	t.Run("400 with violations is ErrRefused carrying the problem", func(t *testing.T) {
		_, err := putCob(ctx, c, p, txid(), "0.00")
		var e *psp.Error
		if !errors.As(err, &e) || !errors.Is(err, psp.ErrRefused) || errors.Is(err, psp.ErrNotFound) || errors.Is(err, psp.ErrOutcomeUnknown) {
			t.Fatalf("err = %v", err)
		}
		if e.Status != 400 || e.Problem.Title != "Cobrança inválida." || e.Problem.Type != "https://pix.bcb.gov.br/api/v2/error/CobOperacaoInvalida" ||
			len(e.Problem.Violations) != 1 || e.Problem.Violations[0].Property != "cob.valor.original" {
			t.Fatalf("error %+v", e)
		}
		if !strings.Contains(err.Error(), "cob.valor.original") || e.Attempts != 1 || p.Requests(psptest.OpCobPut) != 1 {
			t.Fatalf("err = %v after %d PUTs", err, p.Requests(psptest.OpCobPut))
		}
		if last := obs.all()[len(obs.all())-1]; last.Outcome != psp.OutcomeRefused || last.Status != 400 {
			t.Fatalf("observed %+v", last)
		}
	})

	t.Run("404 is ErrNotFound, a kind of ErrRefused", func(t *testing.T) {
		_, err := getCob(ctx, c, txid())
		var e *psp.Error
		if !errors.As(err, &e) || !errors.Is(err, psp.ErrNotFound) || !errors.Is(err, psp.ErrRefused) || e.Outcome != psp.OutcomeNotFound || e.Problem.Title != "Cobrança não encontrada." {
			t.Fatalf("err = %v", err)
		}
	})

	t.Run("a redirect is not followed", func(t *testing.T) {
		followed := make(chan struct{}, 1)
		p.HandleAPI("elsewhere", "", "GET /v2/elsewhere", func(w http.ResponseWriter, _ *http.Request) { followed <- struct{}{} })
		p.HandleAPI("moved", "", "GET /v2/moved", func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "/v2/elsewhere", http.StatusFound)
		})
		err := c.Do(ctx, psp.Request{Operation: "moved", Method: http.MethodGet, Path: []string{"moved"}, Retryable: true}, &struct{}{})
		var e *psp.Error
		if !errors.As(err, &e) || e.Status != http.StatusFound || e.Outcome != psp.OutcomeBadAnswer {
			t.Fatalf("err = %v", err)
		}
		if len(followed) != 0 {
			t.Fatal("the redirect was followed")
		}
	})
}

func TestAPSPThatDoesNotAnswerIsBoundedByTheTimeout(t *testing.T) {
	t.Parallel()
	p := psptest.New(t, psptest.Config{})
	const timeout = 500 * time.Millisecond
	for name, tc := range map[string]struct {
		fault psptest.Fault
		ctx   func() (context.Context, context.CancelFunc)
		cfg   time.Duration
	}{
		"the API, under the client's timeout": {fault: psptest.Slow(time.Hour).On(psptest.OpCobPut), cfg: timeout},
		"the token endpoint":                  {fault: psptest.Slow(time.Hour).On(psptest.OpToken), cfg: timeout},
		"the API, under the caller's deadline": {
			fault: psptest.Slow(time.Hour).On(psptest.OpCobGet),
			ctx: func() (context.Context, context.CancelFunc) {
				return context.WithTimeout(context.Background(), timeout)
			},
			cfg: time.Minute,
		},
	} {
		t.Run(name, func(t *testing.T) {
			c, obs := newClient(t, p, func(c *psp.Config) { c.Timeout = tc.cfg })
			p.Inject(tc.fault, 1)
			ctx, cancel := context.Background(), context.CancelFunc(func() {})
			if tc.ctx != nil {
				ctx, cancel = tc.ctx()
			}
			defer cancel()
			start := time.Now()
			var err error
			if tc.fault.Op == psptest.OpCobGet {
				_, err = getCob(ctx, c, txid())
			} else {
				_, err = putCob(ctx, c, p, txid(), "1.00")
			}
			took := time.Since(start)
			var e *psp.Error
			if !errors.As(err, &e) || e.Outcome != psp.OutcomeTimeout || !errors.Is(err, psp.ErrOutcomeUnknown) || !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("err = %v", err)
			}
			if took < timeout || took > timeout+5*time.Second {
				t.Fatalf("took %s for a time limit of %s", took, timeout)
			}
			if last := obs.all()[len(obs.all())-1]; last.Outcome != psp.OutcomeTimeout {
				t.Fatalf("observed %+v", last)
			}
		})
	}
}

func TestAnswersThatCannotBeReadAreClearErrors(t *testing.T) {
	t.Parallel()
	p := psptest.New(t, psptest.Config{})
	c, _ := newClient(t, p, nil)
	for name, tc := range map[string]struct {
		fault psptest.Fault
		want  string
	}{
		"a body that is not JSON":                {psptest.Garbage(), "not the JSON expected"},
		"a body over the bound":                  {psptest.Oversized(2 << 20), "larger than allowed"},
		"an HTML page":                           {psptest.WrongContentType(), "content type is text/html; charset=utf-8, not JSON"},
		"no content type":                        {psptest.Fault{Status: 200, Body: []byte(`{"txid":"x"}`)}, "content type is none, not JSON"},
		"an empty body":                          {psptest.Fault{Status: 200, ContentType: "application/json", Body: []byte{}}, "empty"},
		"JSON of another shape":                  {psptest.Fault{Status: 200, ContentType: "application/json", Body: []byte(`{"txid":42}`)}, "cannot unmarshal"},
		"a carried-out request answered in junk": {psptest.Garbage().AfterApplying(), "not the JSON expected"},
	} {
		t.Run(name, func(t *testing.T) {
			p.Inject(tc.fault.On(psptest.OpCobPut), 1)
			_, err := putCob(context.Background(), c, p, txid(), "1.00")
			var e *psp.Error
			if !errors.As(err, &e) || e.Outcome != psp.OutcomeBadAnswer || !errors.Is(err, psp.ErrOutcomeUnknown) || e.Status != 200 {
				t.Fatalf("err = %v", err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %q, want it to say %q", err, tc.want)
			}
		})
	}

	t.Run("an error answer over the bound keeps its status", func(t *testing.T) {
		p.Inject(psptest.Fault{Status: 400, ContentType: "text/html", Body: []byte(strings.Repeat("<p>", 1<<20))}.On(psptest.OpCobPut), 1)
		_, err := putCob(context.Background(), c, p, txid(), "1.00")
		var e *psp.Error
		if !errors.As(err, &e) || e.Status != 400 || !errors.Is(err, psp.ErrRefused) {
			t.Fatalf("err = %v", err)
		}
	})
}

func TestARequestThatCannotBeSentIsACallersBug(t *testing.T) {
	t.Parallel()
	p := psptest.New(t, psptest.Config{})
	c, obs := newClient(t, p, nil)
	for name, r := range map[string]psp.Request{
		"no operation":           {Method: "GET", Path: []string{"cob", "x"}},
		"no path":                {Operation: "cob_get", Method: "GET"},
		"a relative segment":     {Operation: "cob_get", Method: "GET", Path: []string{"cob", ".."}},
		"an empty segment":       {Operation: "cob_get", Method: "GET", Path: []string{"cob", ""}},
		"a body that is no JSON": {Operation: "cob_put", Method: "PUT", Path: []string{"cob", "x"}, Body: func() {}},
		"an invalid method":      {Operation: "cob_get", Method: "GE T", Path: []string{"cob", "x"}},
	} {
		t.Run(name, func(t *testing.T) {
			err := c.Do(context.Background(), r, nil)
			var e *psp.Error
			if err == nil || errors.As(err, &e) {
				t.Fatalf("err = %v, want a plain error", err)
			}
		})
	}
	if p.Requests("") != 0 || len(obs.all()) != 0 {
		t.Fatal("something was sent")
	}
}

func TestPathSegmentsAreEscaped(t *testing.T) {
	t.Parallel()
	p := psptest.New(t, psptest.Config{Chave: "pagamentos+loja@example.com"})
	c, _ := newClient(t, p, nil)
	ctx := context.Background()
	err := c.Do(ctx, psp.Request{Operation: "webhook_put", Method: http.MethodPut, Path: []string{"webhook", p.Chave},
		Body: map[string]string{"webhookUrl": "https://pixgate.example/acquirer"}, Retryable: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var hook psptest.Webhook
	if err := c.Do(ctx, psp.Request{Operation: "webhook_get", Method: http.MethodGet, Path: []string{"webhook", p.Chave}}, &hook); err != nil {
		t.Fatal(err)
	}
	if hook.Chave != p.Chave || hook.WebhookURL != "https://pixgate.example/acquirer" {
		t.Fatalf("webhook %+v", hook)
	}
	err = c.Do(ctx, psp.Request{Operation: "webhook_get", Method: http.MethodGet, Path: []string{"webhook", "a/../../oauth/token"}}, &hook)
	if !errors.Is(err, psp.ErrNotFound) {
		t.Fatalf("a key with slashes reached %v", err)
	}
}
