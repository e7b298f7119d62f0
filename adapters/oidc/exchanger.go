package oidc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/pixgate/pixgate/domain"
	"github.com/pixgate/pixgate/ports"
)

// maxResponseBytes bounds what is read from the upstream: token responses and key sets are a
// few KiB.
const maxResponseBytes = 1 << 20

// DefaultTimeout bounds one upstream call when the configuration sets none.
const DefaultTimeout = 5 * time.Second

var _ ports.CredentialExchanger = (*Exchanger)(nil)

// ExchangerConfig configures an Exchanger.
type ExchangerConfig struct {
	// TokenURL is the provider's token endpoint (PIXGATE_AUTH_UPSTREAM_TOKEN_URL), e.g.
	// https://sso.example/realms/pix/protocol/openid-connect/token. Required, http or https.
	TokenURL string
	// BasicAuth sends the credentials in an HTTP Basic header (client_secret_basic) instead
	// of the form body (client_secret_post, the default, what Keycloak's examples use).
	BasicAuth bool
	// Timeout bounds one exchange; DefaultTimeout when zero.
	Timeout time.Duration
	// Clock dates the token's expiry; required.
	Clock ports.Clock
	// HTTPClient, when set, is used instead of a client of the package's own (tests, proxies,
	// extra CA certificates). Redirects are never followed either way.
	HTTPClient *http.Client
}

// Exchanger implements the client-credentials grant against the upstream provider. It is safe
// for concurrent use.
type Exchanger struct {
	tokenURL  string
	basicAuth bool
	clock     ports.Clock
	client    *http.Client
}

// NewExchanger checks cfg and returns an exchanger.
func NewExchanger(cfg ExchangerConfig) (*Exchanger, error) {
	if err := checkURL(cfg.TokenURL); err != nil {
		return nil, fmt.Errorf("oidc: token URL: %w", err)
	}
	if cfg.Clock == nil {
		return nil, errors.New("oidc: clock is required")
	}
	return &Exchanger{tokenURL: cfg.TokenURL, basicAuth: cfg.BasicAuth, clock: cfg.Clock, client: httpClient(cfg.HTTPClient, cfg.Timeout)}, nil
}

// tokenResponse is RFC 6749 section 5.1, and section 5.2 for errors.
type tokenResponse struct {
	AccessToken string          `json:"access_token"`
	TokenType   string          `json:"token_type"`
	ExpiresIn   json.Number     `json:"expires_in"`
	Scope       string          `json:"scope"`
	Error       json.RawMessage `json:"error"`
}

