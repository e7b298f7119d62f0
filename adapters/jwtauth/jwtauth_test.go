package jwtauth_test

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"math/big"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/pixgate/pixgate/adapters/jwtauth"
	"github.com/pixgate/pixgate/application"
	"github.com/pixgate/pixgate/domain"
	"github.com/pixgate/pixgate/ports"
)

const (
	testIssuer   = "https://api.pixgate.test"
	testAudience = "pixgate"
)

// clock is a hand-moved ports.Clock.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Set(t time.Time) {
	c.mu.Lock()
	c.now = t
	c.mu.Unlock()
}

// Generating RSA keys is slow; the tests share two.
var testKeys = sync.OnceValue(func() [2]*rsa.PrivateKey {
	var out [2]*rsa.PrivateKey
	for i := range out {
		k, err := jwtauth.GenerateKey()
		if err != nil {
			panic(err)
		}
		out[i] = k
	}
	return out
})

var start = time.Date(2031, 3, 4, 12, 0, 0, 0, time.UTC)

type fixture struct {
	clock    *clock
	key      *rsa.PrivateKey
	issuer   *jwtauth.Issuer
	verifier ports.TokenVerifier
}

// newFixture verifies with jwtauth's Verifier; with cacheSize > 0, through the cache that
// serve puts in front of it (application.CachingVerifier), which must answer exactly as the
// verifier does.

