package psptest_test

import (
	"bytes"
	"crypto/rand"
	"crypto/tls"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/pixgate/pixgate/adapters/psp/psptest"
)

// api is a plain HTTPS client of the fake with its client certificate and a token, so the
// tests see the fake's answers as they are.
type api struct {
	t      *testing.T
	p      *psptest.PSP
	http   *http.Client
	bearer string
}

// mtls is an HTTP client presenting cert (none when nil) and trusting the fake's CA.
func mtls(p *psptest.PSP, cert *psptest.Certificate) *http.Client {
	cfg := &tls.Config{RootCAs: p.CA.Pool(), MinVersion: tls.VersionTLS12}
	if cert != nil {
		cfg.Certificates = []tls.Certificate{cert.TLS}
	}
	return &http.Client{Transport: &http.Transport{TLSClientConfig: cfg}}
}

// connect gets a token with the form request and answers a client that sends it.
func connect(t *testing.T, p *psptest.PSP, scopes ...string) *api {
	t.Helper()
	a := &api{t: t, p: p, http: mtls(p, p.Client)}
	t.Cleanup(a.http.CloseIdleConnections)
	status, body := a.askToken("application/x-www-form-urlencoded", formBody(scopes...), p.ClientID, p.ClientSecret)
	if status != http.StatusOK {
		t.Fatalf("token: %d %s", status, body)
	}
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	if err := json.Unmarshal(body, &tok); err != nil || tok.AccessToken == "" {
		t.Fatalf("token answer %s", body)
	}
	a.bearer = tok.AccessToken
	return a
}

func formBody(scopes ...string) string {
	v := url.Values{"grant_type": {"client_credentials"}}
	if len(scopes) > 0 {
		v.Set("scope", strings.Join(scopes, " "))
	}
	return v.Encode()
}

// askToken posts a token request.
func (a *api) askToken(contentType, body, id, secret string) (int, []byte) {
	a.t.Helper()
	req, err := http.NewRequest(http.MethodPost, a.p.TokenURL, strings.NewReader(body))
	if err != nil {
		a.t.Fatal(err)
	}
	req.SetBasicAuth(id, secret)
	req.Header.Set("Content-Type", contentType)
	res, err := a.http.Do(req)
	if err != nil {
		a.t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	return res.StatusCode, raw
}

// do sends a request to API Pix (path below /v2) and answers the status and body.
func (a *api) do(method, path string, body any) (int, []byte) {
	a.t.Helper()
	var rd io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			a.t.Fatal(err)
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, a.p.APIURL+path, rd)
	if err != nil {
		a.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+a.bearer)
	req.Header.Set("Content-Type", "application/json")
	res, err := a.http.Do(req)
	if err != nil {
		a.t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	return res.StatusCode, raw
}

// want checks a status and decodes the body into v (when not nil).
func (a *api) want(status int, v any) func(int, []byte) {
	return func(got int, raw []byte) {
		a.t.Helper()
		if got != status {
			a.t.Fatalf("answered %d, want %d: %s", got, status, raw)
		}
		if v != nil {
			if err := json.Unmarshal(raw, v); err != nil {
				a.t.Fatalf("answer %s: %v", raw, err)
			}
		}
	}
}

// problem decodes a problem answer of status and answers it.
func (a *api) problem(status int) func(int, []byte) psptest.Problem {
	return func(got int, raw []byte) psptest.Problem {
		a.t.Helper()
		var p psptest.Problem
		if got != status || json.Unmarshal(raw, &p) != nil || p.Status != status || !strings.HasPrefix(p.Type, "https://pix.bcb.gov.br/api/v2/error/") && p.Type != "about:blank" {
			a.t.Fatalf("answered %d %s, want a problem %d", got, raw, status)
		}
		return p
	}
}

// cobBody is a PUT /cob body for the fake's key.
func cobBody(p *psptest.PSP, valor string) map[string]any {
	return map[string]any{
		"calendario":         map[string]any{"expiracao": 3600},
		"valor":              map[string]any{"original": valor},
		"chave":              p.Chave,
		"solicitacaoPagador": "Pedido 42",
	}
}

// newCob creates a cob and answers its txid.
func (a *api) newCob(valor string) string {
	a.t.Helper()
	id := rand.Text()
	a.want(http.StatusCreated, nil)(a.do(http.MethodPut, "/cob/"+id, cobBody(a.p, valor)))
	return id
}

// receiver is pixgate's side of the callbacks: an HTTPS server that requires a client
// certificate of the fake's CA, as pixgate's callback listener does.
type receiver struct {
	srv    *httptest.Server
	status int

	mu  sync.Mutex
	got []received
}

type received struct {
	path, auth, peer string
	body             []byte
}

func newReceiver(t *testing.T, p *psptest.PSP, status int) *receiver {
	t.Helper()
	rc := &receiver{status: status}
	rc.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		rc.got = append(rc.got, received{path: r.URL.Path, auth: r.Header.Get("Authorization"), peer: r.TLS.PeerCertificates[0].Subject.CommonName, body: body})
		rc.mu.Unlock()
		w.WriteHeader(rc.status)
	}))
	rc.srv.TLS = &tls.Config{
		Certificates: []tls.Certificate{p.CA.IssueServer(t, "127.0.0.1").TLS},
		ClientAuth:   tls.RequireAndVerifyClientCert,
		ClientCAs:    p.CA.Pool(),
	}
	rc.srv.StartTLS()
	t.Cleanup(rc.srv.Close)
	return rc
}

func (rc *receiver) received() []received {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]received(nil), rc.got...)
}

// register sets the fake's webhook to the receiver's /acquirer.
func (a *api) register(rc *receiver) {
	a.t.Helper()
	a.want(http.StatusOK, nil)(a.do(http.MethodPut, "/webhook/"+url.PathEscape(a.p.Chave), map[string]string{"webhookUrl": rc.srv.URL + "/acquirer"}))
}

// callback decodes a callback body.
func callback(t *testing.T, raw []byte) []psptest.Pix {
	t.Helper()
	var body struct {
		Pix []psptest.Pix `json:"pix"`
	}
	if err := json.Unmarshal(raw, &body); err != nil {
		t.Fatalf("callback %s: %v", raw, err)
	}
	return body.Pix
}

// brFields reads a BR Code's top-level TLV fields, checking its CRC.
func brFields(t *testing.T, code string) map[string]string {
	t.Helper()
	fields := map[string]string{}
	for i := 0; i < len(code); {
		if i+4 > len(code) {
			t.Fatalf("BR Code %q cut at %d", code, i)
		}
		n, err := strconv.Atoi(code[i+2 : i+4])
		if err != nil || i+4+n > len(code) {
			t.Fatalf("BR Code %q: bad length at %d", code, i)
		}
		fields[code[i:i+2]] = code[i+4 : i+4+n]
		i += 4 + n
	}
	body := code[:len(code)-4]
	crc := uint16(0xFFFF)
	for i := 0; i < len(body); i++ {
		crc ^= uint16(body[i]) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	if got := strings.ToUpper(strconv.FormatUint(uint64(crc)|0x10000, 16)[1:]); fields["63"] != got {
		t.Fatalf("BR Code %q: CRC %s, computed %s", code, fields["63"], got)
	}
	return fields
}