// Exchange implements ports.CredentialExchanger. Errors carry the upstream's status or the
// network failure, never the secret nor the upstream's body.
func (e *Exchanger) Exchange(ctx context.Context, clientID, clientSecret string, scopes []domain.Scope) (ports.UpstreamToken, error) {
	form := url.Values{"grant_type": {"client_credentials"}}
	if len(scopes) > 0 {
		names := make([]string, len(scopes))
		for i, s := range scopes {
			names[i] = string(s)
		}
		form.Set("scope", strings.Join(names, " "))
	}
	if !e.basicAuth {
		form.Set("client_id", clientID)
		form.Set("client_secret", clientSecret)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.tokenURL, strings.NewReader(form.Encode()))
	if err != nil {
		return ports.UpstreamToken{}, fmt.Errorf("%w: building request: %v", ports.ErrUpstreamUnavailable, err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	if e.basicAuth {
		// RFC 6749 section 2.3.1: both parts form-encoded before going into the header.
		req.SetBasicAuth(url.QueryEscape(clientID), url.QueryEscape(clientSecret))
	}

	resp, err := e.client.Do(req)
	if err != nil {
		return ports.UpstreamToken{}, fmt.Errorf("%w: %v", ports.ErrUpstreamUnavailable, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes+1))
	if err != nil {
		return ports.UpstreamToken{}, fmt.Errorf("%w: reading response: %v", ports.ErrUpstreamUnavailable, err)
	}
	if len(body) > maxResponseBytes {
		return ports.UpstreamToken{}, fmt.Errorf("%w: response over %d bytes", ports.ErrUpstreamUnavailable, maxResponseBytes)
	}
	now := e.clock.Now()

	var tr tokenResponse
	decodeErr := decodeJSON(resp.Header.Get("Content-Type"), body, &tr)
	switch {
	case resp.StatusCode == http.StatusOK:
		return e.granted(tr, decodeErr, now)
	case resp.StatusCode == http.StatusUnauthorized:
		// RFC 6749 section 5.2: client authentication failed.
		return ports.UpstreamToken{}, ports.ErrInvalidCredentials
	case resp.StatusCode == http.StatusBadRequest && decodeErr == nil && refusesClient(tr.Error):
		return ports.UpstreamToken{}, ports.ErrInvalidCredentials
	case resp.StatusCode == http.StatusBadRequest && decodeErr == nil && string(tr.Error) == `"invalid_scope"`:
		return ports.UpstreamToken{}, ports.ErrInvalidScope
	default:
		return ports.UpstreamToken{}, fmt.Errorf("%w: token endpoint answered %d", ports.ErrUpstreamUnavailable, resp.StatusCode)
	}
}

func (e *Exchanger) granted(tr tokenResponse, decodeErr error, now time.Time) (ports.UpstreamToken, error) {
	if decodeErr != nil {
		return ports.UpstreamToken{}, fmt.Errorf("%w: token response: %v", ports.ErrUpstreamUnavailable, decodeErr)
	}
	if tr.AccessToken == "" {
		return ports.UpstreamToken{}, fmt.Errorf("%w: token response without access_token", ports.ErrUpstreamUnavailable)
	}
	if !strings.EqualFold(tr.TokenType, "bearer") {
		return ports.UpstreamToken{}, fmt.Errorf("%w: token type %q is not Bearer", ports.ErrUpstreamUnavailable, tr.TokenType)
	}
	seconds, err := tr.ExpiresIn.Int64()
	if err != nil || seconds <= 0 || seconds > 366*24*3600 {
		return ports.UpstreamToken{}, fmt.Errorf("%w: token response without a usable expires_in", ports.ErrUpstreamUnavailable)
	}
	lifetime := time.Duration(seconds) * time.Second
	return ports.UpstreamToken{
		AccessToken: tr.AccessToken,
		Lifetime:    lifetime,
		ExpiresAt:   now.Add(lifetime),
		Scopes:      parseScopes(tr.Scope),
	}, nil
}

// refusesClient tells whether an RFC 6749 error code means the credentials were refused, as
// opposed to a request the upstream could not understand (our fault or its, not the client's).
func refusesClient(raw json.RawMessage) bool {
	var code string
	if json.Unmarshal(raw, &code) != nil {
		return false
	}
	switch code {
	case "invalid_client", "unauthorized_client", "invalid_grant":
		return true
	}
	return false
}

// decodeJSON decodes a JSON object body; anything else (HTML error pages, empty bodies) is an
// error. A missing content type is tolerated, a non-JSON one is not.
func decodeJSON(contentType string, body []byte, dst any) error {
	if contentType != "" {
		mt, _, err := mime.ParseMediaType(contentType)
		if err != nil || (mt != "application/json" && !strings.HasSuffix(mt, "+json")) {
			return fmt.Errorf("content type %q is not JSON", contentType)
		}
	}
	dec := json.NewDecoder(strings.NewReader(string(body)))
	dec.UseNumber()
	if err := dec.Decode(dst); err != nil {
		return errors.New("body is not a JSON object")
	}
	return nil
}

func checkURL(raw string) error {
	if raw == "" {
		return errors.New("required")
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return errors.New("not an absolute http or https URL")
	}
	return nil
}

// httpClient returns a copy of base (or a new client) with a timeout and without redirects:
// a redirected token request would carry the credentials somewhere else.
func httpClient(base *http.Client, timeout time.Duration) *http.Client {
	c := &http.Client{}
	if base != nil {
		copied := *base
		c = &copied
	}
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	if c.Timeout == 0 || c.Timeout > timeout {
		c.Timeout = timeout
	}
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return c
}
