package application

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/pixgate/pixgate/domain"
	"github.com/pixgate/pixgate/ports"
)

// TokenGrant is what the token endpoint answers.
type TokenGrant struct {
	AccessToken string
	// ExpiresAt is when the token dies; its Unix time is the response's expires_in.
	ExpiresAt time.Time
	// Lifetime is the response's expires_in_sec.
	Lifetime time.Duration
	Scopes   []domain.Scope
}

// IssueToken trades a client_id and client_secret for an access token signed by pixgate.
//
// The credential is looked up and the presented secret's keyed hash compared with the stored
// one; for an unknown client it is compared with a dummy hash, so that an unknown client and a
// wrong secret do the same work and answer the same ports.ErrInvalidCredentials. A revoked
// credential and a disabled account answer that same error, checked only after the secret
// matched. The token carries the scopes the client asked for, or every scope of the account
// when it asked for none; asking for one the account does not hold answers
// ports.ErrInvalidScope (only to a client that proved its secret). The token lives for the
// configured lifetime, and its issue is recorded as the credential's last use (at most once
// per domain.CredentialUseInterval, so that a busy client costs no write per token).
type IssueToken struct {
	repo      ports.AccountRepository
	issuer    ports.TokenIssuer
	hasher    ports.Secrets
	ttl       time.Duration
	dummyHash []byte
}

// NewIssueToken builds the use case; every port is required and ttl must be at least a second.
func NewIssueToken(repo ports.AccountRepository, issuer ports.TokenIssuer, hasher ports.Secrets, ttl time.Duration) *IssueToken {
	requirePorts("NewIssueToken", repo, issuer, hasher)
	if ttl < time.Second {
		panic(fmt.Sprintf("application.NewIssueToken: token lifetime %s is under a second", ttl))
	}
	return &IssueToken{repo: repo, issuer: issuer, hasher: hasher, ttl: ttl, dummyHash: hasher.Hash(hasher.NewSecret())}
}

// Execute issues a token for the credential clientID, with the requested scopes (none: every
// scope of the account).
func (uc *IssueToken) Execute(ctx context.Context, clientID, clientSecret string, requested []domain.Scope) (TokenGrant, error) {
	cred, err := uc.repo.GetCredential(ctx, clientID)
	known := err == nil
	if err != nil && !errors.Is(err, domain.ErrNotFound) {
		return TokenGrant{}, fmt.Errorf("looking up credential: %w", err)
	}
	stored := uc.dummyHash
	if known {
		stored = cred.SecretHash
	}
	matches := uc.hasher.Matches(clientSecret, stored)
	if !known || !matches || cred.Revoked() {
		return TokenGrant{}, ports.ErrInvalidCredentials
	}

	account, err := activeAccount(ctx, uc.repo, cred.AccountID)
	if err != nil {
		return TokenGrant{}, err
	}
	scopes, err := requestedScopes(requested, account)
	if err != nil {
		return TokenGrant{}, err
	}
	p := domain.Principal{AccountID: account.ID(), ClientID: cred.ClientID, Scopes: scopes}
	tok, err := uc.issuer.Issue(ctx, p, uc.ttl)
	if err != nil {
		return TokenGrant{}, fmt.Errorf("issuing token: %w", err)
	}
	if err := recordUse(ctx, uc.repo, cred, tok.IssuedAt); err != nil {
		return TokenGrant{}, err
	}
	return TokenGrant{AccessToken: tok.Token, ExpiresAt: tok.ExpiresAt, Lifetime: tok.ExpiresAt.Sub(tok.IssuedAt), Scopes: p.Scopes}, nil
}

// requestedScopes is what a token asked for with requested may carry: requested itself when
// the account holds every one of them (ports.ErrInvalidScope otherwise), every scope of the
// account when nothing was asked for. Canonical order either way.
func requestedScopes(requested []domain.Scope, account *domain.Account) ([]domain.Scope, error) {
	if len(requested) == 0 {
		return grantedScopes(domain.AllScopes(), account), nil
	}
	for _, s := range requested {
		if !account.HasScope(s) {
			return nil, fmt.Errorf("%w: the account does not hold %s", ports.ErrInvalidScope, s)
		}
	}
	return grantedScopes(requested, account), nil
}

// recordUse records a token issued at at as the credential's last use, unless a use was
// recorded less than domain.CredentialUseInterval before.
func recordUse(ctx context.Context, repo ports.AccountRepository, cred domain.Credential, at time.Time) error {
	if !cred.UseIsStale(at) {
		return nil
	}
	if err := repo.RecordCredentialUse(ctx, cred.ClientID, at); err != nil {
		return fmt.Errorf("recording the use of credential %s: %w", cred.ClientID, err)
	}
	return nil
}

