package jwtauth

import (
	"context"
	"crypto/rsa"
	"errors"
	"fmt"
	"slices"
	"strings"
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
}

// Verifier checks pixgate's own tokens against a fixed set of RSA public keys, chosen by kid.
// It verifies every token it is given (application.CachingVerifier remembers the tokens it
// accepted). It is safe for concurrent use.
type Verifier struct {
	cfg    Config
	keys   map[string]*rsa.PublicKey
	jwks   []byte
	parser *jwt.Parser
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
	v := &Verifier{cfg: cfg, keys: byKid, jwks: doc}
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
	var c claims
	if _, err := v.parser.ParseWithClaims(raw, &c, v.keyFor); err != nil {
		return ports.TokenClaims{}, invalid(err.Error())
	}
	return ports.TokenClaims{
		AccountID: c.Subject,
		ClientID:  c.ClientID,
		Scopes:    parseScopes(c.Scope),
		ExpiresAt: c.ExpiresAt.Time,
	}, nil
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
