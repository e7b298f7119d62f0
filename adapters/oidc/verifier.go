package oidc

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rsa"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/pixgate/pixgate/domain"
	"github.com/pixgate/pixgate/ports"
)

// DefaultRefetchInterval is the least time between two key set fetches caused by unknown kids.
const DefaultRefetchInterval = 30 * time.Second

// maxLeeway is the bound on clock leeway (docs/API.md, Token endpoints).
const maxLeeway = 30 * time.Second

// maxTokenBytes bounds what Verify looks at.
const maxTokenBytes = 16 << 10

var _ ports.TokenVerifier = (*Verifier)(nil)

// VerifierConfig configures a Verifier.
type VerifierConfig struct {
	// JWKSURL is the provider's key set (PIXGATE_AUTH_UPSTREAM_JWKS_URL), e.g.
	// https://sso.example/realms/pix/protocol/openid-connect/certs. Required.
	JWKSURL string
	// Issuer is the provider's iss, e.g. https://sso.example/realms/pix. Required.
	Issuer string
	// Audience must be among the token's aud (in Keycloak, an audience mapper on the client
	// scope). Required: a token minted for another service must not open pixgate.
	Audience string
	// Algorithms accepted; ["RS256"] when empty. Only RS*, PS* and ES* are supported.
	Algorithms []string
	// Leeway is the clock skew tolerated on exp, nbf and iat; 0 to 30 s.
	Leeway time.Duration
	// RefetchInterval is the least time between two fetches of the key set caused by unknown
	// kids, so that a flood of forged kids cannot turn into a flood of requests upstream;
	// DefaultRefetchInterval when zero.
	RefetchInterval time.Duration
	// Timeout bounds one key set fetch; DefaultTimeout when zero.
	Timeout    time.Duration
	Clock      ports.Clock // required
	HTTPClient *http.Client
}

// Verifier checks the upstream provider's access tokens against its key set, fetched on first
// use and kept; a token with a kid the set does not hold makes it fetch again, at most once per
// RefetchInterval. While the provider cannot be reached, tokens signed with known keys keep
// verifying. It is safe for concurrent use.
type Verifier struct {
	cfg    VerifierConfig
	client *http.Client
	parser *jwt.Parser

	mu      sync.RWMutex
	keys    map[string]any // kid -> *rsa.PublicKey or *ecdsa.PublicKey
	triedAt time.Time      // last attempt, successful or not

	fetchMu sync.Mutex // one fetch at a time
}

// NewVerifier checks cfg and returns a verifier. It fetches nothing yet, so that the server
// starts while the provider is down.
func NewVerifier(cfg VerifierConfig) (*Verifier, error) {
	if err := checkURL(cfg.JWKSURL); err != nil {
		return nil, fmt.Errorf("oidc: JWKS URL: %w", err)
	}
	if cfg.Issuer == "" || cfg.Audience == "" {
		return nil, errors.New("oidc: issuer and audience are required")
	}
	if cfg.Clock == nil {
		return nil, errors.New("oidc: clock is required")
	}
	if cfg.Leeway < 0 || cfg.Leeway > maxLeeway {
		return nil, fmt.Errorf("oidc: leeway %s is outside 0 to %s", cfg.Leeway, maxLeeway)
	}
	if len(cfg.Algorithms) == 0 {
		cfg.Algorithms = []string{"RS256"}
	}
	for _, alg := range cfg.Algorithms {
		if !supportedAlgorithm(alg) {
			return nil, fmt.Errorf("oidc: algorithm %q is not supported", alg)
		}
	}
	if cfg.RefetchInterval <= 0 {
		cfg.RefetchInterval = DefaultRefetchInterval
	}
	v := &Verifier{cfg: cfg, client: httpClient(cfg.HTTPClient, cfg.Timeout), keys: map[string]any{}}
	v.parser = jwt.NewParser(
		jwt.WithValidMethods(slices.Clone(cfg.Algorithms)),
		jwt.WithIssuer(cfg.Issuer),
		jwt.WithAudience(cfg.Audience),
		jwt.WithExpirationRequired(),
		jwt.WithIssuedAt(),
		jwt.WithLeeway(cfg.Leeway),
		// A segment decodes one way only: a signature with non-zero padding bits (a flipped
		// trailing base64 bit) is refused, not read as the same bytes.
		jwt.WithStrictDecoding(),
		jwt.WithTimeFunc(cfg.Clock.Now),
	)
	return v, nil
}

