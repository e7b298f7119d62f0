package psp_test

import (
	"context"
	"encoding/base64"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/pixgate/pixgate/adapters/psp"
	"github.com/pixgate/pixgate/adapters/psp/psptest"
)

// TestNoSecretReachesAnError points clients at endpoints that echo everything they are sent
// (headers and bodies, in every member of their answers) and checks that no error repeats a
// client secret, in any form it travels in, a token or a PKCS#12 password.
func TestNoSecretReachesAnError(t *testing.T) {
	t.Parallel()
	const secret = "s3cr3t/+=&:ü Client-Secret-0042" // form-encoding changes it
	const password = "P12-Password-Secret-77"
	p := psptest.New(t, psptest.Config{ClientSecret: secret})
	var mu sync.Mutex
	var tokens []string
	echoAPI := func(status int) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(r.Body)
			auth := r.Header.Get("Authorization")
			mu.Lock()
			tokens = append(tokens, strings.TrimPrefix(auth, "Bearer "))
			mu.Unlock()
			if status == http.StatusOK {
				w.Header().Set("Content-Type", "application/json")
				_, _ = io.WriteString(w, `{"echo": `+auth)
				return
			}
			psptest.WriteProblem(w, status, "Echo", "echo "+auth, "you sent "+auth+" with "+string(body),
				psptest.Violacao{Razao: auth, Propriedade: auth, Valor: auth})
		}
	}
	for _, status := range []int{200, 400, 401, 503} {
		p.HandleAPI("echo", "", "PUT /v2/echo/"+strconv.Itoa(status), echoAPI(status))
	}
	sawSecret := false
	echoToken := func(status int) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(r.Body)
			id, sec, _ := r.BasicAuth()
			if unescaped, err := url.QueryUnescape(sec); sec == secret || err == nil && unescaped == secret {
				mu.Lock()
				sawSecret = true
				mu.Unlock()
			}
			everything := r.Header.Get("Authorization") + " " + id + ":" + sec + " " + string(body)
			if status == http.StatusServiceUnavailable {
				psptest.WriteProblem(w, status, "Echo", everything, everything)
				return
			}
			psptest.WriteJSON(w, status, map[string]string{"error": everything, "error_description": everything})
		}
	}
	p.Handle("echo_token", "POST /echo/token/400", echoToken(400))
	p.Handle("echo_token", "POST /echo/token/503", echoToken(503))

	ctx := context.Background()
	var errs []error
	api, _ := newClient(t, p, func(c *psp.Config) { c.MaxAttempts = 2 })
	for _, status := range []int{200, 400, 401, 503} {
		errs = append(errs, api.Do(ctx, psp.Request{Operation: "echo", Method: http.MethodPut, Path: []string{"echo", strconv.Itoa(status)},
			Body: map[string]string{"some": "thing"}, Retryable: true}, &struct{}{}))
	}
	for _, style := range []psp.TokenRequest{psp.TokenForm, psp.TokenJSON} {
		for _, status := range []string{"400", "503"} {
			c, _ := newClient(t, p, func(c *psp.Config) {
				c.TokenURL, c.TokenRequest, c.MaxAttempts = p.URL+"/echo/token/"+status, style, 1
			})
			_, err := putCob(ctx, c, p, txid(), "1.00")
			errs = append(errs, err)
		}
	}
	cfg := config(p)
	cfg.CertFile, cfg.KeyFile, cfg.P12File, cfg.P12Password = "", "", p.Client.WriteP12(t, "other"), password
	_, err := psp.New(cfg)
	errs = append(errs, err)

	if !sawSecret || len(tokens) < 5 {
		t.Fatalf("the echoes saw the secret %v and %d tokens: the test proves nothing", sawSecret, len(tokens))
	}
	basic := func(id, s string) string { return base64.StdEncoding.EncodeToString([]byte(id + ":" + s)) }
	forbidden := append([]string{secret, url.QueryEscape(secret), basic(p.ClientID, secret), basic(p.ClientID, url.QueryEscape(secret)), password}, tokens...)
	redacted := 0
	for i, err := range errs {
		if err == nil {
			t.Fatalf("call %d succeeded", i)
		}
		for _, f := range forbidden {
			if strings.Contains(err.Error(), f) {
				t.Errorf("error %d shows %q: %v", i, f, err)
			}
		}
		var e *psp.Error
		if errors.As(err, &e) && strings.Contains(e.Problem.String()+err.Error(), "[redacted]") {
			redacted++
		}
	}
	if redacted < 4 {
		t.Fatalf("only %d errors say what was scrubbed", redacted)
	}
}
