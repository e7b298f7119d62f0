package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto"
	"crypto/hmac"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/pixgate/pixgate/adapters/webhook"
	"github.com/pixgate/pixgate/application"
	"github.com/pixgate/pixgate/domain"
)

// The OWASP API Security Top 10 (2023), item by item, at the HTTP boundary: pixgate assembled
// as `serve` assembles it, real JSON, real JWTs. Each test is named after the item it proves
// (TestOWASPAPI1..., TestOWASPAPI10...) so that docs/SECURITY.md can cite it. Helpers here
// start with "sec".

// secSigningKey is the RSA key the apps of these tests sign with (through
// PIXGATE_JWT_PRIVATE_KEY_FILE), so that the tests can forge tokens with the very key the
// server trusts; secOtherKey is a key the server does not know.
var (
	secSigningKey = sync.OnceValue(func() *rsa.PrivateKey { return secNewKey() })
	secOtherKey   = sync.OnceValue(func() *rsa.PrivateKey { return secNewKey() })
)

func secNewKey() *rsa.PrivateKey {
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		panic(err)
	}
	return k
}

// secEnv is newEnv with the known signing key, refunds and withdrawals settling as soon as the
// settle jobs run, and vars on top.
func secEnv(t *testing.T, vars map[string]string, options ...func(*app)) *env {
	t.Helper()
	keyFile := filepath.Join(t.TempDir(), "signing-key.pem")
	block := pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(secSigningKey())})
	if err := os.WriteFile(keyFile, block, 0o600); err != nil {
		t.Fatal(err)
	}
	base := map[string]string{"PIXGATE_JWT_PRIVATE_KEY_FILE": keyFile, "PIXGATE_SANDBOX_SETTLE_SECONDS": "0"}
	for k, v := range vars {
		base[k] = v
	}
	return newEnv(t, base, options...)
}

// secAccount creates an account with every scope and returns it with its first credential.
func (e *env) secAccount() application.CreatedAccount {
	e.t.Helper()
	created, err := application.NewCreateAccount(e.app.stores.accounts, e.app.ids, e.app.clock, e.app.hasher).
		Execute(context.Background(), "Loja Segura", nil)
	if err != nil {
		e.t.Fatal(err)
	}
	return created
}

// secToken issues a token of the account's first credential carrying exactly scopes.
func (e *env) secToken(a application.CreatedAccount, scopes ...domain.Scope) string {
	e.t.Helper()
	tok, err := e.app.issuer.Issue(context.Background(), domain.Principal{AccountID: a.Account.ID(),
		ClientID: a.Credential.ClientID, Scopes: scopes}, time.Hour)
	if err != nil {
		e.t.Fatal(err)
	}
	return tok.Token
}

// secTokenFromEndpoint obtains a token from POST /auth/token with a form body.
func (e *env) secTokenFromEndpoint(clientID, secret string) response {
	e.t.Helper()
	form := url.Values{"grant_type": {"client_credentials"}, "client_id": {clientID}, "client_secret": {secret}}
	return e.do("POST", "/auth/token", "", form.Encode(), "Content-Type", "application/x-www-form-urlencoded")
}

// secStrip is a problem body without what differs between any two answers (requestId, and
// instance, the path asked for), as canonical JSON.
func secStrip(t *testing.T, r response) string {
	t.Helper()
	m := r.json(t)
	delete(m, "requestId")
	delete(m, "instance")
	return mustJSON(t, m)
}

// secJob runs the background job named name once, as `serve` runs it on its interval.
func (e *env) secJob(name string) {
	e.t.Helper()
	for _, j := range e.app.jobs {
		if j.name == name {
			if _, err := j.run(context.Background()); err != nil {
				e.t.Fatalf("job %s: %v", name, err)
			}
			return
		}
	}
	e.t.Fatalf("no job %q", name)
}

// secCreate creates a transaction of amount (cents) and returns its id.
func (e *env) secCreate(tok string, amount int64) string {
	e.t.Helper()
	body := minimalTransaction()
	body["amount"] = amount
	r := e.do("POST", "/transaction", tok, body)
	if r.status != http.StatusCreated {
		e.t.Fatalf("POST /transaction: %d %s", r.status, r.body)
	}
	return r.json(e.t)["id"].(string)
}

// secWant sends a request and wants status.
func (e *env) secWant(status int, method, path, tok string, body any) response {
	e.t.Helper()
	r := e.do(method, path, tok, body)
	if r.status != status {
		e.t.Fatalf("%s %s: %d, want %d\n%s", method, path, r.status, status, r.body)
	}
	return r
}

// secPaid creates a transaction of amount and pays it through the sandbox.
func (e *env) secPaid(tok string, amount int64) string {
	e.t.Helper()
	id := e.secCreate(tok, amount)
	e.secWant(http.StatusOK, "POST", "/sandbox/transaction/"+id+"/pay", tok, nil)
	return id
}

func (e *env) secWithdraw(tok string, amount int64) string {
	e.t.Helper()
	r := e.secWant(http.StatusCreated, "POST", "/withdrawal", tok, map[string]any{
		"amount": amount, "pixKey": map[string]any{"key": "maria@example.com", "type": "EMAIL"}})
	return r.json(e.t)["id"].(string)
}

func (e *env) secBalance(tok string) string {
	e.t.Helper()
	return string(e.secWant(http.StatusOK, "GET", "/balance", tok, nil).body)
}

// secRoutes lists the routes of the app's router as "METHOD /template".
func (e *env) secRoutes() []string {
	e.t.Helper()
	var out []string
	for _, route := range e.app.server.Routes() {
		for _, m := range route.Methods {
			out = append(out, m+" "+route.Path)
		}
	}
	slices.Sort(out)
	return out
}

const secUnknownID = "4f1c2d3e-5a6b-4c7d-8e9f-0a1b2c3d4e5f"

// ---------------------------------------------------------------------------------------------
// API1:2023 Broken Object Level Authorization

// TestOWASPAPI1AnotherAccountsIDAnswersExactlyLikeAnUnknownIDOnEveryRoute tries every route that
// names one object of an account, each with the owner's object in a status where the owner's
// own request would be allowed, with a stranger's token of every scope.
func TestOWASPAPI1AnotherAccountsIDAnswersExactlyLikeAnUnknownIDOnEveryRoute(t *testing.T) {
	e := secEnv(t, nil)
	_, owner := e.account()
	_, stranger := e.account()
	e.secPaid(stranger, 1_000_000) // the stranger has money and every scope: nothing but ownership stops it

	txNew := e.secCreate(owner, 1_000)
	txPaid := e.secPaid(owner, 1_000)
	txBlocked := e.secPaid(owner, 1_000)
	e.secWant(http.StatusOK, "POST", "/sandbox/transaction/"+txBlocked+"/med/open", owner, nil)
	txRefunding := e.secPaid(owner, 1_000)
	e.secWant(http.StatusAccepted, "POST", "/transaction/"+txRefunding+"/refund", owner, nil)
	e.secPaid(owner, 1_000_000)
	wdProcessed := e.secWithdraw(owner, 1_000)
	e.secJob(payoutJobName)
	wdProcessing := e.secWithdraw(owner, 1_000)
	cred := e.secWant(http.StatusCreated, "POST", "/auth/credentials", owner, nil).json(t)
	clientID, secret := cred["client_id"].(string), cred["client_secret"].(string)

	routes := []struct{ method, template, id string }{
		{"GET", "/transaction/{id}", txNew},
		{"POST", "/transaction/{id}/refund", txPaid},
		{"GET", "/transaction/{id}/events", txNew},
		{"GET", "/withdrawal/{id}", wdProcessing},
		{"POST", "/withdrawal/{id}/cancel", wdProcessing},
		{"GET", "/withdrawal/{id}/events", wdProcessing},
		{"POST", "/sandbox/transaction/{id}/pay", txNew},
		{"POST", "/sandbox/transaction/{id}/med/open", txPaid},
		{"POST", "/sandbox/transaction/{id}/med/accept", txBlocked},
		{"POST", "/sandbox/transaction/{id}/med/reject", txBlocked},
		{"POST", "/sandbox/transaction/{id}/refund/fail", txRefunding},
		{"POST", "/sandbox/withdrawal/{id}/fail", wdProcessing},
		{"POST", "/sandbox/withdrawal/{id}/reject", wdProcessing},
		{"POST", "/sandbox/withdrawal/{id}/refund", wdProcessed},
		{"DELETE", "/auth/credentials/{clientId}", clientID},
	}

	t.Run("the table covers every route of the router that names an object", func(t *testing.T) {
		var covered []string
		for _, r := range routes {
			covered = append(covered, r.method+" "+r.template)
		}
		for _, r := range e.secRoutes() {
			// A payment page's {token} names no account's object: it is a capability, the
			// authority itself (adapters/httpapi/payment_page_test.go checks that tokens reveal
			// nothing).
			if strings.Contains(r, "{") && !strings.Contains(r, "{token}") && !slices.Contains(covered, r) {
				t.Errorf("route %s names an object but is not checked here", r)
			}
		}
	})

	snapshot := func() map[string]string {
		s := map[string]string{"balance": e.secBalance(owner),
			"statement": string(e.secWant(http.StatusOK, "GET", "/balance/entries?limit=100", owner, nil).body)}
		for _, id := range []string{txNew, txPaid, txBlocked, txRefunding} {
			s[id] = string(e.secWant(http.StatusOK, "GET", "/transaction/"+id, owner, nil).body)
		}
		for _, id := range []string{wdProcessed, wdProcessing} {
			s[id] = string(e.secWant(http.StatusOK, "GET", "/withdrawal/"+id, owner, nil).body)
		}
		return s
	}
	before := snapshot()
	strangerBalance := e.secBalance(stranger)

	for _, r := range routes {
		t.Run(r.method+" "+r.template+" answers 404 as for an unknown id", func(t *testing.T) {
			path := func(id string) string {
				return strings.NewReplacer("{id}", id, "{clientId}", id).Replace(r.template)
			}
			theirs := e.do(r.method, path(r.id), stranger, nil)
			problemOf(t, theirs, http.StatusNotFound, "not_found")
			unknown := e.do(r.method, path(secUnknownID), stranger, nil)
			problemOf(t, unknown, http.StatusNotFound, "not_found")
			if a, b := secStrip(t, theirs), secStrip(t, unknown); a != b {
				t.Fatalf("another account's id answers\n%s\nan unknown id\n%s", a, b)
			}
			if !secSameHeaders(theirs.header, unknown.header, "X-Request-Id", "Date") {
				t.Fatalf("headers differ:\n%v\n%v", theirs.header, unknown.header)
			}
		})
	}

	t.Run("the stranger's requests changed nothing", func(t *testing.T) {
		after := snapshot()
		for k, v := range before {
			if after[k] != v {
				t.Errorf("%s changed:\n%s\n%s", k, v, after[k])
			}
		}
		if got := e.secBalance(stranger); got != strangerBalance {
			t.Errorf("the stranger's balance moved: %s -> %s", strangerBalance, got)
		}
		if r := e.secTokenFromEndpoint(clientID, secret); r.status != http.StatusOK {
			t.Errorf("the owner's credential no longer works: %d %s", r.status, r.body)
		}
	})

	t.Run("the statement shows only the caller's own entries", func(t *testing.T) {
		for _, accept := range []string{"application/json", "text/csv"} {
			r := e.do("GET", "/balance/entries?limit=100", stranger, nil, "Accept", accept)
			if r.status != http.StatusOK {
				t.Fatalf("%s: %d %s", accept, r.status, r.body)
			}
			for _, id := range []string{txPaid, txBlocked, txRefunding, wdProcessed, wdProcessing} {
				if bytes.Contains(r.body, []byte(id)) {
					t.Fatalf("the stranger's statement (%s) shows the owner's %s", accept, id)
				}
			}
		}
	})

	t.Run("the list shows only the caller's own transactions", func(t *testing.T) {
		for _, q := range []string{"", "?id=" + txNew, "?perPage=100", "?status=PAID&status=BLOCKED&status=PROCESSING_REFUND"} {
			r := e.secWant(http.StatusOK, "GET", "/transaction"+q, stranger, nil)
			for _, id := range []string{txNew, txPaid, txBlocked, txRefunding} {
				if bytes.Contains(r.body, []byte(id)) {
					t.Fatalf("GET /transaction%s shows the owner's %s to the stranger", q, id)
				}
			}
		}
	})
}

