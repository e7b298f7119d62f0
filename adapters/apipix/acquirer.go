// Package apipix is pixgate's production acquirer: a client of the devolution endpoint of
// Banco Central's standard API Pix (`PUT /pix/{e2eid}/devolucao/{id}`), which every PSP that
// holds a PIX key for pixgate exposes. It implements ports.Acquirer and knows nothing of the
// application or the other adapters.
package apipix

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/pixgate/pixgate/domain"
	"github.com/pixgate/pixgate/ports"
)

// Config says where the acquirer's API Pix is and how to reach it.
type Config struct {
	// BaseURL is the API's base, https, without a trailing /pix (for instance
	// https://pix.example-psp.com.br/api/v2).
	BaseURL string
	// Token is sent as "Authorization: Bearer <token>". It never appears in an error.
	Token string
	// CAFile, optional, is a PEM file of CA certificates trusted besides the system's.
	CAFile string
	// Timeout bounds each request, the answer's body included; 0 means 10 s.
	Timeout time.Duration
	// Transport, for tests, replaces the TLS transport built from CAFile.
	Transport http.RoundTripper
}

// MaxDescription is API Pix's limit on a devolution's `descricao`, in characters.
const MaxDescription = 140

// maxAnswer bounds the answer read: a devolution is a few hundred bytes.
const maxAnswer = 64 << 10

// Acquirer asks the acquirer's API Pix for devolutions. Safe for concurrent use.
type Acquirer struct {
	base   *url.URL
	token  string
	client *http.Client
}

var _ ports.Acquirer = (*Acquirer)(nil)

// New checks cfg and builds the client. Its errors name the setting at fault in words
// ("base URL", "CA file") and never repeat the token.
func New(cfg Config) (*Acquirer, error) {
	base, err := ParseBaseURL(cfg.BaseURL)
	if err != nil {
		return nil, err
	}
	if err := CheckToken(cfg.Token); err != nil {
		return nil, err
	}
	transport := cfg.Transport
	if transport == nil {
		pool, err := x509.SystemCertPool()
		if err != nil {
			pool = x509.NewCertPool()
		}
		if cfg.CAFile != "" {
			if err := AppendCAFile(pool, cfg.CAFile); err != nil {
				return nil, err
			}
		}
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.Proxy = nil
		t.TLSClientConfig = &tls.Config{MinVersion: tls.VersionTLS12, RootCAs: pool}
		transport = t
	}
	timeout := cfg.Timeout
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	client := &http.Client{
		Transport: transport,
		Timeout:   timeout,
		// A devolution is answered where it was asked; following a redirect would send the
		// token elsewhere.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	return &Acquirer{base: base, token: cfg.Token, client: client}, nil
}

// ParseBaseURL accepts an absolute https URL with a host and nothing after its path.
func ParseBaseURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "https" || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("the base URL must be an https URL with a host and no credentials, query or fragment")
	}
	u.Path = strings.TrimSuffix(u.Path, "/")
	u.RawPath = ""
	return u, nil
}

// CheckToken accepts a bearer token of visible ASCII characters.
func CheckToken(token string) error {
	if token == "" || len(token) > 8192 {
		return fmt.Errorf("the token must have 1 to 8192 characters")
	}
	for i := 0; i < len(token); i++ {
		if token[i] <= ' ' || token[i] > '~' {
			return fmt.Errorf("the token must be visible ASCII characters, without spaces")
		}
	}
	return nil
}

// AppendCAFile adds the certificates of a PEM file to pool; a file without one is an error.
func AppendCAFile(pool *x509.CertPool, file string) error {
	raw, err := os.ReadFile(file)
	var pathErr *fs.PathError
	if errors.As(err, &pathErr) {
		err = pathErr.Err // the caller names the file
	}
	if err != nil {
		return fmt.Errorf("reading the CA file: %w", err)
	}
	n := 0
	for block, rest := pem.Decode(raw); block != nil; block, rest = pem.Decode(rest) {
		if block.Type != "CERTIFICATE" {
			continue
		}
		cert, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			return fmt.Errorf("the CA file holds a certificate that does not parse: %w", err)
		}
		pool.AddCert(cert)
		n++
	}
	if n == 0 {
		return fmt.Errorf("the CA file holds no PEM certificate")
	}
	return nil
}

// devolutionRequest is API Pix's body of PUT /pix/{e2eid}/devolucao/{id}.
type devolutionRequest struct {
	Valor     string `json:"valor"`
	Natureza  string `json:"natureza"`
	Descricao string `json:"descricao,omitempty"`
}

// devolutionAnswer is API Pix's devolution.
type devolutionAnswer struct {
	ID     string `json:"id"`
	RtrID  string `json:"rtrId"`
	Valor  string `json:"valor"`
	Status string `json:"status"`
	Motivo string `json:"motivo"`
}

// problemAnswer is the RFC 7807 body API Pix answers errors with.
type problemAnswer struct {
	Title  string `json:"title"`
	Detail string `json:"detail"`
}

