package jwtauth

import (
	"context"
	"crypto/rsa"
	"crypto/sha256"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/pixgate/pixgate/domain"
	"github.com/pixgate/pixgate/ports"
)

// maxTokenBytes bounds what Verify will look at: pixgate's tokens are well under 1 KiB, and a
// huge header must not cost base64 and JSON work on every request.
const maxTokenBytes = 8 << 10

var _ ports.TokenVerifier = (*Verifier)(nil)

// VerifierOptions tune a Verifier.
type VerifierOptions struct {
	// Leeway is the clock skew tolerated on exp, nbf and iat; 0 to MaxLeeway.
	Leeway time.Duration
	// CacheSize bounds the cache of verified tokens (0 turns it off). A hit skips the RSA
	// verification but still checks exp, nbf and iat against the clock exactly as the parser
	// does, so caching never stretches a token's life.
	CacheSize int
}

// Verifier checks pixgate's own tokens against a fixed set of RSA public keys, chosen by kid.
// It is safe for concurrent use.
type Verifier struct {
	cfg    Config
	leeway time.Duration
	keys   map[string]*rsa.PublicKey
	jwks   []byte
	parser *jwt.Parser
	cache  *verifiedCache // nil when off
}

// NewVerifier returns a verifier accepting tokens signed by any of keys (the current signing
// key, and during a key rotation the previous one).
func NewVerifier(cfg Config, opts VerifierOptions, keys ...*rsa.PublicKey) (*Verifier, error) {
	if err := cfg.check(); err != nil {
		return nil, err
	}
	if opts.Leeway < 0 || opts.Leeway > MaxLeeway {
		return nil, fmt.Errorf("jwtauth: leeway %s is outside 0 to %s", opts.Leeway, MaxLeeway)
	}
	if opts.CacheSize < 0 {
		return nil, errors.New("jwtauth: cache size must not be negative")
	}
	if len(keys) == 0 {
		return nil, errors.New("jwtauth: at least one verification key is required")
	}
	byKid := make(map[string]*rsa.PublicKey, len(keys))
	for _, k := range keys {
		if k == nil {
			return nil, errors.New("jwtauth: nil verification key")
		}
		if bits := k.N.BitLen(); bits < MinKeyBits {
			return nil, fmt.Errorf("jwtauth: RSA key of %d bits, want at least %d", bits, MinKeyBits)
		}
		byKid[Thumbprint(k)] = k
	}
	doc, err := jwksDocument(keys)
	if err != nil {
		return nil, fmt.Errorf("jwtauth: render JWKS: %w", err)
	}
	v := &Verifier{cfg: cfg, leeway: opts.Leeway, keys: byKid, jwks: doc}
	v.parser = jwt.NewParser(
		jwt.WithValidMethods([]string{algorithm}),
		jwt.WithIssuer(cfg.Issuer),
		jwt.WithAudience(cfg.Audience),
		jwt.WithExpirationRequired(),
		jwt.WithIssuedAt(),
		jwt.WithLeeway(opts.Leeway),
		// A segment decodes one way only: a signature with non-zero padding bits (a flipped
		// trailing base64 bit) is refused, not read as the same bytes.
		jwt.WithStrictDecoding(),
		jwt.WithTimeFunc(cfg.Clock.Now),
	)
	if opts.CacheSize > 0 {
		v.cache = newVerifiedCache(opts.CacheSize)
	}
	return v, nil
}

// JWKS is the JSON Web Key Set document of the verification keys, for
// GET /.well-known/jwks.json. The caller must not change it.
func (v *Verifier) JWKS() []byte { return v.jwks }