func supportedAlgorithm(alg string) bool {
	switch alg {
	case "RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512":
		return true
	}
	return false
}

// upstreamClaims are the claims of a Keycloak-style client-credentials token.
type upstreamClaims struct {
	jwt.RegisteredClaims
	Scope       string `json:"scope"`
	ClientID    string `json:"client_id"`
	AZP         string `json:"azp"`
	OldClientID string `json:"clientId"` // Keycloak before version 20
}

func (c *upstreamClaims) clientID() string {
	for _, id := range []string{c.ClientID, c.AZP, c.OldClientID} {
		if id != "" {
			return id
		}
	}
	return ""
}

// Verify implements ports.TokenVerifier. AccountID is always empty: the provider knows
// clients, not pixgate accounts.
func (v *Verifier) Verify(ctx context.Context, raw string) (ports.TokenClaims, error) {
	if raw == "" || len(raw) > maxTokenBytes {
		return ports.TokenClaims{}, invalid("empty or oversized token")
	}
	var c upstreamClaims
	_, err := v.parser.ParseWithClaims(raw, &c, func(t *jwt.Token) (any, error) { return v.keyFor(ctx, t) })
	if err != nil {
		return ports.TokenClaims{}, invalid(err.Error())
	}
	id := c.clientID()
	if id == "" {
		return ports.TokenClaims{}, invalid("token names no client")
	}
	return ports.TokenClaims{ClientID: id, Scopes: parseScopes(c.Scope), ExpiresAt: c.ExpiresAt.Time}, nil
}

func invalid(reason string) error {
	return fmt.Errorf("%w: %s", ports.ErrInvalidToken, reason)
}

// keyFor finds the token's key, fetching the key set when the kid is unknown (rate limited).
// The parser has already checked the algorithm against the configured list; the key's type
// must suit it, which the signing method checks.
func (v *Verifier) keyFor(ctx context.Context, t *jwt.Token) (any, error) {
	// RFC 7515 section 4.1.11: a recipient must refuse a token whose crit header names
	// extensions it does not understand; pixgate understands none.
	if _, ok := t.Header["crit"]; ok {
		return nil, errors.New("token has a crit header")
	}
	kid, ok := t.Header["kid"].(string)
	if !ok || kid == "" {
		return nil, errors.New("token has no kid")
	}
	if k, ok := v.key(kid); ok {
		return k, nil
	}
	if err := v.refresh(ctx); err != nil {
		return nil, err
	}
	if k, ok := v.key(kid); ok {
		return k, nil
	}
	return nil, errors.New("unknown kid")
}

func (v *Verifier) key(kid string) (any, bool) {
	v.mu.RLock()
	defer v.mu.RUnlock()
	k, ok := v.keys[kid]
	return k, ok
}

// refresh fetches the key set unless an attempt was made less than RefetchInterval ago. Only
// one fetch runs at a time; callers arriving during it wait for it and then reuse its result.
func (v *Verifier) refresh(ctx context.Context) error {
	v.fetchMu.Lock()
	defer v.fetchMu.Unlock()
	v.mu.RLock()
	tried := v.triedAt
	v.mu.RUnlock()
	now := v.cfg.Clock.Now()
	if !tried.IsZero() && now.Sub(tried) < v.cfg.RefetchInterval {
		return nil // a recent attempt stands; the caller looks the kid up again
	}
	// One request giving up must not cost everyone a RefetchInterval: the fetch runs to its
	// own timeout whatever happens to the request that caused it.
	keys, err := v.fetch(context.WithoutCancel(ctx))
	v.mu.Lock()
	defer v.mu.Unlock()
	v.triedAt = now
	if err != nil {
		return err
	}
	v.keys = keys
	return nil
}