// secSameHeaders compares two headers, leaving out the names in except.
func secSameHeaders(a, b http.Header, except ...string) bool {
	norm := func(h http.Header) string {
		c := h.Clone()
		for _, k := range except {
			c.Del(k)
		}
		b, _ := json.Marshal(c)
		return string(b)
	}
	return norm(a) == norm(b)
}

// ---------------------------------------------------------------------------------------------
// API2:2023 Broken Authentication

// secSplit decodes a compact JWS into its header and claims (numbers kept exact).
func secSplit(t *testing.T, token string) (header, claims map[string]any) {
	t.Helper()
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		t.Fatalf("token %q is not a compact JWS", token)
	}
	decode := func(s string) map[string]any {
		raw, err := base64.RawURLEncoding.DecodeString(s)
		if err != nil {
			t.Fatal(err)
		}
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		var m map[string]any
		if err := dec.Decode(&m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	return decode(parts[0]), decode(parts[1])
}

func secB64(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

// secFlipTrailingBit sets the lowest bit of the signature's last base64url character: an RS256
// signature leaves 4 padding bits there, so a lenient decoder reads the very same signature.
func secFlipTrailingBit(t *testing.T, token string) string {
	t.Helper()
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	dot := strings.LastIndex(token, ".")
	sig := token[dot+1:]
	flipped := sig[:len(sig)-1] + string(alphabet[strings.IndexByte(alphabet, sig[len(sig)-1])^1])
	a, errA := base64.RawURLEncoding.DecodeString(sig)
	b, errB := base64.RawURLEncoding.DecodeString(flipped)
	if errA != nil || errB != nil || string(a) != string(b) {
		t.Fatalf("the flipped signature does not decode leniently to the same bytes: %v, %v", errA, errB)
	}
	return token[:dot+1] + flipped
}

// secForge builds a compact JWS of header and claims signed by sign (nil: no signature).
func secForge(t *testing.T, header, claims map[string]any, sign func([]byte) []byte) string {
	t.Helper()
	h, err := json.Marshal(header)
	if err != nil {
		t.Fatal(err)
	}
	c, err := json.Marshal(claims)
	if err != nil {
		t.Fatal(err)
	}
	input := secB64(h) + "." + secB64(c)
	if sign == nil {
		return input + "."
	}
	return input + "." + secB64(sign([]byte(input)))
}

func secRS256(key *rsa.PrivateKey) func([]byte) []byte {
	return func(input []byte) []byte {
		sum := sha256.Sum256(input)
		sig, err := rsa.SignPKCS1v15(rand.Reader, key, crypto.SHA256, sum[:])
		if err != nil {
			panic(err)
		}
		return sig
	}
}

func secHS256(secret []byte) func([]byte) []byte {
	return func(input []byte) []byte {
		mac := hmac.New(sha256.New, secret)
		mac.Write(input)
		return mac.Sum(nil)
	}
}

func secWith(m map[string]any, changes map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	for k, v := range changes {
		if v == nil {
			delete(out, k)
		} else {
			out[k] = v
		}
	}
	return out
}

// secJWKSKey reads the one key the server publishes.
func (e *env) secJWKSKey() (kid string, pub *rsa.PublicKey, modulus []byte) {
	e.t.Helper()
	var doc struct {
		Keys []struct{ Kid, N, E string } `json:"keys"`
	}
	r := e.secWant(http.StatusOK, "GET", "/.well-known/jwks.json", "", nil)
	if err := json.Unmarshal(r.body, &doc); err != nil || len(doc.Keys) != 1 {
		e.t.Fatalf("JWKS %s: %v", r.body, err)
	}
	n, err1 := base64.RawURLEncoding.DecodeString(doc.Keys[0].N)
	ex, err2 := base64.RawURLEncoding.DecodeString(doc.Keys[0].E)
	if err1 != nil || err2 != nil {
		e.t.Fatalf("JWKS key: %v %v", err1, err2)
	}
	pub = &rsa.PublicKey{N: new(big.Int).SetBytes(n), E: int(new(big.Int).SetBytes(ex).Int64())}
	return doc.Keys[0].Kid, pub, n
}

func TestOWASPAPI2ForgedExpiredAndMisaddressedTokensAllAnswerTheSame401(t *testing.T) {
	e := secEnv(t, nil)
	created := e.secAccount()
	real := e.secToken(created, domain.AllScopes()...)
	other := e.secAccount()
	header, claims := secSplit(t, real)
	kid, pub, modulus := e.secJWKSKey()
	if header["kid"] != kid {
		t.Fatalf("the token's kid %v is not the published %s", header["kid"], kid)
	}
	pkix, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	pkixPEM := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pkix})
	pkcs1PEM := pem.EncodeToMemory(&pem.Block{Type: "RSA PUBLIC KEY", Bytes: x509.MarshalPKCS1PublicKey(pub)})
	now := time.Now().Unix()
	signed := secRS256(secSigningKey())

	t.Run("control: the same claims signed with the server's key are accepted", func(t *testing.T) {
		e.secWant(http.StatusOK, "GET", "/transaction", secForge(t, header, claims, signed), nil)
		e.secWant(http.StatusOK, "GET", "/transaction", secForge(t, header, secWith(claims, map[string]any{"jti": "another-jti"}), signed), nil)
	})

	hs := secWith(header, map[string]any{"alg": "HS256"})
	parts := strings.Split(real, ".")
	tampered := secWith(claims, map[string]any{"scope": "transaction:read,transaction:write,withdrawal:read,withdrawal:write,admin"})
	cases := []struct{ name, token string }{
		{"garbage", "not.a.jwt"},
		{"three empty segments", ".."},
		{"alg none without a signature", secForge(t, secWith(header, map[string]any{"alg": "none"}), claims, nil)},
		{"alg None with the real signature", secForge(t, secWith(header, map[string]any{"alg": "None"}), claims, nil) + parts[2]},
		{"alg none without kid", secForge(t, map[string]any{"alg": "none", "typ": "JWT"}, claims, nil)},
		{"HS256 keyed with the public key's PEM (PKIX)", secForge(t, hs, claims, secHS256(pkixPEM))},
		{"HS256 keyed with the public key's PEM (PKCS #1)", secForge(t, hs, claims, secHS256(pkcs1PEM))},
		{"HS256 keyed with the public key's DER", secForge(t, hs, claims, secHS256(pkix))},
		{"HS256 keyed with the JWKS modulus bytes", secForge(t, hs, claims, secHS256(modulus))},
		{"HS256 keyed with the kid", secForge(t, hs, claims, secHS256([]byte(kid)))},
		{"RS256 by another key under the published kid", secForge(t, header, claims, secRS256(secOtherKey()))},
		{"RS256 by another key with an embedded jwk", secForge(t, secWith(header, map[string]any{"kid": nil, "jwk": map[string]any{
			"kty": "RSA", "n": secB64(secOtherKey().N.Bytes()), "e": "AQAB"}}), claims, secRS256(secOtherKey()))},
		{"RS256 by the server's key without kid", secForge(t, secWith(header, map[string]any{"kid": nil}), claims, signed)},
		{"PS256 by the server's key", secForge(t, secWith(header, map[string]any{"alg": "PS256"}), claims, func(in []byte) []byte {
			sum := sha256.Sum256(in)
			sig, _ := rsa.SignPSS(rand.Reader, secSigningKey(), crypto.SHA256, sum[:], nil)
			return sig
		})},
		{"payload changed (a scope added), signature kept", secForge(t, header, tampered, nil) + parts[2]},
		{"expired an hour ago", secForge(t, header, secWith(claims, map[string]any{"iat": now - 7200, "nbf": now - 7200, "exp": now - 3600}), signed)},
		{"expired 60 s ago, past the 30 s leeway", secForge(t, header, secWith(claims, map[string]any{"iat": now - 3600, "nbf": now - 3600, "exp": now - 60}), signed)},
		{"not valid before an hour from now", secForge(t, header, secWith(claims, map[string]any{"nbf": now + 3600}), signed)},
		{"issued an hour in the future", secForge(t, header, secWith(claims, map[string]any{"iat": now + 3600, "nbf": now + 3600}), signed)},
		{"without exp", secForge(t, header, secWith(claims, map[string]any{"exp": nil}), signed)},
		{"for another audience", secForge(t, header, secWith(claims, map[string]any{"aud": "another-api"}), signed)},
		{"without aud", secForge(t, header, secWith(claims, map[string]any{"aud": nil}), signed)},
		{"from another issuer", secForge(t, header, secWith(claims, map[string]any{"iss": "https://evil.example"}), signed)},
		{"without iss", secForge(t, header, secWith(claims, map[string]any{"iss": nil}), signed)},
		{"naming another account with this credential", secForge(t, header, secWith(claims, map[string]any{"sub": other.Account.ID()}), signed)},
		{"naming another account's credential", secForge(t, header, secWith(claims, map[string]any{"client_id": other.Credential.ClientID}), signed)},
		{"of a credential that does not exist", secForge(t, header, secWith(claims, map[string]any{"client_id": secUnknownID}), signed)},
		{"over 8 KiB", secForge(t, header, secWith(claims, map[string]any{"pad": strings.Repeat("a", 9<<10)}), signed)},
		{"with a flipped trailing base64 bit in its signature (the same bytes to a lenient decoder)", secFlipTrailingBit(t, real)},
		{"with a crit header, signed by the server's key", secForge(t, secWith(header, map[string]any{"crit": []string{"b64"}, "b64": true}), claims, signed)},
	}
	reference := e.do("GET", "/transaction", "", nil, "Authorization", "Bearer not.a.jwt")
	problemOf(t, reference, http.StatusUnauthorized, "unauthorized")
	for _, c := range cases {
		t.Run("a token "+c.name+" answers 401 with the one body", func(t *testing.T) {
			r := e.do("GET", "/transaction", c.token, nil)
			problemOf(t, r, http.StatusUnauthorized, "unauthorized")
			if got := r.header.Get("WWW-Authenticate"); got != `Bearer error="invalid_token"` {
				t.Errorf("WWW-Authenticate = %q", got)
			}
			if a, b := secStrip(t, r), secStrip(t, reference); a != b {
				t.Fatalf("the body tells this refusal apart:\n%s\n%s", a, b)
			}
		})
	}
	t.Run("the log names the failed check; the answer does not", func(t *testing.T) {
		if !strings.Contains(e.log.String(), `"status":401`) {
			t.Fatal("no access log line for the refusals")
		}
	})
}

