package application

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/pixgate/pixgate/domain"
	"github.com/pixgate/pixgate/ports"
)

// DefaultAuthCacheSize bounds an AuthCache: one entry per credential in use, a few hundred
// bytes each.
const DefaultAuthCacheSize = 10_000

// AuthCache remembers, for at most its TTL, what Authenticate reads from the store about a
// credential: which account it belongs to and whether it is revoked, and that account's status
// and scopes. With it, an authenticated request reads nothing from the store while its
// credential's entry is fresh.
//
// Changes made through the repository that Invalidating wraps (revoking a credential,
// disabling an account, any update of an account) forget what they change at once, so they
// act from the next request on the instance that made them; another instance sharing the
// store learns of them when its own entry expires, within the TTL. A read that began before a
// change is never stored after it. Only complete answers are remembered: an unknown
// credential or account, or a store that failed, is read again on the next request. At most
// size entries are held. Safe for concurrent use.
type AuthCache struct {
	ttl     time.Duration
	clock   ports.Clock
	entries *expiringCache[string, standing] // by client id
}

// NewAuthCache returns a cache whose entries live ttl by clock, at most size of them (0:
// DefaultAuthCacheSize). A ttl of 0 or less turns caching off: it returns nil, which every
// method and NewCachedAuthenticate accept as "no cache".
func NewAuthCache(ttl time.Duration, clock ports.Clock, size int) *AuthCache {
	if ttl <= 0 {
		return nil
	}
	requirePorts("NewAuthCache", clock)
	if size <= 0 {
		size = DefaultAuthCacheSize
	}
	return &AuthCache{ttl: ttl, clock: clock, entries: newExpiringCache[string, standing](size)}
}

// NewCachedAuthenticate is NewAuthenticate with cache (nil: none) in front of its two reads.
// The repository should be the one cache.Invalidating wraps, or a change made through another
// path waits for the TTL like one made by another instance.
func NewCachedAuthenticate(verifier ports.TokenVerifier, repo ports.AccountRepository, cache *AuthCache) *Authenticate {
	uc := NewAuthenticate(verifier, repo)
	uc.cache = cache
	return uc
}

// standing is what authentication needs to know about a credential.
type standing struct {
	clientID  string
	accountID string
	revoked   bool
	// account is the credential's account as read (nil for a revoked credential, which needs
	// no more); the cache's own copy, never handed out.
	account *domain.Account
}

// principal judges claims of a verified token against the credential's standing: the errors
// and the principal Authenticate answers.
func (s standing) principal(claims ports.TokenClaims) (domain.Principal, error) {
	if s.revoked {
		return domain.Principal{}, fmt.Errorf("%w: credential revoked", ports.ErrInvalidToken)
	}
	if claims.AccountID != "" && claims.AccountID != s.accountID {
		return domain.Principal{}, fmt.Errorf("%w: credential of another account", ports.ErrInvalidToken)
	}
	if !s.account.Active() {
		return domain.Principal{}, domain.ErrAccountDisabled
	}
	return domain.Principal{AccountID: s.accountID, ClientID: s.clientID, Scopes: grantedScopes(claims.Scopes, s.account)}, nil
}

// readStanding reads the credential clientID, then (unless it is revoked) its account. An
// unknown credential or account is an invalid token; a store failure is passed on.
func readStanding(ctx context.Context, repo ports.AccountRepository, clientID string) (standing, error) {
	cred, err := repo.GetCredential(ctx, clientID)
	if errors.Is(err, domain.ErrNotFound) {
		return standing{}, fmt.Errorf("%w: credential unknown", ports.ErrInvalidToken)
	}
	if err != nil {
		return standing{}, fmt.Errorf("looking up credential: %w", err)
	}
	s := standing{clientID: cred.ClientID, accountID: cred.AccountID, revoked: cred.Revoked()}
	if s.revoked {
		return s, nil
	}
	account, err := repo.GetAccount(ctx, cred.AccountID)
	if errors.Is(err, domain.ErrNotFound) {
		return standing{}, fmt.Errorf("%w: account unknown", ports.ErrInvalidToken)
	}
	if err != nil {
		return standing{}, fmt.Errorf("looking up account: %w", err)
	}
	s.account = account
	return s, nil
}

// standingOf answers the credential's standing from the cache while its entry is fresh, and
// from the store otherwise (then remembers it). A nil cache always reads the store.
func (c *AuthCache) standingOf(ctx context.Context, repo ports.AccountRepository, clientID string) (standing, error) {
	if c == nil {
		return readStanding(ctx, repo, clientID)
	}
	now := c.clock.Now()
	// Read before the store: a change forgotten while the store answers keeps the answer out.
	generation := c.entries.generation()
	if s, ok := c.entries.get(clientID, now); ok {
		return s, nil
	}
	s, err := readStanding(ctx, repo, clientID)
	if err != nil {
		return standing{}, err
	}
	// The entry's life counts from before the read: it never outlives the TTL.
	c.entries.putUnchanged(clientID, s, now.Add(c.ttl), now, generation)
	return s, nil
}

// forget drops the entries that match and counts a change, so that reads in flight are not
// stored.
func (c *AuthCache) forget(match func(clientID string, s standing) bool) {
	if c == nil {
		return
	}
	c.entries.forget(match)
}

// Len is how many credentials the cache holds (0 for a nil cache).
func (c *AuthCache) Len() int {
	if c == nil {
		return 0
	}
	return c.entries.len()
}

// Invalidating wraps repo so that the changes made through it that authentication depends on
// are forgotten by the cache as soon as the store answers (whatever it answered: a store that
// failed may have applied the change): RevokeCredential forgets the credential, UpdateAccount
// every credential of the account. Everything else goes to repo unchanged. A nil cache
// returns repo itself.
func (c *AuthCache) Invalidating(repo ports.AccountRepository) ports.AccountRepository {
	if c == nil {
		return repo
	}
	return invalidatingAccounts{AccountRepository: repo, cache: c}
}

type invalidatingAccounts struct {
	ports.AccountRepository
	cache *AuthCache
}

func (r invalidatingAccounts) RevokeCredential(ctx context.Context, accountID, clientID string, at time.Time) error {
	err := r.AccountRepository.RevokeCredential(ctx, accountID, clientID, at)
	r.cache.forget(func(k string, _ standing) bool { return k == clientID })
	return err
}

func (r invalidatingAccounts) UpdateAccount(ctx context.Context, id string, fn func(*domain.Account) error) error {
	err := r.AccountRepository.UpdateAccount(ctx, id, fn)
	r.cache.forget(func(_ string, s standing) bool { return s.accountID == id })
	return err
}