func newFixture(t testing.TB, cacheSize int) *fixture {
	t.Helper()
	c := &clock{now: start}
	key := testKeys()[0]
	cfg := jwtauth.Config{Issuer: testIssuer, Audience: testAudience, Clock: c}
	iss, err := jwtauth.NewIssuer(cfg, key)
	if err != nil {
		t.Fatal(err)
	}
	v, err := jwtauth.NewVerifier(cfg, jwtauth.VerifierOptions{Leeway: 30 * time.Second}, &key.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{clock: c, key: key, issuer: iss, verifier: v}
	if cacheSize > 0 {
		f.verifier = application.NewCachingVerifier(v, c, cacheSize)
	}
	return f
}

var principal = domain.Principal{
	AccountID: "0b9d4c1e-2f3a-4b5c-8d6e-7f8091a2b3c4",
	ClientID:  "merchant-client",
	Scopes:    []domain.Scope{domain.ScopeTransactionRead, domain.ScopeTransactionWrite},
}

func TestIssuedTokenVerifiesAndCarriesTheDocumentedClaims(t *testing.T) {
	f := newFixture(t, 0)
	tok, err := f.issuer.Issue(context.Background(), principal, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if !tok.IssuedAt.Equal(start) || !tok.ExpiresAt.Equal(start.Add(time.Hour)) {
		t.Errorf("issued %v expires %v, want %v and %v", tok.IssuedAt, tok.ExpiresAt, start, start.Add(time.Hour))
	}
	got, err := f.verifier.Verify(context.Background(), tok.Token)
	if err != nil {
		t.Fatalf("Verify: %v", err)
	}
	if got.AccountID != principal.AccountID || got.ClientID != principal.ClientID ||
		domain.JoinScopes(got.Scopes) != domain.JoinScopes(principal.Scopes) || !got.ExpiresAt.Equal(tok.ExpiresAt) {
		t.Errorf("claims = %+v", got)
	}

	header, payload := decodeSegments(t, tok.Token)
	if header["alg"] != "RS256" || header["kid"] != jwtauth.Thumbprint(&f.key.PublicKey) || header["kid"] != f.issuer.KeyID() {
		t.Errorf("header = %v", header)
	}
	for _, claim := range []string{"iss", "sub", "aud", "iat", "nbf", "exp", "jti", "scope", "client_id"} {
		if _, ok := payload[claim]; !ok {
			t.Errorf("claim %s missing from %v", claim, payload)
		}
	}
	if payload["scope"] != "transaction:read,transaction:write" || payload["iss"] != testIssuer || payload["sub"] != principal.AccountID {
		t.Errorf("payload = %v", payload)
	}
	if !regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`).MatchString(payload["jti"].(string)) {
		t.Errorf("jti %v is not a lowercase UUID v4", payload["jti"])
	}
	again, err := f.issuer.Issue(context.Background(), principal, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if _, p2 := decodeSegments(t, again.Token); p2["jti"] == payload["jti"] {
		t.Error("two tokens share a jti")
	}
}

func TestIssueRefusesWhatCannotMakeAToken(t *testing.T) {
	f := newFixture(t, 0)
	if _, err := f.issuer.Issue(context.Background(), principal, 0); err == nil {
		t.Error("a zero lifetime was accepted")
	}
	if _, err := f.issuer.Issue(context.Background(), domain.Principal{ClientID: "c"}, time.Hour); err == nil {
		t.Error("a principal without account was accepted")
	}
}

// forge signs arbitrary claims and header with the given method and key.
func forge(t *testing.T, method jwt.SigningMethod, key any, kid string, claims jwt.MapClaims) string {
	t.Helper()
	tok := jwt.NewWithClaims(method, claims)
	if kid != "" {
		tok.Header["kid"] = kid
	}
	s, err := tok.SignedString(key)
	if err != nil {
		t.Fatalf("forge: %v", err)
	}
	return s
}

func goodClaims() jwt.MapClaims {
	return jwt.MapClaims{
		"iss": testIssuer, "sub": principal.AccountID, "aud": testAudience,
		"iat": start.Unix(), "nbf": start.Unix(), "exp": start.Add(time.Hour).Unix(),
		"jti": "5f0b1c2d-3e4f-4a5b-8c6d-7e8f9a0b1c2d", "scope": "transaction:read", "client_id": principal.ClientID,
	}
}

func with(c jwt.MapClaims, key string, value any) jwt.MapClaims {
	if value == nil {
		delete(c, key)
	} else {
		c[key] = value
	}
	return c
}

func TestVerifyRefusesAttacks(t *testing.T) {
	keys := testKeys()
	own, other := keys[0], keys[1]
	kid := jwtauth.Thumbprint(&own.PublicKey)
	publicPEM := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: mustMarshalPKIX(t, &own.PublicKey)})
	ecKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}

	cases := []struct {
		name  string
		token func(t *testing.T) string
	}{
		{"a control token forged with the right key is accepted", nil},
		{"alg none is refused", func(t *testing.T) string {
			return forge(t, jwt.SigningMethodNone, jwt.UnsafeAllowNoneSignatureType, kid, goodClaims())
		}},
		{"alg none with an empty signature and no kid is refused", func(t *testing.T) string {
			return forge(t, jwt.SigningMethodNone, jwt.UnsafeAllowNoneSignatureType, "", goodClaims())
		}},
		{"HS256 signed with the public key's PEM bytes is refused", func(t *testing.T) string {
			return forge(t, jwt.SigningMethodHS256, publicPEM, kid, goodClaims())
		}},
		{"HS256 signed with the public key's DER bytes is refused", func(t *testing.T) string {
			return forge(t, jwt.SigningMethodHS256, mustMarshalPKIX(t, &own.PublicKey), kid, goodClaims())
		}},
		{"RS512 with the right key is refused (only RS256 is configured)", func(t *testing.T) string {
			return forge(t, jwt.SigningMethodRS512, own, kid, goodClaims())
		}},
		{"PS256 with the right key is refused", func(t *testing.T) string {
			return forge(t, jwt.SigningMethodPS256, own, kid, goodClaims())
		}},
		{"ES256 with a kid of ours is refused", func(t *testing.T) string {
			return forge(t, jwt.SigningMethodES256, ecKey, kid, goodClaims())
		}},
		{"an expired token is refused", func(t *testing.T) string {
			c := goodClaims()
			c["iat"], c["nbf"], c["exp"] = start.Add(-2*time.Hour).Unix(), start.Add(-2*time.Hour).Unix(), start.Add(-time.Hour).Unix()
			return forge(t, jwt.SigningMethodRS256, own, kid, c)
		}},
		{"a token expired 31 s ago is refused (leeway is 30 s)", func(t *testing.T) string {
			c := goodClaims()
			c["iat"], c["nbf"], c["exp"] = start.Add(-time.Hour).Unix(), start.Add(-time.Hour).Unix(), start.Add(-31*time.Second).Unix()
			return forge(t, jwt.SigningMethodRS256, own, kid, c)
		}},
		{"nbf in the future is refused", func(t *testing.T) string {
			return forge(t, jwt.SigningMethodRS256, own, kid, with(goodClaims(), "nbf", start.Add(time.Minute).Unix()))
		}},
		{"iat in the future is refused", func(t *testing.T) string {
			return forge(t, jwt.SigningMethodRS256, own, kid, with(goodClaims(), "iat", start.Add(time.Minute).Unix()))
		}},
		{"a wrong issuer is refused", func(t *testing.T) string {
			return forge(t, jwt.SigningMethodRS256, own, kid, with(goodClaims(), "iss", "https://evil.test"))
		}},
		{"a missing issuer is refused", func(t *testing.T) string {
			return forge(t, jwt.SigningMethodRS256, own, kid, with(goodClaims(), "iss", nil))
		}},
		{"a wrong audience is refused", func(t *testing.T) string {
			return forge(t, jwt.SigningMethodRS256, own, kid, with(goodClaims(), "aud", "other-service"))
		}},
		{"a missing audience is refused", func(t *testing.T) string {
			return forge(t, jwt.SigningMethodRS256, own, kid, with(goodClaims(), "aud", nil))
		}},
		{"a missing exp is refused", func(t *testing.T) string {
			return forge(t, jwt.SigningMethodRS256, own, kid, with(goodClaims(), "exp", nil))
		}},
		{"a missing sub is refused", func(t *testing.T) string {
			return forge(t, jwt.SigningMethodRS256, own, kid, with(goodClaims(), "sub", nil))
		}},
		{"a missing client_id is refused", func(t *testing.T) string {
			return forge(t, jwt.SigningMethodRS256, own, kid, with(goodClaims(), "client_id", nil))
		}},
		{"an unknown kid is refused", func(t *testing.T) string {
			return forge(t, jwt.SigningMethodRS256, own, "some-other-kid", goodClaims())
		}},
		{"a missing kid is refused", func(t *testing.T) string {
			return forge(t, jwt.SigningMethodRS256, own, "", goodClaims())
		}},
		{"a token signed by another RSA key under our kid is refused", func(t *testing.T) string {
			return forge(t, jwt.SigningMethodRS256, other, kid, goodClaims())
		}},
		{"a tampered payload is refused", func(t *testing.T) string {
			good := forge(t, jwt.SigningMethodRS256, own, kid, goodClaims())
			parts := strings.Split(good, ".")
			payload, _ := base64.RawURLEncoding.DecodeString(parts[1])
			tampered := strings.Replace(string(payload), principal.AccountID, "another-account-id-0000000000000000", 1)
			if tampered == string(payload) {
				t.Fatal("tampering changed nothing")
			}
			parts[1] = base64.RawURLEncoding.EncodeToString([]byte(tampered))
			return strings.Join(parts, ".")
		}},
		{"a tampered header is refused", func(t *testing.T) string {
			good := forge(t, jwt.SigningMethodRS256, own, kid, goodClaims())
			parts := strings.Split(good, ".")
			parts[0] = base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"RS256","kid":"` + kid + `","typ":"JWT","x":1}`))
			return strings.Join(parts, ".")
		}},
		{"a signature with a flipped trailing base64 bit (the same bytes to a lenient decoder) is refused", func(t *testing.T) string {
			return flipTrailingBit(t, forge(t, jwt.SigningMethodRS256, own, kid, goodClaims()))
		}},
		{"a token with a crit header, rightly signed, is refused", func(t *testing.T) string {
			tok := jwt.NewWithClaims(jwt.SigningMethodRS256, goodClaims())
			tok.Header["kid"] = kid
			tok.Header["crit"] = []string{"b64"}
			tok.Header["b64"] = true
			raw, err := tok.SignedString(own)
			if err != nil {
				t.Fatal(err)
			}
			return raw
		}},
		{"a token without its signature is refused", func(t *testing.T) string {
			good := forge(t, jwt.SigningMethodRS256, own, kid, goodClaims())
			return good[:strings.LastIndex(good, ".")+1]
		}},
	}
	for _, cacheSize := range []int{0, 64} {
		f := newFixture(t, cacheSize)
		for _, tc := range cases {
			name := tc.name
			if cacheSize > 0 {
				name = "with cache: " + name
			}
			t.Run(name, func(t *testing.T) {
				if tc.token == nil {
					if _, err := f.verifier.Verify(context.Background(), forge(t, jwt.SigningMethodRS256, own, kid, goodClaims())); err != nil {
						t.Fatalf("control token refused: %v", err)
					}
					return
				}
				raw := tc.token(t)
				// Twice: a refused token must not be remembered as verified.
				for range 2 {
					_, err := f.verifier.Verify(context.Background(), raw)
					if !errors.Is(err, ports.ErrInvalidToken) {
						t.Fatalf("Verify = %v, want ports.ErrInvalidToken", err)
					}
				}
			})
		}
	}
}