// Verify implements ports.TokenVerifier. Every refusal wraps ports.ErrInvalidToken; the text
// after it names the failed check for logs and must not reach the client.
func (v *Verifier) Verify(_ context.Context, raw string) (ports.TokenClaims, error) {
	if raw == "" || len(raw) > maxTokenBytes {
		return ports.TokenClaims{}, invalid("empty or oversized token")
	}
	var digest [sha256.Size]byte
	if v.cache != nil {
		digest = sha256.Sum256([]byte(raw))
		if e, ok := v.cache.get(digest); ok {
			now := v.cfg.Clock.Now()
			if now.Before(e.validFrom) || !now.Before(e.validUntil) {
				v.cache.remove(digest)
				return ports.TokenClaims{}, invalid("token is expired or not valid yet")
			}
			return cloneClaims(e.claims), nil
		}
	}
	var c claims
	if _, err := v.parser.ParseWithClaims(raw, &c, v.keyFor); err != nil {
		return ports.TokenClaims{}, invalid(err.Error())
	}
	out := ports.TokenClaims{
		AccountID: c.Subject,
		ClientID:  c.ClientID,
		Scopes:    parseScopes(c.Scope),
		ExpiresAt: c.ExpiresAt.Time,
	}
	if v.cache != nil {
		// The bounds the parser just checked: valid while validFrom <= now < validUntil.
		var from time.Time
		if c.IssuedAt != nil {
			from = c.IssuedAt.Time
		}
		if c.NotBefore != nil && c.NotBefore.After(from) {
			from = c.NotBefore.Time
		}
		v.cache.put(digest, verifiedEntry{
			claims:     cloneClaims(out),
			validFrom:  from.Add(-v.leeway),
			validUntil: c.ExpiresAt.Add(v.leeway),
		}, v.cfg.Clock.Now())
	}
	return out, nil
}

// keyFor picks the verification key named by the token's kid; a token without a known kid is
// refused before any signature work.
func (v *Verifier) keyFor(t *jwt.Token) (any, error) {
	// RFC 7515 section 4.1.11: a recipient must refuse a token whose crit header names
	// extensions it does not understand; pixgate understands none.
	if _, ok := t.Header["crit"]; ok {
		return nil, errors.New("token has a crit header")
	}
	kid, ok := t.Header["kid"].(string)
	if !ok || kid == "" {
		return nil, errors.New("token has no kid")
	}
	k, ok := v.keys[kid]
	if !ok {
		return nil, errors.New("unknown kid")
	}
	return k, nil
}

func invalid(reason string) error {
	return fmt.Errorf("%w: %s", ports.ErrInvalidToken, reason)
}

// parseScopes reads the comma-separated scope claim, leaving out anything that is not a
// pixgate scope.
func parseScopes(s string) []domain.Scope {
	out := []domain.Scope{}
	for part := range strings.SplitSeq(s, ",") {
		sc, err := domain.ParseScope(strings.TrimSpace(part))
		if err == nil && !slices.Contains(out, sc) {
			out = append(out, sc)
		}
	}
	return out
}

// cloneClaims gives every caller its own scopes slice, so that no caller can change a cached
// entry.
func cloneClaims(t ports.TokenClaims) ports.TokenClaims {
	t.Scopes = slices.Clone(t.Scopes)
	return t
}

type verifiedEntry struct {
	claims     ports.TokenClaims
	validFrom  time.Time
	validUntil time.Time
}

// verifiedCache remembers tokens whose signature and claims were verified, keyed by the
// SHA-256 of the raw token. It holds at most size entries. When it is full, expired entries
// are swept and, if that freed too little, arbitrary entries (map order) go until a quarter of
// the room is free: one O(size) sweep pays for size/4 insertions, and a hit costs no
// bookkeeping at all.
type verifiedCache struct {
	mu      sync.RWMutex
	size    int
	entries map[[sha256.Size]byte]verifiedEntry
}

func newVerifiedCache(size int) *verifiedCache {
	return &verifiedCache{size: size, entries: make(map[[sha256.Size]byte]verifiedEntry, size)}
}

func (c *verifiedCache) get(k [sha256.Size]byte) (verifiedEntry, bool) {
	c.mu.RLock()
	e, ok := c.entries[k]
	c.mu.RUnlock()
	return e, ok
}

func (c *verifiedCache) remove(k [sha256.Size]byte) {
	c.mu.Lock()
	delete(c.entries, k)
	c.mu.Unlock()
}

func (c *verifiedCache) put(k [sha256.Size]byte, e verifiedEntry, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.entries[k]; !ok && len(c.entries) >= c.size {
		for key, old := range c.entries {
			if !now.Before(old.validUntil) {
				delete(c.entries, key)
			}
		}
		keep := c.size - max(1, c.size/4)
		for key := range c.entries {
			if len(c.entries) <= keep {
				break
			}
			delete(c.entries, key)
		}
	}
	c.entries[k] = e
}

// len reports how many tokens are cached (for tests).
func (c *verifiedCache) len() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.entries)
}
