package ports

import (
	"context"
	"time"

	"github.com/pixgate/pixgate/domain"
)

// AccountRepository stores client accounts and their credentials.
//
// Every method is safe for concurrent use. Accounts and credentials handed in are copied, and
// those handed out are the caller's own: changing them changes nothing stored until
// UpdateAccount. A store that cannot be reached answers ErrUnavailable.
type AccountRepository interface {
	// CreateAccount stores a new account. An account with the same id: ErrDuplicate.
	CreateAccount(ctx context.Context, account *domain.Account) error

	// GetAccount returns the account with id, or domain.ErrNotFound.
	GetAccount(ctx context.Context, id string) (*domain.Account, error)

	// ListAccounts returns every account, oldest first (ties by id); none is an empty list.
	ListAccounts(ctx context.Context) ([]*domain.Account, error)

	// UpdateAccount loads the account with id, calls fn with it and stores what fn left, as one
	// atomic step: concurrent updates of one account are applied one after the other, each fn
	// seeing the result of the previous one (fn may therefore run more than once). When fn
	// returns an error nothing is stored and UpdateAccount returns that error unchanged. fn
	// must not call the repository (an adapter may hold a lock while it runs).
	// Unknown id: domain.ErrNotFound, fn not called. An adapter that gives up retrying a
	// contended update answers ErrVersionConflict, having stored nothing.
	UpdateAccount(ctx context.Context, id string, fn func(*domain.Account) error) error

	// CreateCredential stores a credential of an existing account. A credential with the same
	// client id (of any account, revoked or not): ErrDuplicate. Unknown account:
	// domain.ErrNotFound. An account that already holds domain.MaxActiveCredentials
	// credentials that are not revoked: domain.ErrCredentialLimit, nothing stored. The cap
	// holds under concurrent creations, from any number of instances: two creations racing
	// for the last place never both succeed.
	CreateCredential(ctx context.Context, credential domain.Credential) error

	// GetCredential returns the credential with clientID, revoked ones included (RevokedAt is
	// set), or domain.ErrNotFound.
	GetCredential(ctx context.Context, clientID string) (domain.Credential, error)

	// ListCredentials returns the account's credentials, revoked ones included, oldest first
	// (ties by client id). An unknown account has none: an empty list, no error.
	ListCredentials(ctx context.Context, accountID string) ([]domain.Credential, error)

	// RecordCredentialUse sets the credential's LastUsedAt to at, unless it already holds a
	// later time (concurrent token requests cannot move it backwards). Unknown client id:
	// domain.ErrNotFound. It is one small write; callers limit how often they make it.
	RecordCredentialUse(ctx context.Context, clientID string, at time.Time) error

	// RevokeCredential marks the account's credential clientID revoked at at. A client id that
	// is unknown or belongs to another account: domain.ErrNotFound, nothing changed. Revoking
	// a revoked credential succeeds and keeps the first revocation time.
	RevokeCredential(ctx context.Context, accountID, clientID string, at time.Time) error
}

// IssuedToken is a signed access token and its validity.
type IssuedToken struct {
	Token     string
	IssuedAt  time.Time
	ExpiresAt time.Time
}

// TokenIssuer signs access tokens.
//
// Issue is safe for concurrent use. The token names principal.AccountID as subject and carries
// principal.ClientID and principal.Scopes; it is valid from now for lifetime (times in whole
// seconds, as JWT numeric dates are). An error means no token was made (a broken key, a
// lifetime that is not positive).
type TokenIssuer interface {
	Issue(ctx context.Context, principal domain.Principal, lifetime time.Duration) (IssuedToken, error)
}

// TokenClaims is what a verified token says.
type TokenClaims struct {
	// AccountID is the client account the token was issued to. Empty when the token comes from
	// an upstream provider that does not know pixgate's accounts: the account is then the one
	// owning ClientID.
	AccountID string
	// ClientID is the credential the token was obtained with; never empty.
	ClientID string
	// Scopes are the pixgate scopes the token grants; unknown scopes are left out.
	Scopes    []domain.Scope
	ExpiresAt time.Time
}

// TokenVerifier checks a raw bearer token.
//
// Verify is safe for concurrent use. Every token that is not valid now (malformed, wrong
// algorithm, unknown key, bad signature, expired, not yet valid, wrong issuer or audience,
// missing claims) answers an error matching ErrInvalidToken (errors.Is) and no other
// sentinel, whatever the reason, so that no answer can tell the checks apart; the error's
// text may name the failed check for the log, never for the client. A verifier that needs a
// remote key set and cannot fetch it answers ErrInvalidToken as well (the token cannot be
// proved valid).
type TokenVerifier interface {
	Verify(ctx context.Context, raw string) (TokenClaims, error)
}

// UpstreamToken is an access token obtained from the upstream provider.
type UpstreamToken struct {
	AccessToken string
	// Lifetime is the upstream's expires_in; ExpiresAt is when the exchange answered plus
	// Lifetime.
	Lifetime  time.Duration
	ExpiresAt time.Time
	// Scopes are the pixgate scopes the upstream granted; unknown scopes are left out.
	Scopes []domain.Scope
}

// CredentialExchanger trades client credentials for an access token at an upstream OpenID
// Connect provider (the client-credentials grant).
//
// Exchange is safe for concurrent use. scopes, when not empty, are the scopes the client asked
// for, passed on to the upstream (which may grant fewer, or refuse). The upstream refusing the
// credentials answers ErrInvalidCredentials, refusing the scopes ErrInvalidScope; the upstream
// unreachable, too slow, failing or answering something that is not a token response answers
// ErrUpstreamUnavailable. No error carries the secret.
type CredentialExchanger interface {
	Exchange(ctx context.Context, clientID, clientSecret string, scopes []domain.Scope) (UpstreamToken, error)
}