func TestOWASPAPI2ARevokedCredentialsTokensStopWorkingAtOnce(t *testing.T) {
	e := secEnv(t, nil)
	_, tok := e.account()
	cred := e.secWant(http.StatusCreated, "POST", "/auth/credentials", tok, nil)
	if cred.header.Get("Cache-Control") != "no-store" {
		t.Errorf("the new secret's answer is cacheable: Cache-Control %q", cred.header.Get("Cache-Control"))
	}
	c := cred.json(t)
	clientID, secret := c["client_id"].(string), c["client_secret"].(string)
	granted := e.secTokenFromEndpoint(clientID, secret)
	if granted.status != http.StatusOK {
		t.Fatalf("token: %d %s", granted.status, granted.body)
	}
	second := granted.json(t)["access_token"].(string)
	e.secWant(http.StatusOK, "GET", "/transaction", second, nil)

	e.secWant(http.StatusNoContent, "DELETE", "/auth/credentials/"+clientID, tok, nil)

	reference := e.do("GET", "/transaction", "garbage", nil)
	r := e.do("GET", "/transaction", second, nil)
	problemOf(t, r, http.StatusUnauthorized, "unauthorized")
	if a, b := secStrip(t, r), secStrip(t, reference); a != b {
		t.Fatalf("a revoked credential's token answers apart:\n%s\n%s", a, b)
	}
	again := e.secTokenFromEndpoint(clientID, secret)
	if again.status != http.StatusUnauthorized || again.json(t)["error"] != "invalid_client" {
		t.Fatalf("the revoked credential still obtains tokens: %d %s", again.status, again.body)
	}
	e.secWant(http.StatusOK, "GET", "/transaction", tok, nil) // the other credential lives on
}

func TestOWASPAPI2ADisabledAccountAnswers403Forbidden(t *testing.T) {
	e := secEnv(t, nil)
	accountID, tok := e.account()
	c := e.secWant(http.StatusCreated, "POST", "/auth/credentials", tok, nil).json(t)
	id := e.secCreate(tok, 1_000)
	if err := application.NewDisableAccount(e.app.stores.accounts).Execute(context.Background(), accountID); err != nil {
		t.Fatal(err)
	}
	for _, rt := range []struct {
		method, path string
		body         any
	}{
		{"GET", "/transaction", nil}, {"GET", "/transaction/" + id, nil}, {"POST", "/transaction", minimalTransaction()},
		{"GET", "/balance", nil}, {"GET", "/balance/entries", nil}, {"POST", "/auth/credentials", nil}, {"GET", "/webhook/secret", nil},
	} {
		t.Run(rt.method+" "+rt.path, func(t *testing.T) {
			problemOf(t, e.do(rt.method, rt.path, tok, rt.body), http.StatusForbidden, "forbidden")
		})
	}
	t.Run("its credentials obtain no token", func(t *testing.T) {
		r := e.secTokenFromEndpoint(c["client_id"].(string), c["client_secret"].(string))
		if r.status != http.StatusUnauthorized || r.json(t)["error"] != "invalid_client" {
			t.Fatalf("%d %s", r.status, r.body)
		}
	})
}

func TestOWASPAPI2TheTokenEndpointTellsNoCredentialFailureApart(t *testing.T) {
	e := secEnv(t, nil)
	a := e.secAccount()
	b := e.secAccount()
	strip := func(r response) string {
		if r.status != http.StatusUnauthorized {
			t.Fatalf("status %d: %s", r.status, r.body)
		}
		if r.header.Get("Cache-Control") != "no-store" {
			t.Errorf("token error without Cache-Control: no-store")
		}
		return string(r.body)
	}
	unknown := strip(e.secTokenFromEndpoint(secUnknownID, a.Credential.Secret))
	wrong := strip(e.secTokenFromEndpoint(a.Credential.ClientID, a.Credential.Secret+"x"))
	crossed := strip(e.secTokenFromEndpoint(a.Credential.ClientID, b.Credential.Secret))
	if unknown != wrong || wrong != crossed {
		t.Fatalf("bodies differ:\n%s\n%s\n%s", unknown, wrong, crossed)
	}
	t.Run("a secret in the query string is refused before it is checked", func(t *testing.T) {
		q := url.Values{"client_id": {a.Credential.ClientID}, "client_secret": {a.Credential.Secret}}
		for _, method := range []string{"GET", "POST"} {
			r := e.do(method, "/auth/token?"+q.Encode(), "", nil)
			if r.status != http.StatusBadRequest || r.json(t)["error"] != "invalid_request" {
				t.Fatalf("%s: %d %s", method, r.status, r.body)
			}
		}
	})
	t.Run("no secret reaches the log", func(t *testing.T) {
		for _, s := range []string{a.Credential.Secret, b.Credential.Secret} {
			if strings.Contains(e.log.String(), s) {
				t.Fatal("a client secret is in the log")
			}
		}
	})
}

// ---------------------------------------------------------------------------------------------
// API3:2023 Broken Object Property Level Authorization

// secServerFields are the fields of a Transaction only pixgate sets.
var secServerFields = map[string]any{
	"id": "7b0e8a52-3c8e-4f0e-9d2a-2f3b4c5d6e7f", "status": "PAID", "amountPaid": 1000, "feeAmount": 0,
	"acquirer": "EVIL", "createdAt": "2020-01-01T00:00:00.000Z", "updatedAt": "2020-01-01T00:00:00.000Z",
	"statusHistory": []any{map[string]any{"status": "PAID", "date": "2020-01-01T00:00:00.000Z"}},
	"pixResponse":   map[string]any{"uri": "000201", "qrCodeBase64": "", "expirationDate": "2099-01-01T00:00:00.000Z"},
	"endToEnd":      "E00360305202611221419aBcDeFgHiJk", "endToEndRefund": "D00360305202611221430aBcDeFgHiJk",
	"payer":       map[string]any{"type": "PF", "name": "Eu", "document": validCPF},
	"receiver":    map[string]any{"type": "PF", "name": "Eu", "document": validCPF},
	"paymentDate": "2020-01-01T00:00:00.000Z", "infractionDate": "2020-01-01T00:00:00.000Z",
	"errorMessage": "x", "type": "TRANSACTION", "accountId": "someone-else", "version": 7,
}

func TestOWASPAPI3ServerFieldsCannotBeSetThroughPOSTTransaction(t *testing.T) {
	e := secEnv(t, nil)
	_, tok := e.account()
	for name, value := range secServerFields {
		t.Run(name+" answers 422 unknown_field", func(t *testing.T) {
			body := minimalTransaction()
			body[name] = value
			fields := problemOf(t, e.do("POST", "/transaction", tok, body), http.StatusUnprocessableEntity, "validation_failed")
			if !slices.Equal(fields, []string{name + " unknown_field"}) {
				t.Fatalf("errors %v", fields)
			}
		})
	}
	t.Run("nested server fields answer 422 too", func(t *testing.T) {
		body := fullTransaction()
		body["customer"].(map[string]any)["document"] = map[string]any{"value": validCNPJ, "type": "CNPJ"}
		body["items"].([]any)[0].(map[string]any)["id"] = "x"
		body["pix"] = map[string]any{"expirationSeconds": 600, "uri": "000201"}
		fields := problemOf(t, e.do("POST", "/transaction", tok, body), http.StatusUnprocessableEntity, "validation_failed")
		want := []string{"customer.document invalid_type", "items[0].id unknown_field", "pix.uri unknown_field"}
		if !slices.Equal(fields, want) {
			t.Fatalf("errors %v, want %v", fields, want)
		}
	})
	t.Run("nothing of the kind was stored", func(t *testing.T) {
		if total := e.secWant(http.StatusOK, "GET", "/transaction", tok, nil).json(t)["total"]; total != float64(0) {
			t.Fatalf("%v transactions stored", total)
		}
	})
}

func TestOWASPAPI3ServerFieldsCannotBeSetThroughPOSTWithdrawal(t *testing.T) {
	e := secEnv(t, nil)
	_, tok := e.account()
	e.secPaid(tok, 100_000)
	before := e.secBalance(tok)
	for name, value := range map[string]any{
		"id": secUnknownID, "status": "PROCESSED", "amountWithdrawn": 1, "processedDate": "2020-01-01T00:00:00.000Z",
		"feeAmount": 0, "acquirer": "EVIL", "method": "PIX", "createdAt": "2020-01-01T00:00:00.000Z",
		"updatedAt": "2020-01-01T00:00:00.000Z", "statusHistory": []any{}, "errorMessage": "x",
		"endToEnd": "E00360305202611221419aBcDeFgHiJk", "payer": map[string]any{}, "receiver": map[string]any{},
		"accountId": "someone-else",
	} {
		t.Run(name+" answers 422 unknown_field", func(t *testing.T) {
			body := map[string]any{"amount": 1_000, "pixKey": map[string]any{"key": "maria@example.com", "type": "EMAIL"}, name: value}
			fields := problemOf(t, e.do("POST", "/withdrawal", tok, body), http.StatusUnprocessableEntity, "validation_failed")
			if !slices.Equal(fields, []string{name + " unknown_field"}) {
				t.Fatalf("errors %v", fields)
			}
		})
	}
	if after := e.secBalance(tok); after != before {
		t.Fatalf("the balance moved: %s -> %s", before, after)
	}
}

