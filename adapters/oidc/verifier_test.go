package oidc_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"errors"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/pixgate/pixgate/adapters/oidc"
	"github.com/pixgate/pixgate/domain"
	"github.com/pixgate/pixgate/ports"
)

const (
	upstreamIssuer   = "https://sso.test/realms/pix"
	upstreamAudience = "pixgate"
)

var rsaKeys = sync.OnceValue(func() [2]*rsa.PrivateKey {
	var out [2]*rsa.PrivateKey
	for i := range out {
		k, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			panic(err)
		}
		out[i] = k
	}
	return out
})

// jwksServer serves a key set that tests change, counting requests.
type jwksServer struct {
	srv      *httptest.Server
	mu       sync.Mutex
	body     string
	status   int
	requests atomic.Int32
}

func newJWKSServer(t *testing.T, keys map[string]any) *jwksServer {
	t.Helper()
	s := &jwksServer{status: http.StatusOK}
	s.setKeys(t, keys)
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		s.requests.Add(1)
		s.mu.Lock()
		body, status := s.body, s.status
		s.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = w.Write([]byte(body))
	}))
	t.Cleanup(s.srv.Close)
	return s
}

func b64(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

func (s *jwksServer) setKeys(t *testing.T, keys map[string]any) {
	t.Helper()
	var list []map[string]string
	for kid, k := range keys {
		switch pub := k.(type) {
		case *rsa.PublicKey:
			list = append(list, map[string]string{"kty": "RSA", "kid": kid, "use": "sig", "alg": "RS256", "n": b64(pub.N.Bytes()), "e": b64(big.NewInt(int64(pub.E)).Bytes())})
		case *ecdsa.PublicKey:
			raw, err := pub.Bytes()
			if err != nil {
				t.Fatal(err)
			}
			size := (len(raw) - 1) / 2
			list = append(list, map[string]string{"kty": "EC", "kid": kid, "crv": "P-256", "x": b64(raw[1 : 1+size]), "y": b64(raw[1+size:])})
		}
	}
	// Keycloak also publishes encryption keys; they must be skipped.
	list = append(list, map[string]string{"kty": "RSA", "kid": "enc-key", "use": "enc", "n": "AQAB", "e": "AQAB"})
	body, err := json.Marshal(map[string]any{"keys": list})
	if err != nil {
		t.Fatal(err)
	}
	s.set(string(body), http.StatusOK)
}

func (s *jwksServer) set(body string, status int) {
	s.mu.Lock()
	s.body, s.status = body, status
	s.mu.Unlock()
}

func newVerifier(t *testing.T, jwksURL string, c *clock, algs ...string) *oidc.Verifier {
	t.Helper()
	v, err := oidc.NewVerifier(oidc.VerifierConfig{
		JWKSURL: jwksURL, Issuer: upstreamIssuer, Audience: upstreamAudience,
		Algorithms: algs, Leeway: 10 * time.Second, RefetchInterval: time.Minute,
		Timeout: time.Second, Clock: c,
	})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// keycloakClaims are what Keycloak puts in a client-credentials token.
func keycloakClaims() jwt.MapClaims {
	return jwt.MapClaims{
		"iss": upstreamIssuer, "aud": []string{"account", upstreamAudience}, "sub": "service-account-uuid",
		"iat": start.Unix(), "exp": start.Add(5 * time.Minute).Unix(), "jti": "x",
		"azp": upstreamClient, "client_id": upstreamClient, "typ": "Bearer",
		"scope": "profile transaction:write email",
	}
}

func sign(t *testing.T, method jwt.SigningMethod, key any, kid string, claims jwt.MapClaims) string {
	t.Helper()
	tok := jwt.NewWithClaims(method, claims)
	if kid != "" {
		tok.Header["kid"] = kid
	}
	s, err := tok.SignedString(key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestUpstreamVerifierAcceptsTheProvidersTokens(t *testing.T) {
	key := rsaKeys()[0]
	ecKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	jwks := newJWKSServer(t, map[string]any{"rsa-1": &key.PublicKey, "ec-1": &ecKey.PublicKey})
	c := &clock{now: start}
	v := newVerifier(t, jwks.srv.URL, c, "RS256", "ES256")

	for name, raw := range map[string]string{
		"RS256": sign(t, jwt.SigningMethodRS256, key, "rsa-1", keycloakClaims()),
		"ES256": sign(t, jwt.SigningMethodES256, ecKey, "ec-1", keycloakClaims()),
	} {
		t.Run(name+" token of the provider gives its client and pixgate scopes", func(t *testing.T) {
			got, err := v.Verify(context.Background(), raw)
			if err != nil {
				t.Fatal(err)
			}
			if got.ClientID != upstreamClient || got.AccountID != "" || domain.JoinScopes(got.Scopes) != "transaction:write" || !got.ExpiresAt.Equal(start.Add(5*time.Minute)) {
				t.Fatalf("claims = %+v", got)
			}
		})
	}
	if n := jwks.requests.Load(); n != 1 {
		t.Errorf("key set fetched %d times, want once", n)
	}

	t.Run("the client is read from azp or clientId when client_id is absent", func(t *testing.T) {
		for _, claim := range []string{"azp", "clientId"} {
			c := keycloakClaims()
			delete(c, "client_id")
			delete(c, "azp")
			c[claim] = "other-client"
			got, err := v.Verify(context.Background(), sign(t, jwt.SigningMethodRS256, key, "rsa-1", c))
			if err != nil || got.ClientID != "other-client" {
				t.Errorf("%s: %+v, %v", claim, got, err)
			}
		}
	})
}

func TestUpstreamVerifierRefusesBadTokens(t *testing.T) {
	key, other := rsaKeys()[0], rsaKeys()[1]
	jwks := newJWKSServer(t, map[string]any{"rsa-1": &key.PublicKey})
	c := &clock{now: start}
	v := newVerifier(t, jwks.srv.URL, c)
	with := func(k string, val any) jwt.MapClaims {
		cl := keycloakClaims()
		if val == nil {
			delete(cl, k)
		} else {
			cl[k] = val
		}
		return cl
	}
	noClient := keycloakClaims()
	delete(noClient, "azp")
	delete(noClient, "client_id")
	for name, raw := range map[string]string{
		"alg none":                         sign(t, jwt.SigningMethodNone, jwt.UnsafeAllowNoneSignatureType, "rsa-1", keycloakClaims()),
		"HS256 with the public key":        sign(t, jwt.SigningMethodHS256, []byte(b64(key.N.Bytes())), "rsa-1", keycloakClaims()),
		"another key under its kid":        sign(t, jwt.SigningMethodRS256, other, "rsa-1", keycloakClaims()),
		"an unknown kid":                   sign(t, jwt.SigningMethodRS256, other, "rsa-2", keycloakClaims()),
		"no kid":                           sign(t, jwt.SigningMethodRS256, key, "", keycloakClaims()),
		"an encryption key's kid":          sign(t, jwt.SigningMethodRS256, key, "enc-key", keycloakClaims()),
		"expired":                          sign(t, jwt.SigningMethodRS256, key, "rsa-1", with("exp", start.Add(-time.Minute).Unix())),
		"no exp":                           sign(t, jwt.SigningMethodRS256, key, "rsa-1", with("exp", nil)),
		"another issuer":                   sign(t, jwt.SigningMethodRS256, key, "rsa-1", with("iss", "https://sso.test/realms/other")),
		"another audience":                 sign(t, jwt.SigningMethodRS256, key, "rsa-1", with("aud", "account")),
		"no audience":                      sign(t, jwt.SigningMethodRS256, key, "rsa-1", with("aud", nil)),
		"nbf in the future":                sign(t, jwt.SigningMethodRS256, key, "rsa-1", with("nbf", start.Add(time.Hour).Unix())),
		"no client":                        sign(t, jwt.SigningMethodRS256, key, "rsa-1", noClient),
		"RS512 when only RS256 goes":       sign(t, jwt.SigningMethodRS512, key, "rsa-1", keycloakClaims()),
		"a flipped trailing signature bit": flipTrailingBit(t, sign(t, jwt.SigningMethodRS256, key, "rsa-1", keycloakClaims())),
		"a crit header":                    critToken(t, key),
		"garbage":                          "not.a.token",
		"empty":                            "",
	} {
		t.Run(name+" is refused", func(t *testing.T) {
			if _, err := v.Verify(context.Background(), raw); !errors.Is(err, ports.ErrInvalidToken) {
				t.Fatalf("Verify = %v, want ports.ErrInvalidToken", err)
			}
		})
	}
}

func TestUpstreamVerifierFollowsKeyRotationWithinItsRateLimit(t *testing.T) {
	oldKey, newKey := rsaKeys()[0], rsaKeys()[1]
	jwks := newJWKSServer(t, map[string]any{"old": &oldKey.PublicKey})
	c := &clock{now: start}
	v := newVerifier(t, jwks.srv.URL, c)
	ctx := context.Background()

	if _, err := v.Verify(ctx, sign(t, jwt.SigningMethodRS256, oldKey, "old", keycloakClaims())); err != nil {
		t.Fatal(err)
	}
	// A flood of unknown kids costs at most one fetch per interval: none right after the first
	// fetch, then one for the whole flood once the interval has passed.
	forged := sign(t, jwt.SigningMethodRS256, newKey, "forged-kid", with(keycloakClaims(), "exp", start.Add(time.Hour).Unix()))
	flood := func() {
		var wg sync.WaitGroup
		for range 50 {
			wg.Go(func() {
				if _, err := v.Verify(ctx, forged); !errors.Is(err, ports.ErrInvalidToken) {
					t.Errorf("forged kid: %v", err)
				}
			})
		}
		wg.Wait()
	}
	flood()
	if n := jwks.requests.Load(); n != 1 {
		t.Fatalf("key set fetched %d times, want 1", n)
	}
	c.Advance(61 * time.Second)
	flood()
	if n := jwks.requests.Load(); n != 2 {
		t.Fatalf("key set fetched %d times, want 2", n)
	}

	// The provider rotates; within the interval the new kid is not fetched yet.
	jwks.setKeys(t, map[string]any{"new": &newKey.PublicKey})
	c.Advance(30 * time.Second)
	rotated := sign(t, jwt.SigningMethodRS256, newKey, "new", with(keycloakClaims(), "exp", start.Add(time.Hour).Unix()))
	if _, err := v.Verify(ctx, sign(t, jwt.SigningMethodRS256, oldKey, "old", with(keycloakClaims(), "exp", start.Add(time.Hour).Unix()))); err != nil {
		t.Fatalf("the old key stopped before the provider's key set was fetched again: %v", err)
	}
	if _, err := v.Verify(ctx, rotated); !errors.Is(err, ports.ErrInvalidToken) {
		t.Fatalf("Verify within the interval = %v, want ports.ErrInvalidToken", err)
	}
	c.Advance(31 * time.Second)
	if _, err := v.Verify(ctx, rotated); err != nil {
		t.Fatalf("Verify after the interval: %v", err)
	}
	if n := jwks.requests.Load(); n != 3 {
		t.Fatalf("key set fetched %d times, want 3", n)
	}
	if _, err := v.Verify(ctx, sign(t, jwt.SigningMethodRS256, oldKey, "old", with(keycloakClaims(), "exp", start.Add(time.Hour).Unix()))); !errors.Is(err, ports.ErrInvalidToken) {
		t.Fatalf("a key the provider dropped still verifies: %v", err)
	}
}

func with(c jwt.MapClaims, k string, v any) jwt.MapClaims {
	c[k] = v
	return c
}

func TestUpstreamVerifierWhenTheKeySetFails(t *testing.T) {
	key := rsaKeys()[0]
	ctx := context.Background()
	token := func() string {
		return sign(t, jwt.SigningMethodRS256, key, "rsa-1", with(keycloakClaims(), "exp", start.Add(24*time.Hour).Unix()))
	}

	for name, set := range map[string]func(*jwksServer){
		"a 500":               func(s *jwksServer) { s.set(`{"error":"boom"}`, 500) },
		"garbage JSON":        func(s *jwksServer) { s.set(`{"keys": [`, 200) },
		"an empty key set":    func(s *jwksServer) { s.set(`{"keys": []}`, 200) },
		"malformed keys only": func(s *jwksServer) { s.set(`{"keys": [{"kty":"RSA","kid":"rsa-1","n":"!!","e":"AQAB"}]}`, 200) },
		"a weak RSA key":      func(s *jwksServer) { s.set(`{"keys": [{"kty":"RSA","kid":"rsa-1","n":"AQAB","e":"AQAB"}]}`, 200) },
		"an HTML page":        func(s *jwksServer) { s.set(`<html></html>`, 200) },
		"an unknown key type": func(s *jwksServer) { s.set(`{"keys": [{"kty":"oct","kid":"rsa-1","k":"c2VjcmV0"}]}`, 200) },
		"an EC key off a curve": func(s *jwksServer) {
			s.set(`{"keys": [{"kty":"EC","kid":"rsa-1","crv":"P-256","x":"`+b64(make([]byte, 32))+`","y":"`+b64(make([]byte, 32))+`"}]}`, 200)
		},
	} {
		t.Run("a key set answering "+name+" verifies nothing", func(t *testing.T) {
			jwks := newJWKSServer(t, nil)
			set(jwks)
			v := newVerifier(t, jwks.srv.URL, &clock{now: start})
			if _, err := v.Verify(ctx, token()); !errors.Is(err, ports.ErrInvalidToken) {
				t.Fatalf("Verify = %v, want ports.ErrInvalidToken", err)
			}
		})
	}

	t.Run("an unreachable key set verifies nothing", func(t *testing.T) {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := l.Addr().String()
		l.Close()
		v := newVerifier(t, "http://"+addr+"/certs", &clock{now: start})
		if _, err := v.Verify(ctx, token()); !errors.Is(err, ports.ErrInvalidToken) {
			t.Fatalf("Verify = %v, want ports.ErrInvalidToken", err)
		}
	})

	t.Run("a key set timing out verifies nothing, within the timeout", func(t *testing.T) {
		release := make(chan struct{})
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-release:
			case <-r.Context().Done():
			}
		}))
		defer srv.Close()
		defer close(release)
		v := newVerifier(t, srv.URL, &clock{now: start})
		begin := time.Now()
		if _, err := v.Verify(ctx, token()); !errors.Is(err, ports.ErrInvalidToken) {
			t.Fatalf("Verify = %v, want ports.ErrInvalidToken", err)
		}
		if took := time.Since(begin); took > 3*time.Second {
			t.Fatalf("took %v", took)
		}
	})

	t.Run("known keys keep verifying while the key set is down", func(t *testing.T) {
		jwks := newJWKSServer(t, map[string]any{"rsa-1": &key.PublicKey})
		c := &clock{now: start}
		v := newVerifier(t, jwks.srv.URL, c)
		if _, err := v.Verify(ctx, token()); err != nil {
			t.Fatal(err)
		}
		jwks.set("down", 503)
		c.Advance(2 * time.Hour)
		if _, err := v.Verify(ctx, token()); err != nil {
			t.Fatalf("a known key stopped working: %v", err)
		}
	})
}

