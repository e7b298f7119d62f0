package main

import (
	"fmt"
	"time"

	"github.com/pixgate/pixgate/application"
)

// AuthConfig is how API tokens are made and checked, the accounts created at start, and the
// upstream OpenID Connect provider that may take the credentials over.
type AuthConfig struct {
	JWTKeyFile  string
	Issuer      string
	Audience    string
	TokenTTL    time.Duration
	CacheTTL    time.Duration // 0: every request reads its credential and account
	SeedClients []application.SeedClient
	Upstream    UpstreamConfig
}

// UpstreamConfig is an OpenID Connect provider that client credentials are delegated to; its
// TokenURL or JWKSURL turns it on, and then every field but Timeout is required.
type UpstreamConfig struct {
	TokenURL string
	JWKSURL  string
	Issuer   string
	Audience string
	Timeout  time.Duration
}

// On tells whether an upstream provider is configured.
func (u UpstreamConfig) On() bool { return u.TokenURL != "" || u.JWKSURL != "" }

func (a *AuthConfig) settings() []setting {
	u := &a.Upstream
	return []setting{
		{"PIXGATE_SEED_CLIENTS", "", "Accounts created at start: name:client_id:client_secret[:scope,scope...] separated by ;.", seedClients(&a.SeedClients)},
		{"PIXGATE_JWT_PRIVATE_KEY_FILE", "", "PEM RSA private key that signs tokens; empty generates one (tokens die with the process).", text(&a.JWTKeyFile)},
		{"PIXGATE_JWT_ISSUER", "pixgate", "iss of the tokens.", nonEmpty(&a.Issuer)},
		{"PIXGATE_JWT_AUDIENCE", "pixgate-api", "aud of the tokens.", nonEmpty(&a.Audience)},
		{"PIXGATE_TOKEN_TTL", "3600", "Token lifetime in seconds, from 12 (OAuth clients renew a token 10 s before it expires).", seconds(&a.TokenTTL, 12, 86400)},
		{"PIXGATE_AUTH_CACHE_TTL", "2s", "How long an instance trusts what it read about a credential and its account (revoked? disabled? scopes?) before reading them again; a revocation or disabling made on another instance takes up to this long to reach it (at once on the instance that made it). 0 reads them on every request.",
			durationIn(&a.CacheTTL, 0, time.Minute, "must be a duration from 0 to 1m, such as 2s")},
		{"PIXGATE_AUTH_UPSTREAM_TOKEN_URL", "", "OpenID Connect token endpoint to delegate client credentials to.", httpURL(&u.TokenURL)},
		{"PIXGATE_AUTH_UPSTREAM_JWKS_URL", "", "JWKS of the upstream provider, to verify its tokens.", httpURL(&u.JWKSURL)},
		{"PIXGATE_AUTH_UPSTREAM_ISSUER", "", "iss the upstream provider's tokens must carry (required with the upstream).", text(&u.Issuer)},
		{"PIXGATE_AUTH_UPSTREAM_AUDIENCE", "", "aud the upstream provider's tokens must carry (required with the upstream).", text(&u.Audience)},
		{"PIXGATE_AUTH_UPSTREAM_TIMEOUT", "5s", "Timeout of calls to the upstream provider.", duration(&u.Timeout)},
	}
}

func seedClients(dst *[]application.SeedClient) func(string) error {
	return func(v string) error {
		var err error
		*dst, err = application.ParseSeedClients(v)
		return err
	}
}

// check names the first setting an upstream provider lacks, in the settings' order, so that
// the same configuration always names the same variable.
func (u UpstreamConfig) check() error {
	if !u.On() {
		return nil
	}
	for _, s := range []struct{ name, value string }{
		{"PIXGATE_AUTH_UPSTREAM_TOKEN_URL", u.TokenURL}, {"PIXGATE_AUTH_UPSTREAM_JWKS_URL", u.JWKSURL},
		{"PIXGATE_AUTH_UPSTREAM_ISSUER", u.Issuer}, {"PIXGATE_AUTH_UPSTREAM_AUDIENCE", u.Audience},
	} {
		if s.value == "" {
			return fmt.Errorf("%s: required when an upstream authentication provider is configured", s.name)
		}
	}
	return nil
}

// LimitsConfig is the rate limits of charge creation (per account) and of token requests (per
// client_id and per client address). A rate of 0 turns its limit off.
type LimitsConfig struct {
	TransactionRPS   float64
	TransactionBurst int
	TokenRPS         float64
	TokenBurst       int
	TokenFailures    int // a minute
}

func (l *LimitsConfig) settings() []setting {
	return []setting{
		{"PIXGATE_RATE_LIMIT_RPS", "50", "POST /transaction requests a second per account; 0 turns the limit off.", rate(&l.TransactionRPS)},
		{"PIXGATE_RATE_LIMIT_BURST", "100", "Burst of POST /transaction per account.", whole(&l.TransactionBurst, 0, 1_000_000)},
		{"PIXGATE_TOKEN_RATE_LIMIT_RPS", "10", "Token requests a second per client_id; 0 turns the limit off.", rate(&l.TokenRPS)},
		{"PIXGATE_TOKEN_RATE_LIMIT_BURST", "20", "Burst of token requests per client_id.", whole(&l.TokenBurst, 0, 1_000_000)},
		{"PIXGATE_TOKEN_FAILURE_LIMIT", "60", "Failed token requests (400, 401) a minute per client address, and wrong secrets a minute per client_id; 0 turns both limits off.", whole(&l.TokenFailures, 0, 1_000_000)},
	}
}