func TestVerifyEnforcesExpiryExactlyWithAndWithoutCache(t *testing.T) {
	for _, cacheSize := range []int{0, 16} {
		f := newFixture(t, cacheSize)
		tok, err := f.issuer.Issue(context.Background(), principal, time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		steps := []struct {
			at    time.Time
			valid bool
		}{
			{start.Add(-30 * time.Second), true}, // within leeway before iat/nbf
			{start.Add(-31 * time.Second), false},
			{start, true},
			{tok.ExpiresAt.Add(30*time.Second - time.Nanosecond), true},
			{start.Add(time.Minute), true},
			{tok.ExpiresAt.Add(30 * time.Second), false},
			{tok.ExpiresAt.Add(29 * time.Second), true}, // a cache miss after a refusal still works
			{tok.ExpiresAt.Add(time.Hour), false},
		}
		for _, s := range steps {
			f.clock.Set(s.at)
			_, err := f.verifier.Verify(context.Background(), tok.Token)
			if s.valid && err != nil {
				t.Errorf("cache %d: at %v refused: %v", cacheSize, s.at, err)
			}
			if !s.valid && !errors.Is(err, ports.ErrInvalidToken) {
				t.Errorf("cache %d: at %v = %v, want ports.ErrInvalidToken", cacheSize, s.at, err)
			}
		}
	}
}

func TestVerifiedClaimsAreTheCallersOwn(t *testing.T) {
	f := newFixture(t, 8)
	tok, err := f.issuer.Issue(context.Background(), principal, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	first, err := f.verifier.Verify(context.Background(), tok.Token)
	if err != nil {
		t.Fatal(err)
	}
	first.Scopes[0] = domain.ScopeWithdrawalWrite
	second, err := f.verifier.Verify(context.Background(), tok.Token)
	if err != nil {
		t.Fatal(err)
	}
	if second.Scopes[0] != domain.ScopeTransactionRead {
		t.Fatalf("a caller changed the cached claims: %v", second.Scopes)
	}
}

func TestVerifyLeavesOutUnknownScopes(t *testing.T) {
	f := newFixture(t, 0)
	raw := forge(t, jwt.SigningMethodRS256, f.key, f.issuer.KeyID(), with(goodClaims(), "scope", "transaction:read, admin:all,withdrawal:read,transaction:read"))
	got, err := f.verifier.Verify(context.Background(), raw)
	if err != nil {
		t.Fatal(err)
	}
	if domain.JoinScopes(got.Scopes) != "transaction:read,withdrawal:read" {
		t.Fatalf("scopes = %v", got.Scopes)
	}
}

func TestVerifyAcceptsEveryConfiguredKey(t *testing.T) {
	keys := testKeys()
	c := &clock{now: start}
	cfg := jwtauth.Config{Issuer: testIssuer, Audience: testAudience, Clock: c}
	v, err := jwtauth.NewVerifier(cfg, jwtauth.VerifierOptions{}, &keys[0].PublicKey, &keys[1].PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	for i, k := range keys {
		iss, err := jwtauth.NewIssuer(cfg, k)
		if err != nil {
			t.Fatal(err)
		}
		tok, err := iss.Issue(context.Background(), principal, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := v.Verify(context.Background(), tok.Token); err != nil {
			t.Errorf("token of key %d refused: %v", i, err)
		}
	}
}

func TestJWKSPublishesTheVerificationKeys(t *testing.T) {
	keys := testKeys()
	cfg := jwtauth.Config{Issuer: testIssuer, Audience: testAudience, Clock: &clock{now: start}}
	v, err := jwtauth.NewVerifier(cfg, jwtauth.VerifierOptions{}, &keys[0].PublicKey, &keys[1].PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Keys []map[string]string `json:"keys"`
	}
	if err := json.Unmarshal(v.JWKS(), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Keys) != 2 {
		t.Fatalf("%d keys, want 2", len(doc.Keys))
	}
	for i, k := range doc.Keys {
		if k["kty"] != "RSA" || k["alg"] != "RS256" || k["use"] != "sig" || k["kid"] != jwtauth.Thumbprint(&keys[i].PublicKey) {
			t.Errorf("key %d = %v", i, k)
		}
		n, _ := base64.RawURLEncoding.DecodeString(k["n"])
		e, _ := base64.RawURLEncoding.DecodeString(k["e"])
		if new(big.Int).SetBytes(n).Cmp(keys[i].N) != 0 || new(big.Int).SetBytes(e).Int64() != int64(keys[i].E) {
			t.Errorf("key %d does not rebuild the public key", i)
		}
		if _, ok := k["d"]; ok {
			t.Errorf("key %d leaks private material", i)
		}
	}
}

func TestThumbprintMatchesRFC7638Example(t *testing.T) {
	// RFC 7638 section 3.1.
	n, err := base64.RawURLEncoding.DecodeString("0vx7agoebGcQSuuPiLJXZptN9nndrQmbXEps2aiAFbWhM78LhWx4cbbfAAtVT86zwu1RK7aPFFxuhDR1L6tSoc_BJECPebWKRXjBZCiFV4n3oknjhMstn64tZ_2W-5JsGY4Hc5n9yBXArwl93lqt7_RN5w6Cf0h4QyQ5v-65YGjQR0_FDW2QvzqY368QQMicAtaSqzs8KJZgnYb9c7d0zgdAZHzu6qMQvRL5hajrn1n91CbOpbISD08qNLyrdkt-bFTWhAI4vMQFh6WeZu0fM4lFd2NcRwr3XPksINHaQ-G_xBniIqbw0Ls1jF44-csFCur-kEgU8awapJzKnqDKgw")
	if err != nil {
		t.Fatal(err)
	}
	pub := &rsa.PublicKey{N: new(big.Int).SetBytes(n), E: 65537}
	if got := jwtauth.Thumbprint(pub); got != "NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs" {
		t.Fatalf("thumbprint = %s", got)
	}
}

func TestLoadKeyFile(t *testing.T) {
	key := testKeys()[0]
	dir := t.TempDir()
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	pkcs8, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	ecKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	ec8, _ := x509.MarshalPKCS8PrivateKey(ecKey)
	small, err := rsa.GenerateKey(rand.Reader, 1024)
	if err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		name string
		data []byte
		ok   bool
	}{
		{"a PKCS#1 key loads", pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)}), true},
		{"a PKCS#8 key loads", pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: pkcs8}), true},
		{"an EC key is refused", pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: ec8}), false},
		{"a 1024-bit key is refused", pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(small)}), false},
		{"a public key is refused", pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: mustMarshalPKIX(t, &key.PublicKey)}), false},
		{"garbage is refused without being echoed", []byte("not-a-pem SECRETSECRET"), false},
		{"a corrupt PKCS#1 body is refused without being echoed", pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: []byte("SECRETSECRET")}), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := jwtauth.LoadKeyFile(write(strings.ReplaceAll(tc.name, " ", "_"), tc.data))
			if tc.ok {
				if err != nil {
					t.Fatal(err)
				}
				if !got.Equal(key) {
					t.Fatal("loaded another key")
				}
				return
			}
			if err == nil {
				t.Fatal("accepted")
			}
			if strings.Contains(err.Error(), "SECRET") || strings.Contains(err.Error(), "MII") {
				t.Fatalf("error echoes the file: %v", err)
			}
		})
	}
	if _, err := jwtauth.LoadKeyFile(filepath.Join(dir, "missing.pem")); err == nil {
		t.Error("a missing file was accepted")
	}
}