func TestOWASPAPI3AnswersShowNoInternalOrUnmaskedProperty(t *testing.T) {
	e := secEnv(t, nil)
	accountID, tok := e.account()
	body := fullTransaction()
	body["idempotencyKey"] = "secret-idempotency-key-0001"
	created := e.secWant(http.StatusCreated, "POST", "/transaction", tok, body)
	id := created.json(t)["id"].(string)
	e.secPaid(tok, 10_000)
	wd := e.secWant(http.StatusCreated, "POST", "/withdrawal", tok, map[string]any{"amount": 1, "pixKey": map[string]any{"key": validCPF, "type": "CPF"}})
	wdID := wd.json(t)["id"].(string)

	answers := map[string]response{
		"POST /transaction":     created,
		"GET /transaction/{id}": e.secWant(http.StatusOK, "GET", "/transaction/"+id, tok, nil),
		"GET /transaction":      e.secWant(http.StatusOK, "GET", "/transaction", tok, nil),
		"POST /withdrawal":      wd,
		"GET /withdrawal/{id}":  e.secWant(http.StatusOK, "GET", "/withdrawal/"+wdID, tok, nil),
	}
	for name, r := range answers {
		t.Run(name, func(t *testing.T) {
			for _, leak := range []string{accountID, "secret-idempotency-key-0001", "birthdate", "1990-05-17",
				"52998224725", validCPF, "fingerprint", "version", "accountId", "whsec_"} {
				if bytes.Contains(r.body, []byte(leak)) {
					t.Errorf("the answer shows %q:\n%s", leak, r.body)
				}
			}
		})
	}
	t.Run("the document is masked, the transaction shows only the fields of docs/API.md, Response shapes", func(t *testing.T) {
		got := answers["GET /transaction/{id}"].json(t)
		allowed := []string{"id", "acquirer", "amount", "paymentMethod", "webhookUrl", "externalCode", "customer", "seller",
			"isInfoProduct", "address", "items", "metadata", "createdAt", "status", "statusHistory", "updatedAt", "amountPaid",
			"paymentDate", "infractionDate", "pixResponse", "errorMessage", "endToEnd", "endToEndRefund", "payer", "receiver", "feeAmount",
			"amountRefunded", "refunds", // pixgate's refunds
			"paymentUrl"} // the hosted payment page
		for k := range got {
			if !slices.Contains(allowed, k) {
				t.Errorf("field %q is not one of docs/API.md, Response shapes", k)
			}
		}
		customer := got["customer"].(map[string]any)
		if doc := customer["document"].(map[string]any); doc["value"] != "***.982.247-**" || doc["type"] != "CPF" {
			t.Errorf("customer.document = %v", doc)
		}
		for k := range customer {
			if !slices.Contains([]string{"ip", "name", "email", "document", "landline", "mobilePhone"}, k) {
				t.Errorf("customer field %q is not one of docs/API.md, Response shapes", k)
			}
		}
	})
}

// ---------------------------------------------------------------------------------------------
// API4:2023 Unrestricted Resource Consumption

// secReader hides its length, so that a body goes chunked, without Content-Length.
type secReader struct{ io.Reader }

func TestOWASPAPI4BodiesOver1MiBAnswer413(t *testing.T) {
	e := secEnv(t, map[string]string{"PIXGATE_ACQUIRER_SECRET": acqSecret})
	_, tok := e.account()
	id := e.secCreate(tok, 1_000)
	big := `{"metadata": {"x": "` + strings.Repeat("a", 1<<20) + `"}}`
	for _, rt := range []struct{ path, auth string }{
		{"/transaction", "Bearer " + tok},
		{"/withdrawal", "Bearer " + tok},
		{"/sandbox/transaction/" + id + "/pay", "Bearer " + tok},
		{"/transaction/" + id + "/refund", "Bearer " + tok},
		{"/acquirer/pix", "Bearer " + acqSecret},
	} {
		for _, chunked := range []bool{false, true} {
			t.Run(fmt.Sprintf("POST %s chunked=%v", rt.path, chunked), func(t *testing.T) {
				var body io.Reader = strings.NewReader(big)
				if chunked {
					body = secReader{body}
				}
				req, _ := http.NewRequest("POST", e.srv.URL+rt.path, body)
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Authorization", rt.auth)
				res, err := e.srv.Client().Do(req)
				if err != nil {
					t.Fatal(err)
				}
				defer res.Body.Close()
				raw, _ := io.ReadAll(res.Body)
				problemOf(t, response{status: res.StatusCode, header: res.Header, body: raw}, http.StatusRequestEntityTooLarge, "payload_too_large")
			})
		}
	}
	t.Run("POST /auth/token answers 413 in OAuth's shape", func(t *testing.T) {
		r := e.do("POST", "/auth/token", "", "client_id=a&client_secret="+strings.Repeat("a", 1<<20), "Content-Type", "application/x-www-form-urlencoded")
		if r.status != http.StatusRequestEntityTooLarge || r.json(t)["error"] != "invalid_request" {
			t.Fatalf("%d %.200s", r.status, r.body)
		}
	})
	if r := e.secWant(http.StatusOK, "GET", "/transaction/"+id, tok, nil); r.json(t)["status"] != "PIX_QRCODE_GENERATED" {
		t.Fatalf("a refused body moved the transaction: %s", r.body)
	}
}

func TestOWASPAPI4CollectionsAndPagesAreBounded(t *testing.T) {
	e := secEnv(t, nil)
	_, tok := e.account()
	manyKeys := map[string]any{}
	for i := range 51 {
		manyKeys[fmt.Sprint("k", i)] = i
	}
	var items []any
	for range 101 {
		items = append(items, map[string]any{"title": "item", "unitPrice": 1})
	}
	cases := []struct {
		name  string
		set   func(map[string]any)
		field string
	}{
		{"metadata of 51 keys", func(b map[string]any) { b["metadata"] = manyKeys }, "metadata too_long"},
		{"metadata over 8 KiB", func(b map[string]any) { b["metadata"] = map[string]any{"x": strings.Repeat("a", 8<<10)} }, "metadata too_long"},
		{"101 items", func(b map[string]any) { b["items"] = items }, "items too_long"},
		{"an externalCode of 256 characters", func(b map[string]any) { b["externalCode"] = strings.Repeat("é", 256) }, "externalCode too_long"},
		{"a webhookUrl over 2048 characters", func(b map[string]any) {
			b["webhookUrl"] = "https://merchant.example.com/" + strings.Repeat("a", 2048)
		}, "webhookUrl too_long"},
	}
	for _, c := range cases {
		t.Run(c.name+" answers 422", func(t *testing.T) {
			body := minimalTransaction()
			c.set(body)
			fields := problemOf(t, e.do("POST", "/transaction", tok, body), http.StatusUnprocessableEntity, "validation_failed")
			if !slices.Equal(fields, []string{c.field}) {
				t.Fatalf("errors %v", fields)
			}
		})
	}
	t.Run("perPage 101 answers 422; 100 is the most", func(t *testing.T) {
		fields := problemOf(t, e.do("GET", "/transaction?perPage=101", tok, nil), http.StatusUnprocessableEntity, "validation_failed")
		if !slices.Equal(fields, []string{"perPage out_of_range"}) {
			t.Fatalf("errors %v", fields)
		}
		if got := e.secWant(http.StatusOK, "GET", "/transaction?perPage=100", tok, nil).json(t)["perPage"]; got != float64(100) {
			t.Fatalf("perPage %v", got)
		}
	})
	t.Run("deeply nested JSON answers 422 malformed_json", func(t *testing.T) {
		deep := `{"amount": 1000, "paymentMethod": "PIX", "pix": {}, "metadata": {"x": ` +
			strings.Repeat("[", 200_000) + strings.Repeat("]", 200_000) + `}}`
		problemOf(t, e.do("POST", "/transaction", tok, deep), http.StatusUnprocessableEntity, "malformed_json")
	})
}

// TestOWASPAPI4ValidationAnswersStayBounded: a body of 1 MiB must not buy an answer many times
// its size (nor the memory to build it). A body of a million tiny wrong values is the cheapest
// way to ask for one error each.
func TestOWASPAPI4ValidationAnswersStayBounded(t *testing.T) {
	e := secEnv(t, map[string]string{"PIXGATE_ACQUIRER_SECRET": acqSecret})
	_, tok := e.account()
	const limit = 256 << 10
	ones := strings.TrimSuffix(strings.Repeat("1,", 400_000), ",")
	var keys strings.Builder
	for i := range 80_000 {
		fmt.Fprintf(&keys, `"%x":0,`, i)
	}
	cases := []struct {
		name, path, auth, body string
	}{
		{"400 000 items of the wrong type", "/transaction", "Bearer " + tok, `{"items": [` + ones + `]}`},
		{"80 000 unknown fields", "/transaction", "Bearer " + tok, `{` + strings.TrimSuffix(keys.String(), ",") + `}`},
		{"400 000 callback entries of the wrong type", "/acquirer/pix", "Bearer " + acqSecret, `{"pix": [` + ones + `]}`},
	}
	for _, c := range cases {
		t.Run(c.name+" answers 422 in less than 256 KiB", func(t *testing.T) {
			if len(c.body) > 1<<20 {
				t.Fatalf("the body has %d bytes, over the limit it means to stay under", len(c.body))
			}
			r := e.do("POST", c.path, "", c.body, "Authorization", c.auth)
			if r.status != http.StatusUnprocessableEntity {
				t.Fatalf("status %d", r.status)
			}
			if len(r.body) > limit {
				t.Fatalf("a %d-byte body bought a %d-byte answer (%.0f times its size)", len(c.body), len(r.body), float64(len(r.body))/float64(len(c.body)))
			}
		})
	}
	t.Run("8 000 unknown query parameters answer 422 in less than 256 KiB", func(t *testing.T) {
		var q strings.Builder
		for i := range 8_000 {
			fmt.Fprintf(&q, "%x&", i)
		}
		r := e.do("GET", "/transaction?"+q.String(), tok, nil)
		if r.status != http.StatusUnprocessableEntity || len(r.body) > limit {
			t.Fatalf("status %d, %d bytes", r.status, len(r.body))
		}
	})
}