// jsonWebKey holds the members of RFC 7517/7518 keys that matter here.
type jsonWebKey struct {
	Kty string `json:"kty"`
	Kid string `json:"kid"`
	Use string `json:"use"`
	N   string `json:"n"`
	E   string `json:"e"`
	Crv string `json:"crv"`
	X   string `json:"x"`
	Y   string `json:"y"`
}

func (v *Verifier) fetch(ctx context.Context) (map[string]any, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, v.cfg.JWKSURL, nil)
	if err != nil {
		return nil, fmt.Errorf("key set request: %w", err)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := v.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("key set unreachable: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("key set answered %d", resp.StatusCode)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes+1))
	if err != nil || len(body) > maxResponseBytes {
		return nil, errors.New("key set unreadable or too large")
	}
	var set struct {
		Keys []jsonWebKey `json:"keys"`
	}
	if err := decodeJSON(resp.Header.Get("Content-Type"), body, &set); err != nil {
		return nil, fmt.Errorf("key set: %w", err)
	}
	keys := map[string]any{}
	for _, k := range set.Keys {
		if k.Kid == "" || (k.Use != "" && k.Use != "sig") {
			continue
		}
		if pub, err := k.publicKey(); err == nil {
			keys[k.Kid] = pub
		}
	}
	if len(keys) == 0 {
		return nil, errors.New("key set holds no usable signing key")
	}
	return keys, nil
}

func (k jsonWebKey) publicKey() (any, error) {
	switch k.Kty {
	case "RSA":
		n, err1 := base64.RawURLEncoding.DecodeString(k.N)
		e, err2 := base64.RawURLEncoding.DecodeString(k.E)
		if err1 != nil || err2 != nil || len(e) == 0 || len(e) > 4 {
			return nil, errors.New("malformed RSA key")
		}
		pub := &rsa.PublicKey{N: new(big.Int).SetBytes(n), E: int(new(big.Int).SetBytes(e).Int64())}
		if pub.N.BitLen() < 2048 || pub.E < 3 || pub.E%2 == 0 {
			return nil, errors.New("weak RSA key")
		}
		return pub, nil
	case "EC":
		var curve elliptic.Curve
		switch k.Crv {
		case "P-256":
			curve = elliptic.P256()
		case "P-384":
			curve = elliptic.P384()
		case "P-521":
			curve = elliptic.P521()
		default:
			return nil, errors.New("unsupported curve")
		}
		x, err1 := base64.RawURLEncoding.DecodeString(k.X)
		y, err2 := base64.RawURLEncoding.DecodeString(k.Y)
		size := (curve.Params().BitSize + 7) / 8
		if err1 != nil || err2 != nil || len(x) != size || len(y) != size {
			return nil, errors.New("malformed EC key")
		}
		// Uncompressed point encoding, checked on the curve by ecdsa.ParseUncompressedPublicKey.
		point := append(append([]byte{4}, x...), y...)
		return ecdsa.ParseUncompressedPublicKey(curve, point)
	}
	return nil, errors.New("unsupported key type")
}

// parseScopes reads an OAuth scope string (space-separated, or comma-separated as pixgate
// writes it), keeping pixgate's scopes only.
func parseScopes(s string) []domain.Scope {
	out := []domain.Scope{}
	for _, part := range strings.FieldsFunc(s, func(r rune) bool { return r == ' ' || r == ',' }) {
		if sc, err := domain.ParseScope(part); err == nil && !slices.Contains(out, sc) {
			out = append(out, sc)
		}
	}
	return out
}