func TestConstructorsRefuseIncompleteConfiguration(t *testing.T) {
	key := testKeys()[0]
	good := jwtauth.Config{Issuer: testIssuer, Audience: testAudience, Clock: &clock{}}
	bad := map[string]jwtauth.Config{
		"no issuer":   {Audience: testAudience, Clock: &clock{}},
		"no audience": {Issuer: testIssuer, Clock: &clock{}},
		"no clock":    {Issuer: testIssuer, Audience: testAudience},
	}
	for name, cfg := range bad {
		if _, err := jwtauth.NewIssuer(cfg, key); err == nil {
			t.Errorf("NewIssuer with %s succeeded", name)
		}
		if _, err := jwtauth.NewVerifier(cfg, jwtauth.VerifierOptions{}, &key.PublicKey); err == nil {
			t.Errorf("NewVerifier with %s succeeded", name)
		}
	}
	if _, err := jwtauth.NewIssuer(good, nil); err == nil {
		t.Error("NewIssuer without key succeeded")
	}
	if _, err := jwtauth.NewVerifier(good, jwtauth.VerifierOptions{}); err == nil {
		t.Error("NewVerifier without keys succeeded")
	}
	if _, err := jwtauth.NewVerifier(good, jwtauth.VerifierOptions{Leeway: 31 * time.Second}, &key.PublicKey); err == nil {
		t.Error("a leeway over 30 s was accepted")
	}
}