func TestOWASPAPI4CreationIsRateLimitedPerAccount(t *testing.T) {
	// The buckets refill by the app's clock, held still here: at 1 request a second, two
	// creations slower than half a second each (a busy machine) would otherwise refill the
	// bucket before the third request and turn the expected 429 into a 201.
	clock := &fakeClock{at: time.Now().UTC()}
	e := secEnv(t, map[string]string{"PIXGATE_RATE_LIMIT_RPS": "1", "PIXGATE_RATE_LIMIT_BURST": "2"},
		func(a *app) { a.clock = clock })
	_, tok := e.account()
	_, other := e.account()
	e.secCreate(tok, 1_000)
	e.secCreate(tok, 1_000)
	r := e.do("POST", "/transaction", tok, minimalTransaction())
	problemOf(t, r, http.StatusTooManyRequests, "rate_limited")
	if ra := r.header.Get("Retry-After"); ra == "" || strings.Trim(ra, "0123456789") != "" || ra == "0" {
		t.Fatalf("Retry-After = %q, want whole seconds, at least 1", ra)
	}
	t.Run("invalid requests spend the bucket too, so they cannot be used to probe for free", func(t *testing.T) {
		problemOf(t, e.do("POST", "/transaction", tok, `{}`), http.StatusTooManyRequests, "rate_limited")
	})
	t.Run("another account is not limited by the flood", func(t *testing.T) {
		e.secCreate(other, 1_000)
	})
}

// secServe runs the real `serve` on a loopback port until the test ends.
func secServe(t *testing.T, vars map[string]string) string {
	t.Helper()
	base := map[string]string{"PIXGATE_ADDR": "127.0.0.1:0", "PIXGATE_LOG_LEVEL": "error"}
	for k, v := range vars {
		base[k] = v
	}
	cfg, err := loadConfig(func(k string) string { return base[k] })
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	addrs := make(chan string, 1)
	done := make(chan error, 1)
	go func() { done <- serve(ctx, cfg, io.Discard, io.Discard, func(addr string) { addrs <- addr }) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("serve: %v", err)
			}
		case <-time.After(15 * time.Second):
			t.Error("serve did not stop")
		}
	})
	select {
	case addr := <-addrs:
		return addr
	case err := <-done:
		t.Fatalf("serve: %v", err)
	case <-time.After(15 * time.Second):
		t.Fatal("serve did not start")
	}
	return ""
}

func TestOWASPAPI4TheRealServerCutsOffSlowAndOversizedHeaders(t *testing.T) {
	t.Parallel()
	addr := secServe(t, nil)

	t.Run("a client dripping its headers is cut off after the 5 s header timeout", func(t *testing.T) {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		start := time.Now()
		if _, err := io.WriteString(conn, "GET /healthz HTTP/1.1\r\nHost: pixgate\r\n"); err != nil {
			t.Fatal(err)
		}
		closed := make(chan time.Duration, 1)
		go func() {
			_ = conn.SetReadDeadline(time.Now().Add(15 * time.Second))
			_, _ = io.Copy(io.Discard, conn) // ends when the server closes the connection
			closed <- time.Since(start)
		}()
		tick := time.NewTicker(250 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case elapsed := <-closed:
				if elapsed < 4*time.Second || elapsed > 8*time.Second {
					t.Fatalf("the connection closed after %v, want about 5 s", elapsed)
				}
				return
			case <-tick.C:
				_, _ = io.WriteString(conn, "X-Slow: a\r\n") // never the blank line that ends the headers
			}
		}
	})
	t.Run("headers over 64 KiB answer 431", func(t *testing.T) {
		req, _ := http.NewRequest("GET", "http://"+addr+"/healthz", nil)
		req.Header.Set("X-Big", strings.Repeat("a", 100<<10))
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
			t.Fatalf("status %d", res.StatusCode)
		}
	})
	t.Run("a request with a huge URL is refused before routing", func(t *testing.T) {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		fmt.Fprintf(conn, "GET /transaction?%s HTTP/1.1\r\nHost: pixgate\r\n\r\n", strings.Repeat("a", 200<<10))
		res, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
			t.Fatalf("status %d", res.StatusCode)
		}
	})
}

// ---------------------------------------------------------------------------------------------
// API5:2023 Broken Function Level Authorization

// secScopedRoutes is every route that needs a bearer token, with the scope it needs ("" for
// any valid token of the account).
var secScopedRoutes = []struct {
	method, template string
	scope            domain.Scope
}{
	{"POST", "/transaction", domain.ScopeTransactionWrite},
	{"GET", "/transaction", domain.ScopeTransactionRead},
	{"GET", "/transaction/{id}", domain.ScopeTransactionRead},
	{"POST", "/transaction/{id}/refund", domain.ScopeTransactionWrite},
	{"GET", "/transaction/{id}/events", domain.ScopeTransactionRead},
	{"POST", "/withdrawal", domain.ScopeWithdrawalWrite},
	{"GET", "/withdrawal/{id}", domain.ScopeWithdrawalRead},
	{"POST", "/withdrawal/{id}/cancel", domain.ScopeWithdrawalWrite},
	{"GET", "/withdrawal/{id}/events", domain.ScopeWithdrawalRead},
	{"GET", "/balance", domain.ScopeBalanceRead},
	{"GET", "/balance/entries", domain.ScopeBalanceRead},
	{"POST", "/sandbox/transaction/{id}/pay", domain.ScopeTransactionWrite},
	{"POST", "/sandbox/transaction/{id}/med/open", domain.ScopeTransactionWrite},
	{"POST", "/sandbox/transaction/{id}/med/accept", domain.ScopeTransactionWrite},
	{"POST", "/sandbox/transaction/{id}/med/reject", domain.ScopeTransactionWrite},
	{"POST", "/sandbox/transaction/{id}/refund/fail", domain.ScopeTransactionWrite},
	{"POST", "/sandbox/withdrawal/{id}/fail", domain.ScopeWithdrawalWrite},
	{"POST", "/sandbox/withdrawal/{id}/reject", domain.ScopeWithdrawalWrite},
	{"POST", "/sandbox/withdrawal/{id}/refund", domain.ScopeWithdrawalWrite},
	{"POST", "/auth/credentials", domain.ScopeAccountAdmin},
	{"GET", "/auth/credentials", domain.ScopeAccountAdmin},
	{"DELETE", "/auth/credentials/{clientId}", domain.ScopeAccountAdmin},
	{"GET", "/webhook/secret", domain.ScopeAccountAdmin},
	{"POST", "/webhook/secret/rotate", domain.ScopeAccountAdmin},
}

// secPublicRoutes need no token: the token endpoints and their metadata, the acquirer's (its own
// shared secret), the operational routes and the payment page's.
var secPublicRoutes = []string{
	"POST /auth/token", "GET /auth/token", "POST /oauth/token", "GET /.well-known/oauth-authorization-server",
	"POST /acquirer/pix", "GET /.well-known/jwks.json",
	"GET /healthz", "GET /readyz", "GET /metrics", "GET /openapi.json",
	// The hosted payment page: its address is the capability.
	"GET /pay/{token}", "GET /pay/{token}/status", "GET /pay/{token}/events",
}

func TestOWASPAPI5EveryRouteDemandsItsScope(t *testing.T) {
	e := secEnv(t, map[string]string{"PIXGATE_ACQUIRER_SECRET": acqSecret})
	a := e.secAccount()

	t.Run("every route of the router is in the scope table or public", func(t *testing.T) {
		for _, r := range e.secRoutes() {
			known := slices.Contains(secPublicRoutes, r)
			for _, s := range secScopedRoutes {
				known = known || s.method+" "+s.template == r
			}
			if !known {
				t.Errorf("route %s is neither in the scope table nor public", r)
			}
		}
	})
	for _, rt := range secScopedRoutes {
		path := strings.NewReplacer("{id}", secUnknownID, "{clientId}", secUnknownID).Replace(rt.template)
		t.Run(rt.method+" "+rt.template, func(t *testing.T) {
			r := e.do(rt.method, path, "", nil)
			problemOf(t, r, http.StatusUnauthorized, "unauthorized")
			if r.header.Get("WWW-Authenticate") != "Bearer" {
				t.Errorf("WWW-Authenticate = %q", r.header.Get("WWW-Authenticate"))
			}
			if rt.scope == "" {
				r := e.do(rt.method, path, e.secToken(a), nil)
				if r.status == http.StatusUnauthorized || r.status == http.StatusForbidden {
					t.Fatalf("a token without scopes: %d %s", r.status, r.body)
				}
				return
			}
			var others []domain.Scope
			for _, s := range domain.AllScopes() {
				if s != rt.scope {
					others = append(others, s)
				}
			}
			r = e.do(rt.method, path, e.secToken(a, others...), nil)
			problemOf(t, r, http.StatusForbidden, "insufficient_scope")
			if !strings.Contains(r.header.Get("WWW-Authenticate"), `error="insufficient_scope"`) {
				t.Errorf("WWW-Authenticate = %q", r.header.Get("WWW-Authenticate"))
			}
			if r := e.do(rt.method, path, e.secToken(a, rt.scope), nil); r.status == http.StatusUnauthorized || r.status == http.StatusForbidden {
				t.Fatalf("with exactly %s: %d %s", rt.scope, r.status, r.body)
			}
		})
	}
	t.Run("a token never carries more than its account holds", func(t *testing.T) {
		created, err := application.NewCreateAccount(e.app.stores.accounts, e.app.ids, e.app.clock, e.app.hasher).
			Execute(context.Background(), "Somente Leitura", []domain.Scope{domain.ScopeTransactionRead})
		if err != nil {
			t.Fatal(err)
		}
		// A token claiming every scope (as a compromised issuer or an old token might).
		tok := e.secToken(created, domain.AllScopes()...)
		problemOf(t, e.do("POST", "/transaction", tok, minimalTransaction()), http.StatusForbidden, "insufficient_scope")
		granted := e.secTokenFromEndpoint(created.Credential.ClientID, created.Credential.Secret).json(t)
		if granted["scope"] != "transaction:read" {
			t.Fatalf("the token endpoint granted %v", granted["scope"])
		}
	})
}

