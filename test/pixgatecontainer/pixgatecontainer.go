package pixgatecontainer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/testcontainers/testcontainers-go"
	"github.com/testcontainers/testcontainers-go/wait"
	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"
)

// Port is the container port of pixgate's API.
const Port = "8080/tcp"

// The account Run seeds when no WithClient names one. Its secret is public: use it in tests only.
const (
	DefaultClientName   = "Test merchant"
	DefaultClientID     = "pixgate-test"
	DefaultClientSecret = "pixgate-test-secret-for-tests-only-0001"
)

// Client is a client account seeded at start: its name, the client id and secret of its
// credential, and its scopes (none: every scope).
type Client struct {
	Name   string
	ID     string
	Secret string
	Scopes []string
}

// Container is a running pixgate sandbox.
type Container struct {
	*testcontainers.DockerContainer
	clients []Client
}

type options struct {
	clients []Client
}

// Option is an option of Run that is about pixgate itself; Run also takes any
// testcontainers.ContainerCustomizer.
type Option func(*options) error

// Customize does nothing: Run reads pixgate's options itself. It makes an Option a
// testcontainers.ContainerCustomizer, so that both kinds mix in one call.
func (Option) Customize(*testcontainers.GenericContainerRequest) error { return nil }

var _ testcontainers.ContainerCustomizer = Option(nil)

// WithClient seeds a client account with a credential of fixed id and secret, so that a test
// knows them in advance. The secret must have at least 32 characters. Without scopes the
// account gets every scope, account:admin included (docs/API.md, Scopes). Each WithClient
// adds an account; TokenSource uses the first.
func WithClient(name, id, secret string, scopes ...string) Option {
	return func(o *options) error {
		switch {
		case name == "" || strings.ContainsAny(name, ":;"):
			return fmt.Errorf("pixgatecontainer: client name %q must be non-empty, without ':' or ';'", name)
		case id == "" || strings.ContainsAny(id, ":;"):
			return fmt.Errorf("pixgatecontainer: client id %q must be non-empty, without ':' or ';'", id)
		case len(secret) < 32 || strings.ContainsAny(secret, ":;"):
			// The secret itself stays out of the message, as pixgate keeps it out of its own.
			return fmt.Errorf("pixgatecontainer: the secret of client %q must have at least 32 characters, without ':' or ';'", id)
		}
		for _, s := range scopes {
			if s == "" || strings.ContainsAny(s, ",;") {
				return fmt.Errorf("pixgatecontainer: scope %q of client %q must be non-empty, without ',' or ';'", s, id)
			}
		}
		o.clients = append(o.clients, Client{Name: name, ID: id, Secret: secret, Scopes: append([]string(nil), scopes...)})
		return nil
	}
}

// WithEnv sets pixgate's PIXGATE_* settings (docs/OPERATIONS.md, Configuration lists them), for instance
// PIXGATE_RATE_LIMIT_RPS=0 to lift the rate limit of transaction creation, or
// PIXGATE_SANDBOX_SETTLE_SECONDS. It is testcontainers.WithEnv; accounts belong in WithClient,
// which PIXGATE_SEED_CLIENTS here would override.
func WithEnv(env map[string]string) testcontainers.CustomizeRequestOption {
	return testcontainers.WithEnv(env)
}

// seedClients is the PIXGATE_SEED_CLIENTS value of the accounts:
// name:client_id:client_secret[:scope,scope...] separated by ';'.
func seedClients(clients []Client) string {
	entries := make([]string, len(clients))
	for i, c := range clients {
		e := c.Name + ":" + c.ID + ":" + c.Secret
		if len(c.Scopes) > 0 {
			e += ":" + strings.Join(c.Scopes, ",")
		}
		entries[i] = e
	}
	return strings.Join(entries, ";")
}

// Run starts a pixgate sandbox from img (the memory store, the sandbox routes on, the accounts
// of WithClient seeded) and waits until GET /readyz answers 200. Options are this package's
// and any testcontainers.ContainerCustomizer, applied after the module's defaults. As with
// every testcontainers module, the container may be non-nil with an error: terminate it
// anyway (testcontainers.CleanupContainer right after Run does).
func Run(ctx context.Context, img string, opts ...testcontainers.ContainerCustomizer) (*Container, error) {
	var settings options
	for _, opt := range opts {
		if o, ok := opt.(Option); ok {
			if err := o(&settings); err != nil {
				return nil, err
			}
		}
	}
	if len(settings.clients) == 0 {
		settings.clients = []Client{{Name: DefaultClientName, ID: DefaultClientID, Secret: DefaultClientSecret}}
	}
	moduleOpts := []testcontainers.ContainerCustomizer{
		testcontainers.WithExposedPorts(Port),
		testcontainers.WithEnv(map[string]string{
			"PIXGATE_ADDR":         ":8080",
			"PIXGATE_SANDBOX":      "true",
			"PIXGATE_STORE":        "memory",
			"PIXGATE_SEED_CLIENTS": seedClients(settings.clients),
		}),
		testcontainers.WithWaitStrategy(wait.ForHTTP("/readyz").WithPort(Port).
			WithStartupTimeout(time.Minute).WithPollInterval(100 * time.Millisecond)),
	}
	ctr, err := testcontainers.Run(ctx, img, append(moduleOpts, opts...)...)
	var c *Container
	if ctr != nil {
		c = &Container{DockerContainer: ctr, clients: settings.clients}
	}
	if err != nil {
		return c, fmt.Errorf("run pixgate: %w", err)
	}
	return c, nil
}