func FuzzVerify(f *testing.F) {
	fx := newFixture(f, 16)
	tok, err := fx.issuer.Issue(context.Background(), principal, time.Hour)
	if err != nil {
		f.Fatal(err)
	}
	parts := strings.Split(tok.Token, ".")
	for _, seed := range []string{
		"", ".", "..", "...", "a.b.c", tok.Token, tok.Token + "x", parts[0] + "." + parts[1] + ".",
		parts[0] + ".." + parts[2], "eyJhbGciOiJub25lIn0.eyJzdWIiOiIxIn0.", "eyJhbGciOiJSUzI1NiIsImtpZCI6W119.e30.AA",
		strings.Repeat("A", 9000), "Bearer " + tok.Token, "\x00\xff.\xfe.\x01",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		claims, err := fx.verifier.Verify(context.Background(), raw)
		if raw == tok.Token {
			if err != nil {
				t.Fatalf("the real token was refused: %v", err)
			}
			return
		}
		if err == nil {
			// Only a genuinely signed token may pass; the fuzzer cannot forge RS256.
			t.Fatalf("garbage accepted: %q -> %+v", raw, claims)
		}
		if !errors.Is(err, ports.ErrInvalidToken) {
			t.Fatalf("Verify(%q) = %v, want ports.ErrInvalidToken", raw, err)
		}
	})
}