func TestOWASPAPI5SandboxAndAcquirerRoutesExistOnlyWhenConfigured(t *testing.T) {
	prod := secEnv(t, map[string]string{"PIXGATE_SANDBOX": "false"})
	_, tok := prod.account()
	id := prod.secCreate(tok, 1_000)
	notFound := prod.do("GET", "/no/such/route", tok, nil)
	problemOf(t, notFound, http.StatusNotFound, "not_found")
	for _, path := range []string{
		"/sandbox/transaction/" + id + "/pay", "/sandbox/transaction/" + id + "/med/open",
		"/sandbox/transaction/" + id + "/med/accept", "/sandbox/transaction/" + id + "/med/reject",
		"/sandbox/transaction/" + id + "/refund/fail", "/sandbox/withdrawal/" + id + "/fail",
		"/sandbox/withdrawal/" + id + "/reject", "/sandbox/withdrawal/" + id + "/refund", "/acquirer/pix",
	} {
		t.Run("POST "+path+" does not exist in production without its setting", func(t *testing.T) {
			r := prod.do("POST", path, tok, nil, "Authorization", "Bearer "+acqSecret)
			problemOf(t, r, http.StatusNotFound, "not_found")
			if a, b := secStrip(t, r), secStrip(t, notFound); a != b {
				t.Fatalf("answers apart from an unknown route:\n%s\n%s", a, b)
			}
		})
	}
	for _, r := range prod.secRoutes() {
		if strings.HasPrefix(r, "POST /sandbox/") || r == "POST /acquirer/pix" {
			t.Errorf("route %s is registered in production", r)
		}
	}
	if got := prod.secWant(http.StatusOK, "GET", "/transaction/"+id, tok, nil).json(t)["status"]; got != "PIX_QRCODE_GENERATED" {
		t.Fatalf("status %v", got)
	}

	t.Run("the acquirer route refuses a merchant's token, and merchant routes the acquirer's secret", func(t *testing.T) {
		e := secEnv(t, map[string]string{"PIXGATE_SANDBOX": "false", "PIXGATE_ACQUIRER_SECRET": acqSecret})
		_, tok := e.account()
		id := e.secCreate(tok, 1_000)
		entry := map[string]any{"pix": []any{acqPix(acqTxID(t, id), acqE2E)}}
		problemOf(t, e.do("POST", "/acquirer/pix", tok, entry), http.StatusUnauthorized, "unauthorized")
		problemOf(t, e.do("GET", "/transaction/"+id, acqSecret, nil), http.StatusUnauthorized, "unauthorized")
		if got := e.secWant(http.StatusOK, "GET", "/transaction/"+id, tok, nil).json(t)["status"]; got != "PIX_QRCODE_GENERATED" {
			t.Fatalf("a refused callback moved the transaction to %v", got)
		}
	})
}

// ---------------------------------------------------------------------------------------------
// API6:2023 Unrestricted Access to Sensitive Business Flows

func TestOWASPAPI6ConcurrentWithdrawalsThroughTwoCredentialsNeverOverdraw(t *testing.T) {
	e := secEnv(t, map[string]string{"PIXGATE_FEE_BASIS_POINTS": "0", "PIXGATE_WITHDRAWAL_FEE_CENTS": "100"})
	_, first := e.account()
	c := e.secWant(http.StatusCreated, "POST", "/auth/credentials", first, nil).json(t)
	second := e.secTokenFromEndpoint(c["client_id"].(string), c["client_secret"].(string)).json(t)["access_token"].(string)
	e.secPaid(first, 10_000)
	const n = 40
	statuses := make([]int, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		tok := first
		if i%2 == 1 {
			tok = second
		}
		wg.Go(func() {
			<-start
			statuses[i] = e.do("POST", "/withdrawal", tok, map[string]any{"amount": 2_400,
				"pixKey": map[string]any{"key": "maria@example.com", "type": "EMAIL"}}).status
		})
	}
	close(start)
	wg.Wait()
	created := 0
	for i, s := range statuses {
		switch s {
		case http.StatusCreated:
			created++
		case http.StatusUnprocessableEntity:
		default:
			t.Fatalf("withdrawal %d: status %d", i, s)
		}
	}
	if created != 4 { // 4 × (2400 + 100) = 10 000
		t.Fatalf("%d withdrawals went through, want exactly 4", created)
	}
	if got := e.secWant(http.StatusOK, "GET", "/balance", first, nil).json(t)["available"]; got != float64(0) {
		t.Fatalf("available = %v, want 0", got)
	}
}

func TestOWASPAPI6ReplaysWithOneIdempotencyKeyCreateOneResource(t *testing.T) {
	e := secEnv(t, map[string]string{"PIXGATE_FEE_BASIS_POINTS": "0"})
	_, tok := e.account()
	_, other := e.account()
	e.secPaid(tok, 100_000)
	const n = 30
	race := func(path string, body map[string]any) [][]byte {
		bodies := make([][]byte, n)
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := range n {
			wg.Go(func() {
				<-start
				r := e.do("POST", path, tok, body, "Idempotency-Key", "replayed-key-0001")
				if r.status != http.StatusCreated {
					t.Errorf("replay %d: %d %s", i, r.status, r.body)
				}
				bodies[i] = r.body
			})
		}
		close(start)
		wg.Wait()
		for i := range bodies {
			if !bytes.Equal(bodies[i], bodies[0]) {
				t.Fatalf("replay %d answered another body:\n%s\n%s", i, bodies[i], bodies[0])
			}
		}
		return bodies
	}
	t.Run("POST /transaction", func(t *testing.T) {
		body := minimalTransaction()
		body["externalCode"] = "replayed-order-1"
		race("/transaction", body)
		list := e.secWant(http.StatusOK, "GET", "/transaction?externalCode=replayed-order-1", tok, nil).json(t)
		if list["total"] != float64(1) {
			t.Fatalf("%v transactions for one key", list["total"])
		}
		body["amount"] = 999
		problemOf(t, e.do("POST", "/transaction", tok, body, "Idempotency-Key", "replayed-key-0001"), http.StatusUnprocessableEntity, "idempotency_key_reused")
		// Keys belong to one account: another account's key is its own.
		body["amount"] = 1000
		if r := e.do("POST", "/transaction", other, body, "Idempotency-Key", "replayed-key-0001"); r.status != http.StatusCreated || r.header.Get("Idempotent-Replayed") != "" {
			t.Fatalf("another account's first use of the key: %d %v", r.status, r.header)
		}
	})
	t.Run("POST /withdrawal", func(t *testing.T) {
		before := e.secWant(http.StatusOK, "GET", "/balance", tok, nil).json(t)["available"].(float64)
		race("/withdrawal", map[string]any{"amount": 1_000, "pixKey": map[string]any{"key": "maria@example.com", "type": "EMAIL"}})
		after := e.secWant(http.StatusOK, "GET", "/balance", tok, nil).json(t)["available"].(float64)
		if before-after != 1_000 {
			t.Fatalf("the balance went from %v to %v: %v withdrawn for one key", before, after, before-after)
		}
		problemOf(t, e.do("POST", "/withdrawal", tok, map[string]any{"amount": 2_000, "pixKey": map[string]any{"key": "maria@example.com", "type": "EMAIL"}},
			"Idempotency-Key", "replayed-key-0001"), http.StatusUnprocessableEntity, "idempotency_key_reused")
	})
}

func TestOWASPAPI6ConcurrentStepsOfOnePaymentHappenOnce(t *testing.T) {
	e := secEnv(t, nil)
	_, tok := e.account()
	race := func(path string) (ok int) {
		const n = 20
		statuses := make([]int, n)
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := range n {
			wg.Go(func() {
				<-start
				statuses[i] = e.do("POST", path, tok, nil).status
			})
		}
		close(start)
		wg.Wait()
		for i, s := range statuses {
			switch {
			case s >= 200 && s < 300:
				ok++
			case s != http.StatusConflict:
				t.Fatalf("request %d: status %d", i, s)
			}
		}
		return ok
	}
	e.secPaid(tok, 100_000) // a refund needs the available balance to cover it; fees took some of this payment's
	id := e.secCreate(tok, 1_000)
	if n := race("/sandbox/transaction/" + id + "/pay"); n != 1 {
		t.Fatalf("%d payments went through, want 1", n)
	}
	if n := race("/transaction/" + id + "/refund"); n != 1 {
		t.Fatalf("%d refunds went through, want 1", n)
	}
	got := e.secWant(http.StatusOK, "GET", "/transaction/"+id, tok, nil).json(t)
	var statuses []string
	for _, h := range got["statusHistory"].([]any) {
		statuses = append(statuses, h.(map[string]any)["status"].(string))
	}
	if want := []string{"PENDING", "PIX_QRCODE_GENERATED", "PAID", "PROCESSING_REFUND"}; !slices.Equal(statuses, want) {
		t.Fatalf("history %v, want %v", statuses, want)
	}
}

// ---------------------------------------------------------------------------------------------
// API7:2023 Server Side Request Forgery

func TestOWASPAPI7WebhookURLsOfLocalHostsAndIPLiteralsAreRefusedAtValidation(t *testing.T) {
	e := secEnv(t, nil)
	_, tok := e.account()
	e.secPaid(tok, 100_000)
	for _, u := range []string{
		"https://localhost/hook", "https://localhost:8443/hook", "https://127.0.0.1/hook", "https://[::1]/hook",
		"https://10.0.0.1/hook", "https://169.254.169.254/latest/meta-data/", "https://[fd00::1]/hook",
		"https://[::ffff:127.0.0.1]/hook", "https://0x7f000001/hook", "https://2130706433/hook", "https://0177.0.0.1/hook",
		"https://127.1/hook", "https://metadata/computeMetadata/v1/", "https://internal-service/hook",
		"http://merchant.example.com/hook", "file:///etc/passwd", "gopher://merchant.example.com/", "https:///hook",
		"https://user:pass@merchant.example.com/hook", "https://merchant.example.com/hook#x", "//merchant.example.com/hook",
		"https://merchant.example.123/hook", "https://merchant.example.com:0/hook", "https://merchant.example.com:99999/hook",
		" https://merchant.example.com/hook", "https://merchant.example.com\\@127.0.0.1/hook",
	} {
		t.Run(u, func(t *testing.T) {
			body := minimalTransaction()
			body["webhookUrl"] = u
			fields := problemOf(t, e.do("POST", "/transaction", tok, body), http.StatusUnprocessableEntity, "validation_failed")
			if len(fields) != 1 || !strings.HasPrefix(fields[0], "webhookUrl ") {
				t.Fatalf("errors %v", fields)
			}
			fields = problemOf(t, e.do("POST", "/withdrawal", tok, map[string]any{"amount": 1, "webhookUrl": u,
				"pixKey": map[string]any{"key": "maria@example.com", "type": "EMAIL"}}), http.StatusUnprocessableEntity, "validation_failed")
			if len(fields) != 1 || !strings.HasPrefix(fields[0], "webhookUrl ") {
				t.Fatalf("withdrawal errors %v", fields)
			}
		})
	}
}