// RequestDevolution asks for the devolution d, nature ORIGINAL (the payment itself is
// returned). The answer's status maps one to one; an answer that does not name the devolution
// asked, or says DEVOLVIDO without its rtrId, is an error, as is any status but 2xx, a
// timeout or a body that is not a devolution: the outcome is then unknown and the acquirer's
// callback settles it.
func (a *Acquirer) RequestDevolution(ctx context.Context, d ports.Devolution) (ports.DevolutionResult, error) {
	if !alphanumeric(d.EndToEndID) || !alphanumeric(d.ID) || len(d.ID) > 35 || d.Amount < 1 {
		return ports.DevolutionResult{}, fmt.Errorf("acquirer API: a devolution needs a payment's endToEndId, an id of 1 to 35 characters [A-Za-z0-9] and an amount")
	}
	body, err := json.Marshal(devolutionRequest{Valor: d.Amount.Reais(), Natureza: "ORIGINAL", Descricao: description(d.Reason)})
	if err != nil {
		return ports.DevolutionResult{}, fmt.Errorf("acquirer API: %w", err)
	}
	target := a.base.JoinPath("pix", d.EndToEndID, "devolucao", d.ID)
	what := "PUT /pix/" + d.EndToEndID + "/devolucao/" + d.ID
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, target.String(), bytes.NewReader(body))
	if err != nil {
		return ports.DevolutionResult{}, fmt.Errorf("acquirer API: %s: %w", what, err)
	}
	req.Header.Set("Authorization", "Bearer "+a.token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	res, err := a.client.Do(req)
	if err != nil {
		return ports.DevolutionResult{}, fmt.Errorf("acquirer API: %s: %w", what, unwrapURLError(err))
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(res.Body, maxAnswer))
	if err != nil {
		return ports.DevolutionResult{}, fmt.Errorf("acquirer API: %s: reading the answer: %w", what, unwrapURLError(err))
	}
	if res.StatusCode < 200 || res.StatusCode > 299 {
		return ports.DevolutionResult{}, fmt.Errorf("acquirer API: %s answered %d%s", what, res.StatusCode, problem(raw, a.token))
	}
	var ans devolutionAnswer
	if err := json.Unmarshal(raw, &ans); err != nil {
		return ports.DevolutionResult{}, fmt.Errorf("acquirer API: %s: the answer is no devolution: %w", what, err)
	}
	return result(d, ans)
}

// result maps the acquirer's answer to d onto the port's.
func result(d ports.Devolution, ans devolutionAnswer) (ports.DevolutionResult, error) {
	if ans.ID != "" && ans.ID != d.ID {
		return ports.DevolutionResult{}, fmt.Errorf("acquirer API: asked for devolution %s, answered devolution %q", d.ID, ans.ID)
	}
	if ans.Valor != "" {
		if v, err := domain.ParseReais(ans.Valor); err != nil || v != d.Amount {
			return ports.DevolutionResult{}, fmt.Errorf("acquirer API: devolution %s of %s answered valor %q", d.ID, d.Amount.Reais(), ans.Valor)
		}
	}
	switch status := ports.DevolutionStatus(ans.Status); status {
	case ports.DevolutionInProgress:
		return ports.DevolutionResult{Status: status}, nil
	case ports.DevolutionReturned:
		if ans.RtrID == "" {
			return ports.DevolutionResult{}, fmt.Errorf("acquirer API: devolution %s answered DEVOLVIDO without its rtrId", d.ID)
		}
		return ports.DevolutionResult{Status: status, ReturnID: ans.RtrID}, nil
	case ports.DevolutionNotDone:
		return ports.DevolutionResult{Status: status, Reason: ans.Motivo}, nil
	}
	return ports.DevolutionResult{}, fmt.Errorf("acquirer API: devolution %s answered the unknown status %q", d.ID, ans.Status)
}

// alphanumeric tells whether s is 1 to 64 characters [A-Za-z0-9], as API Pix's ids are: it
// keeps them whole path segments.
func alphanumeric(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for _, c := range s {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9') {
			return false
		}
	}
	return true
}

// description is the reason as API Pix takes it: at most 140 characters.
func description(reason string) string {
	reason = strings.TrimSpace(reason)
	if utf8.RuneCountInString(reason) <= MaxDescription {
		return reason
	}
	return string([]rune(reason)[:MaxDescription])
}

// problem is ": " and the error body's title and detail, cut short and without the token (an
// acquirer that echoes the request must not make it reach the logs), or "".
func problem(raw []byte, token string) string {
	var p problemAnswer
	if json.Unmarshal(raw, &p) != nil {
		return ""
	}
	s := strings.TrimSpace(strings.Join(strings.Fields(p.Title+" "+p.Detail), " "))
	s = strings.ReplaceAll(s, token, "[token]")
	if utf8.RuneCountInString(s) > 200 {
		s = string([]rune(s)[:200]) + "…"
	}
	if s == "" {
		return ""
	}
	return ": " + s
}

// unwrapURLError drops the *url.Error wrapper, whose text repeats the whole URL, keeping the
// cause (a timeout, a refused connection, a certificate the pool does not trust).
func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}