// Clients are the accounts seeded at start, the first being TokenSource's.
func (c *Container) Clients() []Client {
	out := make([]Client, len(c.clients))
	for i, cl := range c.clients {
		cl.Scopes = append([]string(nil), cl.Scopes...)
		out[i] = cl
	}
	return out
}

// BaseURL is the address of the API as the test process reaches it, such as
// "http://localhost:32768", without a trailing slash.
func (c *Container) BaseURL(ctx context.Context) (string, error) {
	return c.PortEndpoint(ctx, Port, "http")
}

// TokenSource gets, and renews before they expire, bearer tokens of the first seeded account
// from POST /auth/token. ctx carries the requests, as in clientcredentials.Config.TokenSource
// (an *http.Client under oauth2.HTTPClient is used). Wrap it with oauth2.NewClient to get an
// *http.Client that authenticates every request.
func (c *Container) TokenSource(ctx context.Context) oauth2.TokenSource {
	return c.ClientTokenSource(ctx, c.clients[0].ID, c.clients[0].Secret)
}

// ClientTokenSource is TokenSource for any credential: another seeded account, or one made
// with POST /auth/credentials.
func (c *Container) ClientTokenSource(ctx context.Context, clientID, clientSecret string) oauth2.TokenSource {
	return oauth2.ReuseTokenSource(nil, &tokenSource{ctx: ctx, c: c, clientID: clientID, clientSecret: clientSecret})
}

// tokenSource gets a fresh token at every call, with its true expiry.
type tokenSource struct {
	ctx                    context.Context
	c                      *Container
	clientID, clientSecret string
}

func (s *tokenSource) Token() (*oauth2.Token, error) {
	base, err := s.c.BaseURL(s.ctx)
	if err != nil {
		return nil, fmt.Errorf("pixgatecontainer: the API's address: %w", err)
	}
	cfg := clientcredentials.Config{
		ClientID: s.clientID, ClientSecret: s.clientSecret,
		TokenURL: base + "/auth/token", AuthStyle: oauth2.AuthStyleInParams,
	}
	requested := time.Now()
	tok, err := cfg.Token(s.ctx)
	if err != nil {
		return nil, err
	}
	return FixExpiry(tok, requested)
}

// FixExpiry corrects the expiry of a token that golang.org/x/oauth2 got from pixgate, whose
// expires_in is the Unix time of expiry, not a lifetime: x/oauth2 sets Expiry decades ahead
// and never renews the token. It reads expires_in_sec, the lifetime in seconds, counted from
// requested (the time the request was sent, so that the token is renewed early rather than
// late), or failing that expires_in as a Unix time, and sets Expiry and ExpiresIn. Use it with
// a clientcredentials.Config of your own:
//
//	requested := time.Now()
//	tok, err := cfg.Token(ctx)
//	if err == nil {
//		tok, err = pixgatecontainer.FixExpiry(tok, requested)
//	}
func FixExpiry(tok *oauth2.Token, requested time.Time) (*oauth2.Token, error) {
	if sec, ok := number(tok.Extra("expires_in_sec")); ok && sec > 0 {
		tok.Expiry = requested.Add(time.Duration(sec) * time.Second)
		tok.ExpiresIn = sec
		return tok, nil
	}
	if at, ok := number(tok.Extra("expires_in")); ok && at > 0 {
		tok.Expiry = time.Unix(at, 0)
		tok.ExpiresIn = int64(time.Until(tok.Expiry) / time.Second)
		return tok, nil
	}
	return nil, errors.New("pixgatecontainer: the token answer has neither expires_in_sec nor expires_in")
}

// number reads a JSON number of a token answer (x/oauth2 decodes JSON into float64).
func number(v any) (int64, bool) {
	switch n := v.(type) {
	case float64:
		return int64(n), n == float64(int64(n))
	case int64:
		return n, true
	case json.Number:
		i, err := n.Int64()
		return i, err == nil
	case string:
		i, err := strconv.ParseInt(n, 10, 64)
		return i, err == nil
	}
	return 0, false
}