func TestOWASPAPI7AWebhookHostResolvingToAPrivateAddressIsNeverContacted(t *testing.T) {
	rc := newReceiver(t)
	for _, c := range []struct {
		name  string
		addrs []string
		dial  bool // use a dialer that records every connection instead of the real one
	}{
		{"loopback, where the receiver listens", []string{"127.0.0.1"}, false},
		{"the cloud metadata address", []string{"169.254.169.254"}, true},
		{"private and unique-local addresses", []string{"10.1.2.3", "192.168.0.10", "fd12::1", "100.64.0.1"}, true},
		{"an IPv4-mapped loopback", []string{"::ffff:127.0.0.1"}, true},
		{"NAT64 of a private address", []string{"64:ff9b::a00:1"}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			res := &fakeResolver{}
			for _, a := range c.addrs {
				res.addrs = append(res.addrs, netip.MustParseAddr(a))
			}
			var mu sync.Mutex
			var dialed []string
			opts := webhook.Options{Resolver: res, Timeout: 2 * time.Second}
			if c.dial {
				opts.Dial = func(_ context.Context, _, address string) (net.Conn, error) {
					mu.Lock()
					defer mu.Unlock()
					dialed = append(dialed, address)
					return nil, fmt.Errorf("test dialer: no connection to %s", address)
				}
			}
			e := secEnv(t, map[string]string{"PIXGATE_WEBHOOK_ALLOW_PRIVATE": "false", "PIXGATE_WEBHOOK_CA_FILE": rc.caFile},
				func(a *app) { a.webhookOptions = opts })
			_, tok := e.account()
			body := minimalTransaction()
			body["webhookUrl"] = rc.url("/hooks/pix")
			id := e.secWant(http.StatusCreated, "POST", "/transaction", tok, body).json(t)["id"].(string)
			if n, err := e.app.dispatcher.DeliverDue(context.Background()); n != 1 || err != nil {
				t.Fatalf("DeliverDue = %d, %v; want one attempt made", n, err)
			}
			if got := rc.deliveries(); len(got) != 0 {
				t.Fatalf("the receiver got %d deliveries", len(got))
			}
			if res.asked == 0 {
				t.Fatal("the sender never resolved the host itself")
			}
			if len(dialed) != 0 {
				t.Fatalf("the sender connected to %v", dialed)
			}
			events := e.secWant(http.StatusOK, "GET", "/transaction/"+id+"/events", tok, nil).json(t)["data"].([]any)
			if len(events) != 1 {
				t.Fatalf("%d events", len(events))
			}
			ev := events[0].(map[string]any)
			attempts := ev["attempts"].([]any)
			if len(attempts) != 1 || ev["status"] != "pending" {
				t.Fatalf("event %v, want one failed attempt and a retry pending", ev)
			}
			msg, _ := attempts[0].(map[string]any)["error"].(string)
			if !strings.Contains(msg, "refused") || attempts[0].(map[string]any)["statusCode"] != nil {
				t.Fatalf("attempt %v, want an error saying the address was refused", attempts[0])
			}
			// What the host resolved to, and what kind of address it is, stay ours.
			for _, a := range c.addrs {
				ip := netip.MustParseAddr(a)
				for _, form := range []string{a, ip.Unmap().String(), "private", "loopback", "link-local", "NAT64"} {
					if strings.Contains(msg, form) {
						t.Fatalf("the attempt's error %q reveals %q", msg, form)
					}
				}
			}
		})
	}
}

// ---------------------------------------------------------------------------------------------
// API8:2023 Security Misconfiguration

func TestOWASPAPI8EveryAnswerCarriesTheSecurityHeaders(t *testing.T) {
	e := secEnv(t, map[string]string{"PIXGATE_ACQUIRER_SECRET": acqSecret})
	a := e.secAccount()
	tok := e.secToken(a, domain.AllScopes()...)
	id := e.secCreate(tok, 1_000)
	form := url.Values{"client_id": {a.Credential.ClientID}, "client_secret": {a.Credential.Secret}}.Encode()
	formCT := []string{"Content-Type", "application/x-www-form-urlencoded"}
	answers := []struct {
		name    string
		r       response
		noStore bool
	}{
		{"token 200", e.do("POST", "/auth/token", "", form, formCT...), true},
		{"token 401", e.do("POST", "/auth/token", "", "client_id=x&client_secret=y", formCT...), true},
		{"token 400", e.do("GET", "/auth/token?client_secret=x", "", nil), true},
		{"credential 201", e.do("POST", "/auth/credentials", tok, nil), true},
		{"webhook secret 200", e.do("GET", "/webhook/secret", tok, nil), true},
		{"transaction 201", e.do("POST", "/transaction", tok, minimalTransaction()), true},
		{"transaction 200", e.do("GET", "/transaction/"+id, tok, nil), true},
		{"list 200", e.do("GET", "/transaction", tok, nil), true},
		{"balance 200", e.do("GET", "/balance", tok, nil), true},
		{"problem 401", e.do("GET", "/transaction", "", nil), true},
		{"problem 404", e.do("GET", "/nowhere", "", nil), true},
		{"problem 405", e.do("PUT", "/transaction", tok, nil), true},
		{"problem 422", e.do("POST", "/transaction", tok, `{`), true},
		{"acquirer 200", e.do("POST", "/acquirer/pix", "", `{"pix": []}`, "Authorization", "Bearer "+acqSecret), true},
		{"healthz 200", e.do("GET", "/healthz", "", nil), false},
		{"jwks 200", e.do("GET", "/.well-known/jwks.json", "", nil), false},
	}
	for _, c := range answers {
		t.Run(c.name, func(t *testing.T) {
			h := c.r.header
			if h.Get("X-Content-Type-Options") != "nosniff" {
				t.Errorf("X-Content-Type-Options = %q", h.Get("X-Content-Type-Options"))
			}
			if h.Get("Server") != "" || h.Get("X-Powered-By") != "" {
				t.Errorf("the answer names its software: %q %q", h.Get("Server"), h.Get("X-Powered-By"))
			}
			if ct := h.Get("Content-Type"); c.r.status != http.StatusNoContent && !strings.HasPrefix(ct, "application/") {
				t.Errorf("Content-Type = %q", ct)
			}
			if c.noStore && !strings.Contains(h.Get("Cache-Control"), "no-store") {
				t.Errorf("an answer with account data or a secret may be cached: Cache-Control %q", h.Get("Cache-Control"))
			}
		})
	}
}

func TestOWASPAPI8UnknownRoutesAndMethodsAnswerProblems(t *testing.T) {
	e := secEnv(t, nil)
	_, tok := e.account()
	for _, c := range []struct {
		method, path string
		status       int
		code         string
	}{
		{"GET", "/nowhere", http.StatusNotFound, "not_found"},
		{"GET", "/transaction/", http.StatusNotFound, "not_found"},
		{"GET", "/v1/transaction", http.StatusNotFound, "not_found"},
		{"TRACE", "/transaction", http.StatusMethodNotAllowed, "method_not_allowed"},
		{"OPTIONS", "/transaction", http.StatusMethodNotAllowed, "method_not_allowed"},
		{"PUT", "/transaction/" + secUnknownID, http.StatusMethodNotAllowed, "method_not_allowed"},
		{"DELETE", "/transaction/" + secUnknownID, http.StatusMethodNotAllowed, "method_not_allowed"},
		{"PATCH", "/withdrawal/" + secUnknownID, http.StatusMethodNotAllowed, "method_not_allowed"},
		// gorilla/mux v1.8.1 answers 404 rather than 405 when a route registered later accepts
		// the method (here POST): either is a problem, and no handler runs.
		{"POST", "/balance", 0, ""},
		{"POST", "/withdrawal/" + secUnknownID, 0, ""},
	} {
		t.Run(c.method+" "+c.path, func(t *testing.T) {
			r := e.do(c.method, c.path, tok, nil)
			if c.status == 0 {
				if r.status == http.StatusNotFound {
					c.status, c.code = http.StatusNotFound, "not_found"
				} else {
					c.status, c.code = http.StatusMethodNotAllowed, "method_not_allowed"
				}
			}
			problemOf(t, r, c.status, c.code)
			if bytes.Contains(r.body, []byte(tok)) {
				t.Fatal("the answer echoes the token")
			}
		})
	}
}

