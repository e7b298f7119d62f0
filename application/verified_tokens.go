package application

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/pixgate/pixgate/ports"
)

// DefaultVerifiedTokenCacheSize bounds a CachingVerifier: one entry per token in use, a few
// hundred bytes each.
const DefaultVerifiedTokenCacheSize = 10_000

// CachingVerifier remembers the tokens its verifier accepted, so that a token presented again
// skips the verification (for pixgate's own tokens, an RSA signature check). A remembered
// token is answered only from the time it was verified until its ExpiresAt, by clock: inside
// that span the verifier answers the same (a token it accepted once stays valid until it
// expires, or a little after, by its leeway), and outside it, a clock turned back or a token
// past its expiry, the verifier is asked again. Refusals are never remembered. Keys are the
// raw tokens themselves: looking a 700-byte token up in the map takes about 0.1 µs, hashing it
// with SHA-256 first took 1.5 to 3.5 µs on every request (docs/PERFORMANCE.md), and a process
// whose memory can be read holds the signing key anyway. At most size tokens are
// held. Safe for concurrent use.
type CachingVerifier struct {
	verifier ports.TokenVerifier
	clock    ports.Clock
	tokens   *expiringCache[string, verifiedToken]
}

var _ ports.TokenVerifier = (*CachingVerifier)(nil)

// verifiedToken is what the verifier answered and when.
type verifiedToken struct {
	claims     ports.TokenClaims // the cache's own copy, never handed out
	verifiedAt time.Time
}

// NewCachingVerifier puts a cache of at most size tokens (0: DefaultVerifiedTokenCacheSize)
// in front of verifier. A negative size turns caching off: it returns verifier itself.
func NewCachingVerifier(verifier ports.TokenVerifier, clock ports.Clock, size int) ports.TokenVerifier {
	requirePorts("NewCachingVerifier", verifier, clock)
	if size < 0 {
		return verifier
	}
	if size == 0 {
		size = DefaultVerifiedTokenCacheSize
	}
	return &CachingVerifier{verifier: verifier, clock: clock, tokens: newExpiringCache[string, verifiedToken](size)}
}

// Verify implements ports.TokenVerifier.
func (c *CachingVerifier) Verify(ctx context.Context, raw string) (ports.TokenClaims, error) {
	now := c.clock.Now()
	if t, ok := c.tokens.get(raw, now); ok && !now.Before(t.verifiedAt) {
		return cloneClaims(t.claims), nil
	}
	claims, err := c.verifier.Verify(ctx, raw)
	if err != nil {
		return ports.TokenClaims{}, err
	}
	// Read after the verification: the verifier accepted the token at some time before this.
	if at := c.clock.Now(); at.Before(claims.ExpiresAt) {
		// A copy, so that the entry does not keep the request's header alive.
		c.tokens.put(strings.Clone(raw), verifiedToken{claims: cloneClaims(claims), verifiedAt: at}, claims.ExpiresAt, at)
	}
	return claims, nil
}

// Len is how many tokens the cache holds.
func (c *CachingVerifier) Len() int { return c.tokens.len() }

// cloneClaims gives every caller its own scopes slice, so that no caller can change a cached
// entry.
func cloneClaims(t ports.TokenClaims) ports.TokenClaims {
	t.Scopes = slices.Clone(t.Scopes)
	return t
}