func TestNewUpstreamVerifierRefusesBadConfiguration(t *testing.T) {
	good := oidc.VerifierConfig{JWKSURL: "https://sso.test/certs", Issuer: upstreamIssuer, Audience: upstreamAudience, Clock: &clock{}}
	if _, err := oidc.NewVerifier(good); err != nil {
		t.Fatal(err)
	}
	for name, change := range map[string]func(*oidc.VerifierConfig){
		"no JWKS URL":            func(c *oidc.VerifierConfig) { c.JWKSURL = "" },
		"no issuer":              func(c *oidc.VerifierConfig) { c.Issuer = "" },
		"no audience":            func(c *oidc.VerifierConfig) { c.Audience = "" },
		"no clock":               func(c *oidc.VerifierConfig) { c.Clock = nil },
		"HS256":                  func(c *oidc.VerifierConfig) { c.Algorithms = []string{"HS256"} },
		"none":                   func(c *oidc.VerifierConfig) { c.Algorithms = []string{"none"} },
		"a leeway of 31 seconds": func(c *oidc.VerifierConfig) { c.Leeway = 31 * time.Second },
	} {
		cfg := good
		change(&cfg)
		if _, err := oidc.NewVerifier(cfg); err == nil {
			t.Errorf("NewVerifier with %s succeeded", name)
		}
	}
}

// flipTrailingBit sets the lowest bit of the signature's last base64url character: padding
// bits, so a lenient decoder would read the same signature.
func flipTrailingBit(t *testing.T, token string) string {
	t.Helper()
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	last := strings.IndexByte(alphabet, token[len(token)-1])
	flipped := token[:len(token)-1] + string(alphabet[last^1])
	a, _ := base64.RawURLEncoding.DecodeString(token[strings.LastIndex(token, ".")+1:])
	b, _ := base64.RawURLEncoding.DecodeString(flipped[strings.LastIndex(flipped, ".")+1:])
	if len(a) == 0 || string(a) != string(b) {
		t.Fatal("the flipped signature does not decode leniently to the same bytes")
	}
	return flipped
}

// critToken is a rightly signed token whose header asks for an extension pixgate does not know.
func critToken(t *testing.T, key any) string {
	t.Helper()
	tok := jwt.NewWithClaims(jwt.SigningMethodRS256, keycloakClaims())
	tok.Header["kid"] = "rsa-1"
	tok.Header["crit"] = []string{"b64"}
	tok.Header["b64"] = true
	raw, err := tok.SignedString(key)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}