func TestOWASPAPI8ErrorAnswersShowNoInternals(t *testing.T) {
	e := secEnv(t, map[string]string{"PIXGATE_ACQUIRER_SECRET": acqSecret})
	_, tok := e.account()
	for _, c := range []struct{ name, method, path, auth, body string }{
		{"broken JSON", "POST", "/transaction", "Bearer " + tok, `{"amount": 10,`},
		{"a JSON array", "POST", "/transaction", "Bearer " + tok, `[1, 2]`},
		{"a number too large for any type", "POST", "/transaction", "Bearer " + tok, `{"amount": 1` + strings.Repeat("0", 400) + `}`},
		{"invalid UTF-8", "POST", "/transaction", "Bearer " + tok, "{\"externalCode\": \"\xff\xfe\xfd\xfc\xfb\xfa\xf9\xf8\"}"},
		{"wrong types everywhere", "POST", "/transaction", "Bearer " + tok, `{"amount": "1", "pix": 1, "items": {}, "customer": []}`},
		{"a malformed id", "GET", "/transaction/%00%ff", "Bearer " + tok, ""},
		{"a malformed token", "GET", "/transaction", "Bearer a.b.c", ""},
		{"a callback of the wrong shape", "POST", "/acquirer/pix", "Bearer " + acqSecret, `{"pix": {"valor": 10, "horario": []}}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := e.do(c.method, c.path, "", c.body, "Authorization", c.auth)
			if r.status < 400 || r.status >= 500 {
				t.Fatalf("status %d: %s", r.status, r.body)
			}
			for _, internal := range []string{"json:", "invalid character", "unexpected end", "reflect", "goroutine", ".go:",
				"runtime", "int64", "[]interface", "map[string]", "panic", "strconv", "ozzo", "jwt", "token is malformed", "crypto/"} {
				if bytes.Contains(r.body, []byte(internal)) {
					t.Errorf("the answer shows %q: %s", internal, r.body)
				}
			}
		})
	}
}

// ---------------------------------------------------------------------------------------------
// API10:2023 Unsafe Consumption of APIs

func TestOWASPAPI10GarbageFromTheAcquirerAnswers4xxAndAppliesNothing(t *testing.T) {
	e := secEnv(t, map[string]string{"PIXGATE_ACQUIRER_SECRET": acqSecret})
	_, tok := e.account()
	id := e.secCreate(tok, 1_000)
	txid := acqTxID(t, id)
	before := e.secWant(http.StatusOK, "GET", "/transaction/"+id, tok, nil).body
	with := func(changes map[string]any) string {
		p := acqPix(txid, acqE2E)
		for k, v := range changes {
			if v == nil {
				delete(p, k)
			} else {
				p[k] = v
			}
		}
		return mustJSON(t, map[string]any{"pix": []any{p}})
	}
	many := make([]any, 1001)
	for i := range many {
		many[i] = acqPix(txid, acqE2E)
	}
	cases := []struct{ name, body string }{
		{"not JSON", `{"pix": [`},
		{"HTML", `<html><body>502 Bad Gateway</body></html>`},
		{"an empty body", ``},
		{"a JSON array", `[{"txid": "x"}]`},
		{"null", `null`},
		{"pix as a string", `{"pix": "all of them"}`},
		{"1001 entries", mustJSON(t, map[string]any{"pix": many})},
	}
	for _, c := range cases {
		t.Run(c.name+" answers 4xx", func(t *testing.T) {
			r := e.do("POST", "/acquirer/pix", "", c.body, "Authorization", "Bearer "+acqSecret)
			if r.status < 400 || r.status >= 500 {
				t.Fatalf("status %d: %.300s", r.status, r.body)
			}
			if r.header.Get("Content-Type") != "application/problem+json" {
				t.Fatalf("Content-Type %q", r.header.Get("Content-Type"))
			}
		})
	}
	// Garbage inside an entry spoils that entry only: it is answered invalid, and applies
	// nothing.
	entries := []struct{ name, body string }{
		{"pix entries of the wrong type", `{"pix": [1, "a", true, []]}`},
		{"valor with 3 decimals", with(map[string]any{"valor": "10.000"})},
		{"valor negative", with(map[string]any{"valor": "-10.00"})},
		{"valor zero", with(map[string]any{"valor": "0.00"})},
		{"valor not a number", with(map[string]any{"valor": "dez reais"})},
		{"valor NaN", with(map[string]any{"valor": "NaN"})},
		{"valor Infinity", with(map[string]any{"valor": "Infinity"})},
		{"valor in exponent form", with(map[string]any{"valor": "1e3"})},
		{"valor beyond int64", with(map[string]any{"valor": "92233720368547758.08"})},
		{"valor as a JSON number", with(map[string]any{"valor": 10.00})},
		{"valor with spaces", with(map[string]any{"valor": " 10.00 "})},
		{"valor with a plus sign", with(map[string]any{"valor": "+10.00"})},
		{"horario not a time", with(map[string]any{"horario": "yesterday"})},
		{"horario as a number", with(map[string]any{"horario": 1732284000})},
		{"an endToEndId with a control character", with(map[string]any{"endToEndId": "E0036030520261122141\x00aBcDeFgHiJk"})},
		{"an endToEndId of 10 KiB", with(map[string]any{"endToEndId": strings.Repeat("E", 10<<10)})},
		{"a txid with a path", with(map[string]any{"txid": "../../transaction/" + id})},
		{"devolucoes as an object", with(map[string]any{"devolucoes": map[string]any{}})},
		{"a refund with a negative valor", with(map[string]any{"devolucoes": []any{secWithDevolucao(map[string]any{"valor": "-1.00"})}})},
	}
	for _, c := range entries {
		t.Run(c.name+" is invalid", func(t *testing.T) {
			res := acqResults(t, e.do("POST", "/acquirer/pix", "", c.body, "Authorization", "Bearer "+acqSecret))
			for _, r := range res {
				if r.Outcome != "invalid" || r.Detail == "" || len(r.EndToEndID) > 32 {
					t.Fatalf("result %.300v, want invalid", r)
				}
			}
		})
	}
	if after := e.secWant(http.StatusOK, "GET", "/transaction/"+id, tok, nil).body; !bytes.Equal(before, after) {
		t.Fatalf("garbage moved the transaction:\n%s\n%s", before, after)
	}
	t.Run("control: the well-formed callback pays it", func(t *testing.T) {
		if res := acqResults(t, e.acqNotify(map[string]any{"pix": []any{acqPix(txid, acqE2E)}})); len(res) != 1 || res[0].Outcome != "applied" {
			t.Fatalf("%+v", res)
		}
	})
}

func secWithDevolucao(changes map[string]any) map[string]any {
	d := acqDevolucao("DEVOLVIDO")
	for k, v := range changes {
		d[k] = v
	}
	return d
}

func TestOWASPAPI10GarbageFromTheUpstreamTokenProviderAnswers502(t *testing.T) {
	var mu sync.Mutex
	answer := func(w http.ResponseWriter) {}
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		a := answer
		mu.Unlock()
		a(w)
	}))
	t.Cleanup(upstream.Close)
	e := secEnv(t, map[string]string{
		"PIXGATE_AUTH_UPSTREAM_TOKEN_URL": upstream.URL + "/token", "PIXGATE_AUTH_UPSTREAM_JWKS_URL": upstream.URL + "/jwks",
		"PIXGATE_AUTH_UPSTREAM_ISSUER": "https://upstream.example", "PIXGATE_AUTH_UPSTREAM_AUDIENCE": "pixgate",
		"PIXGATE_AUTH_UPSTREAM_TIMEOUT": "1s",
	})
	a := e.secAccount()
	jsonAnswer := func(status int, body string) func(http.ResponseWriter) {
		return func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(status)
			io.WriteString(w, body)
		}
	}
	for _, c := range []struct {
		name   string
		answer func(http.ResponseWriter)
	}{
		{"an HTML error page", func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "text/html")
			io.WriteString(w, "<html>oops</html>")
		}},
		{"a 500", jsonAnswer(500, `{"error": "server_error"}`)},
		{"JSON without access_token", jsonAnswer(200, `{"token_type": "Bearer", "expires_in": 300}`)},
		{"an access_token that is a number", jsonAnswer(200, `{"access_token": 12, "token_type": "Bearer", "expires_in": 300}`)},
		{"a token type other than Bearer", jsonAnswer(200, `{"access_token": "x", "token_type": "MAC", "expires_in": 300}`)},
		{"a negative lifetime", jsonAnswer(200, `{"access_token": "x", "token_type": "Bearer", "expires_in": -1}`)},
		{"truncated JSON", jsonAnswer(200, `{"access_token": "x", "token_`)},
		{"a body of 2 MiB", jsonAnswer(200, `{"access_token": "`+strings.Repeat("a", 2<<20)+`", "token_type": "Bearer", "expires_in": 300}`)},
		{"a redirect to elsewhere", func(w http.ResponseWriter) {
			w.Header().Set("Location", "https://evil.example/token")
			w.WriteHeader(http.StatusTemporaryRedirect)
		}},
		{"no answer in time", func(w http.ResponseWriter) { time.Sleep(1500 * time.Millisecond) }},
	} {
		t.Run(c.name+" answers 502", func(t *testing.T) {
			mu.Lock()
			answer = c.answer
			mu.Unlock()
			r := e.secTokenFromEndpoint(a.Credential.ClientID, a.Credential.Secret)
			if r.status != http.StatusBadGateway || r.json(t)["error"] != "temporarily_unavailable" {
				t.Fatalf("%d %.300s", r.status, r.body)
			}
			if bytes.Contains(r.body, []byte("oops")) || bytes.Contains(r.body, []byte("evil")) {
				t.Fatalf("the upstream's answer leaks through: %s", r.body)
			}
		})
	}
}

// ---------------------------------------------------------------------------------------------
// Beyond the Top 10: webhook signature forgery and replay, seen from the receiver that verifies
// with the official Standard Webhooks library.

func TestWebhookForgeryAndReplayFailTheReceiversVerification(t *testing.T) {
	rc := newReceiver(t)
	e := newWebhookEnv(t, rc)
	accountID, tok := e.account()
	otherID, _ := e.account()
	body := minimalTransaction()
	body["webhookUrl"] = rc.url("/hooks/pix")
	e.secWant(http.StatusCreated, "POST", "/transaction", tok, body)
	if n, err := e.app.dispatcher.DeliverDue(context.Background()); n != 1 || err != nil {
		t.Fatalf("DeliverDue = %d, %v", n, err)
	}
	got := rc.deliveries()
	if len(got) != 1 {
		t.Fatalf("%d deliveries", len(got))
	}
	d := got[0]
	secretOf := func(id string) string {
		a, err := e.app.stores.accounts.GetAccount(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		return a.Webhook().Current
	}
	verifier, err := standardwebhooks.NewWebhook(secretOf(accountID))
	if err != nil {
		t.Fatal(err)
	}
	if err := verifier.Verify(d.body, d.header); err != nil {
		t.Fatalf("control: the genuine delivery does not verify: %v", err)
	}
	msgID := d.header.Get("webhook-id")
	sent, err := time.Parse(time.RFC3339, time.Now().UTC().Format(time.RFC3339))
	if err != nil {
		t.Fatal(err)
	}
	resign := func(secret string, at time.Time, payload []byte) http.Header {
		wh, err := standardwebhooks.NewWebhook(secret)
		if err != nil {
			t.Fatal(err)
		}
		sig, err := wh.Sign(msgID, at, payload)
		if err != nil {
			t.Fatal(err)
		}
		h := d.header.Clone()
		h.Set("webhook-timestamp", fmt.Sprint(at.Unix()))
		h.Set("webhook-signature", sig)
		return h
	}
	tampered := bytes.Replace(d.body, []byte(`"amount":1000`), []byte(`"amount":100000`), 1)
	if bytes.Equal(tampered, d.body) {
		t.Fatalf("the body has no amount to tamper with: %s", d.body)
	}
	laterStamp := d.header.Clone()
	laterStamp.Set("webhook-timestamp", fmt.Sprint(sent.Add(time.Minute).Unix()))
	otherID2 := d.header.Clone()
	otherID2.Set("webhook-id", "msg_forged")
	for _, c := range []struct {
		name    string
		payload []byte
		header  http.Header
	}{
		{"a body changed in transit", tampered, d.header},
		{"a fresh timestamp on a captured delivery", d.body, laterStamp},
		{"another webhook-id on a captured delivery", d.body, otherID2},
		{"a delivery signed with another account's secret", d.body, resign(secretOf(otherID), sent, d.body)},
		{"a delivery signed by whoever guesses the format", tampered, resign("whsec_"+base64.StdEncoding.EncodeToString([]byte("guessed-secret-0123456789abcdef")), sent, tampered)},
		{"a genuine delivery replayed ten minutes later", d.body, resign(secretOf(accountID), sent.Add(-10*time.Minute), d.body)},
	} {
		t.Run(c.name+" fails verification", func(t *testing.T) {
			if err := verifier.Verify(c.payload, c.header); err == nil {
				t.Fatal("the receiver's verification accepts it")
			}
		})
	}
}