func BenchmarkVerify(b *testing.B) {
	for _, cache := range []int{0, 1024} {
		f := newFixture(b, cache)
		tok, err := f.issuer.Issue(context.Background(), principal, time.Hour)
		if err != nil {
			b.Fatal(err)
		}
		name := "uncached"
		if cache > 0 {
			name = "cached"
		}
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := f.verifier.Verify(context.Background(), tok.Token); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func decodeSegments(t *testing.T, raw string) (header, payload map[string]any) {
	t.Helper()
	parts := strings.Split(raw, ".")
	if len(parts) != 3 {
		t.Fatalf("token has %d parts", len(parts))
	}
	for i, dst := range []*map[string]any{&header, &payload} {
		b, err := base64.RawURLEncoding.DecodeString(parts[i])
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, dst); err != nil {
			t.Fatal(err)
		}
	}
	return header, payload
}

func mustMarshalPKIX(t *testing.T, pub *rsa.PublicKey) []byte {
	t.Helper()
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	return der
}

// flipTrailingBit sets the lowest bit of the signature's last base64url character. An RS256
// signature of 2048 bits takes 342 characters, whose last 4 bits are padding: a lenient decoder
// reads the changed text as the very same signature.
func flipTrailingBit(t *testing.T, token string) string {
	t.Helper()
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	dot := strings.LastIndex(token, ".")
	sig := token[dot+1:]
	last := strings.IndexByte(alphabet, sig[len(sig)-1])
	flipped := sig[:len(sig)-1] + string(alphabet[last^1])
	a, errA := base64.RawURLEncoding.DecodeString(sig)
	b, errB := base64.RawURLEncoding.DecodeString(flipped)
	if errA != nil || errB != nil || !bytes.Equal(a, b) {
		t.Fatalf("the flipped signature does not decode leniently to the same bytes: %v, %v", errA, errB)
	}
	return token[:dot+1] + flipped
}