// activeAccount loads the account of a credential whose secret was proved; a missing or
// disabled account refuses the credentials like a wrong secret would.
func activeAccount(ctx context.Context, repo ports.AccountRepository, id string) (*domain.Account, error) {
	account, err := repo.GetAccount(ctx, id)
	if errors.Is(err, domain.ErrNotFound) {
		return nil, ports.ErrInvalidCredentials
	}
	if err != nil {
		return nil, fmt.Errorf("looking up account: %w", err)
	}
	if !account.Active() {
		return nil, ports.ErrInvalidCredentials
	}
	return account, nil
}

// IssueUpstreamToken trades a client_id and client_secret for an access token at the upstream
// OpenID Connect provider, which judges the secret. The client must also be a pixgate
// credential, not revoked, of an active account (that is how a token finds its account);
// otherwise ports.ErrInvalidCredentials, as for credentials the upstream refused. An upstream
// that cannot answer gives ports.ErrUpstreamUnavailable. Requested scopes are passed on to the
// upstream and must all be held by the account (ports.ErrInvalidScope otherwise). The granted
// scopes are the upstream's that the account holds: the token is the upstream's, pixgate
// cannot narrow it further. The exchange is recorded as the credential's last use, as
// IssueToken does.
type IssueUpstreamToken struct {
	repo      ports.AccountRepository
	exchanger ports.CredentialExchanger
}

// NewIssueUpstreamToken builds the use case; every port is required.
func NewIssueUpstreamToken(repo ports.AccountRepository, exchanger ports.CredentialExchanger) *IssueUpstreamToken {
	requirePorts("NewIssueUpstreamToken", repo, exchanger)
	return &IssueUpstreamToken{repo: repo, exchanger: exchanger}
}

// Execute obtains an upstream token for clientID.
func (uc *IssueUpstreamToken) Execute(ctx context.Context, clientID, clientSecret string, requested []domain.Scope) (TokenGrant, error) {
	tok, err := uc.exchanger.Exchange(ctx, clientID, clientSecret, requested)
	if err != nil {
		return TokenGrant{}, err
	}
	cred, err := uc.repo.GetCredential(ctx, clientID)
	if errors.Is(err, domain.ErrNotFound) {
		return TokenGrant{}, ports.ErrInvalidCredentials
	}
	if err != nil {
		return TokenGrant{}, fmt.Errorf("looking up credential: %w", err)
	}
	if cred.Revoked() {
		return TokenGrant{}, ports.ErrInvalidCredentials
	}
	account, err := activeAccount(ctx, uc.repo, cred.AccountID)
	if err != nil {
		return TokenGrant{}, err
	}
	if _, err := requestedScopes(requested, account); err != nil {
		return TokenGrant{}, err
	}
	if err := recordUse(ctx, uc.repo, cred, tok.ExpiresAt.Add(-tok.Lifetime)); err != nil {
		return TokenGrant{}, err
	}
	return TokenGrant{AccessToken: tok.AccessToken, ExpiresAt: tok.ExpiresAt, Lifetime: tok.Lifetime, Scopes: grantedScopes(tok.Scopes, account)}, nil
}

// grantedScopes keeps the token's scopes that the account holds, in canonical order.
func grantedScopes(token []domain.Scope, account *domain.Account) []domain.Scope {
	all := domain.AllScopes()
	out := make([]domain.Scope, 0, len(all)) // one allocation, not one per append (every request)
	for _, s := range all {
		if slices.Contains(token, s) && account.HasScope(s) {
			out = append(out, s)
		}
	}
	return out
}

// Authenticate turns a bearer token into the caller's domain.Principal. The token is verified
// (any failure: ports.ErrInvalidToken), then its credential must still exist, belong to the
// token's account and not be revoked (otherwise ports.ErrInvalidToken too: a revoked
// credential's tokens stop working at once), and the account must be active (otherwise
// domain.ErrAccountDisabled, a 403). The principal's scopes are the token's that the account
// still holds. With an AuthCache (NewCachedAuthenticate) the credential and account are read
// at most once per the cache's TTL; a revocation or a disabling made on another instance then
// takes up to that TTL to reach this one.
type Authenticate struct {
	verifier ports.TokenVerifier
	repo     ports.AccountRepository
	cache    *AuthCache // nil: every request reads the store (auth_cache.go)
}

// NewAuthenticate builds the use case; every port is required.
func NewAuthenticate(verifier ports.TokenVerifier, repo ports.AccountRepository) *Authenticate {
	requirePorts("NewAuthenticate", verifier, repo)
	return &Authenticate{verifier: verifier, repo: repo}
}

// Execute authenticates the raw token (without its "Bearer " prefix).
func (uc *Authenticate) Execute(ctx context.Context, rawToken string) (domain.Principal, error) {
	claims, err := uc.verifier.Verify(ctx, rawToken)
	if err != nil {
		return domain.Principal{}, err
	}
	s, err := uc.cache.standingOf(ctx, uc.repo, claims.ClientID)
	if err != nil {
		return domain.Principal{}, err
	}
	return s.principal(claims)
}
