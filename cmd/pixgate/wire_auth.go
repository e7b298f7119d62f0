package main

import (
	"fmt"

	"github.com/pixgate/pixgate/adapters/httpapi"
	"github.com/pixgate/pixgate/adapters/oidc"
	"github.com/pixgate/pixgate/application"
)

// wireAuth wires the token endpoint, the JWKS, the credential and the webhook-secret routes.
// With an upstream OpenID Connect provider configured, the token endpoint delegates the
// client-credentials exchange to it and requests are authenticated with its tokens (verified
// against its JWKS); each upstream client id must exist as a local credential, which is how a
// token finds its account.
func (a *app) wireAuth(deps *httpapi.Deps) error {
	st := a.stores
	var granter httpapi.TokenGranter = application.NewIssueToken(st.accounts, a.issuer, a.hasher, a.cfg.Auth.TokenTTL)
	issuer, jwksURI := a.cfg.Auth.Issuer, ""
	if a.cfg.Auth.Upstream.TokenURL != "" {
		issuer, jwksURI = a.cfg.Auth.Upstream.Issuer, a.cfg.Auth.Upstream.JWKSURL
		exchanger, err := oidc.NewExchanger(oidc.ExchangerConfig{TokenURL: a.cfg.Auth.Upstream.TokenURL, Timeout: a.cfg.Auth.Upstream.Timeout, Clock: a.clock})
		if err != nil {
			return fmt.Errorf("PIXGATE_AUTH_UPSTREAM_TOKEN_URL: %w", err)
		}
		verifier, err := oidc.NewVerifier(oidc.VerifierConfig{JWKSURL: a.cfg.Auth.Upstream.JWKSURL, Issuer: a.cfg.Auth.Upstream.Issuer,
			Audience: a.cfg.Auth.Upstream.Audience, Leeway: jwtLeeway, Timeout: a.cfg.Auth.Upstream.Timeout, Clock: a.clock})
		if err != nil {
			return fmt.Errorf("PIXGATE_AUTH_UPSTREAM_JWKS_URL: %w", err)
		}
		granter = application.NewIssueUpstreamToken(st.accounts, exchanger)
		deps.Authenticator = application.NewCachedAuthenticate(verifier, st.accounts, a.authCache)
	}
	deps.Auth = httpapi.AuthDeps{
		Token:               granter,
		Issuer:              issuer,
		PublicURL:           a.cfg.Auth.Issuer, // pixgate's own address when it is a URL
		JWKSURI:             jwksURI,
		Limits:              httpapi.NewTokenLimits(a.cfg.Limits.TokenRPS, a.cfg.Limits.TokenBurst, a.cfg.Limits.TokenFailures, a.clock),
		JWKS:                a.jwks,
		CreateCredential:    application.NewCreateCredential(st.accounts, a.ids, a.clock, a.hasher),
		ListCredentials:     application.NewListCredentials(st.accounts),
		RevokeCredential:    application.NewRevokeCredential(st.accounts, a.clock),
		GetWebhookSecret:    application.NewGetWebhookSecret(st.accounts, a.clock),
		RotateWebhookSecret: application.NewRotateWebhookSecret(st.accounts, a.clock, a.hasher),
	}
	return nil
}
