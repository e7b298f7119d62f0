package jwtauth

import (
	"context"
	"crypto/rsa"
	"errors"
	"fmt"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/pixgate/pixgate/domain"
	"github.com/pixgate/pixgate/ports"
)

const algorithm = "RS256"

// MaxLeeway is the most clock leeway verification allows (docs/API.md, Token endpoints: 30 s).
const MaxLeeway = 30 * time.Second

// Config is what issuer and verifier must agree on.
type Config struct {
	Issuer   string      // iss of every token, e.g. "https://api.pixgate.example"; required
	Audience string      // aud of every token, e.g. "pixgate"; required
	Clock    ports.Clock // required
}

func (c Config) check() error {
	if c.Issuer == "" {
		return errors.New("jwtauth: issuer is required")
	}
	if c.Audience == "" {
		return errors.New("jwtauth: audience is required")
	}
	if c.Clock == nil {
		return errors.New("jwtauth: clock is required")
	}
	return nil
}

// claims is the token's payload.
type claims struct {
	jwt.RegisteredClaims
	Scope    string `json:"scope"`
	ClientID string `json:"client_id"`
}

// Validate is called by the parser after the registered claims have passed: a token without
// its subject or client id names no one.
func (c *claims) Validate() error {
	if c.Subject == "" {
		return errors.New("sub is required")
	}
	if c.ClientID == "" {
		return errors.New("client_id is required")
	}
	return nil
}

var _ ports.TokenIssuer = (*Issuer)(nil)

// Issuer signs access tokens with one RSA key. It is safe for concurrent use.
type Issuer struct {
	cfg    Config
	key    *rsa.PrivateKey
	kid    string
	method jwt.SigningMethod
}

// NewIssuer returns an issuer signing with key (at least MinKeyBits).
func NewIssuer(cfg Config, key *rsa.PrivateKey) (*Issuer, error) {
	if err := cfg.check(); err != nil {
		return nil, err
	}
	if key == nil {
		return nil, errors.New("jwtauth: signing key is required")
	}
	if bits := key.N.BitLen(); bits < MinKeyBits {
		return nil, fmt.Errorf("jwtauth: RSA key of %d bits, want at least %d", bits, MinKeyBits)
	}
	key.Precompute()
	return &Issuer{cfg: cfg, key: key, kid: Thumbprint(&key.PublicKey), method: jwt.SigningMethodRS256}, nil
}

// KeyID is the kid of the tokens this issuer signs.
func (i *Issuer) KeyID() string { return i.kid }

// PublicKey is the key that verifies this issuer's tokens.
func (i *Issuer) PublicKey() *rsa.PublicKey { return &i.key.PublicKey }

// Issue implements ports.TokenIssuer.
func (i *Issuer) Issue(_ context.Context, p domain.Principal, lifetime time.Duration) (ports.IssuedToken, error) {
	lifetime = lifetime.Truncate(time.Second)
	if lifetime <= 0 {
		return ports.IssuedToken{}, errors.New("jwtauth: token lifetime must be at least one second")
	}
	if p.AccountID == "" || p.ClientID == "" {
		return ports.IssuedToken{}, errors.New("jwtauth: principal needs an account id and a client id")
	}
	now := i.cfg.Clock.Now().UTC().Truncate(time.Second)
	exp := now.Add(lifetime)
	c := &claims{
		RegisteredClaims: jwt.RegisteredClaims{
			Issuer:    i.cfg.Issuer,
			Subject:   p.AccountID,
			Audience:  jwt.ClaimStrings{i.cfg.Audience},
			ExpiresAt: jwt.NewNumericDate(exp),
			NotBefore: jwt.NewNumericDate(now),
			IssuedAt:  jwt.NewNumericDate(now),
			ID:        domain.NewID(), // the jti
		},
		Scope:    domain.JoinScopes(p.Scopes),
		ClientID: p.ClientID,
	}
	tok := jwt.NewWithClaims(i.method, c)
	tok.Header["kid"] = i.kid
	signed, err := tok.SignedString(i.key)
	if err != nil {
		return ports.IssuedToken{}, fmt.Errorf("jwtauth: sign token: %w", err)
	}
	return ports.IssuedToken{Token: signed, IssuedAt: now, ExpiresAt: exp}, nil
}
