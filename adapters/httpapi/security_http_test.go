package httpapi_test

import (
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
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pixgate/pixgate/adapters/jwtauth"
	"github.com/pixgate/pixgate/application"
	"github.com/pixgate/pixgate/domain"
)

// The OWASP API Security Top 10 (2023), items 1 to 4, at the HTTP boundary: the API assembled
// as `serve` assembles it (harness_test.go), real JSON, real JWTs. Each test is named after the
// item it proves (TestOWASPAPI1..., TestOWASPAPI4...) so that docs/SECURITY.md can cite it;
// items 5 to 10 are in security_flows_http_test.go. Helpers start with "sec"
// (security_helpers_test.go). The API's tokens are signed with the harness's signingKey, so
// that the tests can forge tokens with the very key the server trusts; secOtherKey is a key
// the server does not know.

var secOtherKey = sync.OnceValues(jwtauth.GenerateKey)

// secAPI is newAPI with refunds and withdrawals settling as soon as the jobs run.
func secAPI(t *testing.T, s ...apiSettings) *api {
	t.Helper()
	var set apiSettings
	if len(s) > 0 {
		set = s[0]
	}
	set.SettleNow = true
	return newAPI(t, set)
}

// secKeys are the harness's signing key and a key the server does not know.
func secKeys(t *testing.T) (server, other *rsa.PrivateKey) {
	t.Helper()
	server, err := signingKey()
	must(t, err)
	other, err = secOtherKey()
	must(t, err)
	return server, other
}

// secRoutes lists the routes of the API's router as "METHOD /template".
func (a *api) secRoutes() []string {
	var out []string
	for _, route := range a.server.Routes() {
		for _, m := range route.Methods {
			out = append(out, m+" "+route.Path)
		}
	}
	slices.Sort(out)
	return out
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
// API1:2023 Broken Object Level Authorization

// TestOWASPAPI1AnotherAccountsIDAnswersExactlyLikeAnUnknownIDOnEveryRoute tries every route that
// names one object of an account, each with the owner's object in a status where the owner's
// own request would be allowed, with a stranger's token of every scope.
func TestOWASPAPI1AnotherAccountsIDAnswersExactlyLikeAnUnknownIDOnEveryRoute(t *testing.T) {
	t.Parallel()
	a := secAPI(t)
	_, owner := a.account()
	_, stranger := a.account()
	a.paidCharge(t, stranger, 1_000_000) // the stranger has money and every scope: nothing but ownership stops it

	txNew := a.charge(t, owner, 1_000)
	txPaid := a.paidCharge(t, owner, 1_000)
	txBlocked := a.paidCharge(t, owner, 1_000)
	a.want(t, http.StatusOK, "POST", "/sandbox/transaction/"+txBlocked+"/med/open", owner, nil)
	txRefunding := a.paidCharge(t, owner, 1_000)
	a.want(t, http.StatusAccepted, "POST", "/transaction/"+txRefunding+"/refund", owner, nil)
	a.paidCharge(t, owner, 1_000_000)
	wdProcessed := a.mustWithdraw(t, owner, 1_000)["id"].(string)
	a.payOut()
	wdProcessing := a.mustWithdraw(t, owner, 1_000)["id"].(string)
	cred := a.want(t, http.StatusCreated, "POST", "/auth/credentials", owner, nil).json(t)
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
		for _, r := range a.secRoutes() {
			// A payment page's {token} names no account's object: it is a capability, the
			// authority itself (adapters/httpapi/payment_page_test.go checks that tokens reveal
			// nothing).
			if strings.Contains(r, "{") && !strings.Contains(r, "{token}") && !slices.Contains(covered, r) {
				t.Errorf("route %s names an object but is not checked here", r)
			}
		}
	})

	snapshot := func(t *testing.T) map[string]string {
		s := map[string]string{"balance": a.secBalance(t, owner),
			"statement": string(a.want(t, http.StatusOK, "GET", "/balance/entries?limit=100", owner, nil).body)}
		for _, id := range []string{txNew, txPaid, txBlocked, txRefunding} {
			s[id] = string(a.want(t, http.StatusOK, "GET", "/transaction/"+id, owner, nil).body)
		}
		for _, id := range []string{wdProcessed, wdProcessing} {
			s[id] = string(a.want(t, http.StatusOK, "GET", "/withdrawal/"+id, owner, nil).body)
		}
		return s
	}
	before := snapshot(t)
	strangerBalance := a.secBalance(t, stranger)

	// The stranger's requests all at once; then what they must have left alone.
	t.Run("refused", func(t *testing.T) {
		for _, r := range routes {
			t.Run(r.method+" "+r.template+" answers 404 as for an unknown id", func(t *testing.T) {
				t.Parallel()
				path := func(id string) string {
					return strings.NewReplacer("{id}", id, "{clientId}", id).Replace(r.template)
				}
				theirs := a.do(r.method, path(r.id), stranger, nil)
				problem(t, theirs, http.StatusNotFound, "not_found")
				unknown := a.do(r.method, path(unknownID), stranger, nil)
				problem(t, unknown, http.StatusNotFound, "not_found")
				if x, y := problemBody(t, theirs), problemBody(t, unknown); x != y {
					t.Fatalf("another account's id answers\n%s\nan unknown id\n%s", x, y)
				}
				if !secSameHeaders(theirs.header, unknown.header, "X-Request-Id", "Date") {
					t.Fatalf("headers differ:\n%v\n%v", theirs.header, unknown.header)
				}
			})
		}
	})

	t.Run("the stranger's requests changed nothing", func(t *testing.T) {
		after := snapshot(t)
		for k, v := range before {
			if after[k] != v {
				t.Errorf("%s changed:\n%s\n%s", k, v, after[k])
			}
		}
		if got := a.secBalance(t, stranger); got != strangerBalance {
			t.Errorf("the stranger's balance moved: %s -> %s", strangerBalance, got)
		}
		if r := a.clientCredentials(clientID, secret); r.status != http.StatusOK {
			t.Errorf("the owner's credential no longer works: %d %s", r.status, r.body)
		}
	})

	t.Run("the statement shows only the caller's own entries", func(t *testing.T) {
		t.Parallel()
		for _, accept := range []string{"application/json", "text/csv"} {
			r := a.do("GET", "/balance/entries?limit=100", stranger, nil, "Accept", accept)
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
		t.Parallel()
		for _, q := range []string{"", "?id=" + txNew, "?perPage=100", "?status=PAID&status=BLOCKED&status=PROCESSING_REFUND"} {
			r := a.want(t, http.StatusOK, "GET", "/transaction"+q, stranger, nil)
			for _, id := range []string{txNew, txPaid, txBlocked, txRefunding} {
				if bytes.Contains(r.body, []byte(id)) {
					t.Fatalf("GET /transaction%s shows the owner's %s to the stranger", q, id)
				}
			}
		}
	})
}

// ---------------------------------------------------------------------------------------------
// API2:2023 Broken Authentication

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
	must(t, err)
	c, err := json.Marshal(claims)
	must(t, err)
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
func (a *api) secJWKSKey(t *testing.T) (kid string, pub *rsa.PublicKey, modulus []byte) {
	t.Helper()
	var doc struct {
		Keys []struct{ Kid, N, E string } `json:"keys"`
	}
	r := a.want(t, http.StatusOK, "GET", "/.well-known/jwks.json", "", nil)
	if err := json.Unmarshal(r.body, &doc); err != nil || len(doc.Keys) != 1 {
		t.Fatalf("JWKS %s: %v", r.body, err)
	}
	n, err1 := base64.RawURLEncoding.DecodeString(doc.Keys[0].N)
	ex, err2 := base64.RawURLEncoding.DecodeString(doc.Keys[0].E)
	if err1 != nil || err2 != nil {
		t.Fatalf("JWKS key: %v %v", err1, err2)
	}
	pub = &rsa.PublicKey{N: new(big.Int).SetBytes(n), E: int(new(big.Int).SetBytes(ex).Int64())}
	return doc.Keys[0].Kid, pub, n
}

func TestOWASPAPI2ForgedExpiredAndMisaddressedTokensAllAnswerTheSame401(t *testing.T) {
	t.Parallel()
	a := secAPI(t)
	serverKey, otherKey := secKeys(t)
	created := a.newAccount()
	real := a.tokenWithScopes(created, domain.AllScopes()...)
	other := a.newAccount()
	header, claims := secSplit(t, real)
	kid, pub, modulus := a.secJWKSKey(t)
	if header["kid"] != kid {
		t.Fatalf("the token's kid %v is not the published %s", header["kid"], kid)
	}
	pkix, err := x509.MarshalPKIXPublicKey(pub)
	must(t, err)
	pkixPEM := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pkix})
	pkcs1PEM := pem.EncodeToMemory(&pem.Block{Type: "RSA PUBLIC KEY", Bytes: x509.MarshalPKCS1PublicKey(pub)})
	now := time.Now().Unix()
	signed := secRS256(serverKey)

	t.Run("control: the same claims signed with the server's key are accepted", func(t *testing.T) {
		a.want(t, http.StatusOK, "GET", "/transaction", secForge(t, header, claims, signed), nil)
		a.want(t, http.StatusOK, "GET", "/transaction", secForge(t, header, secWith(claims, map[string]any{"jti": "another-jti"}), signed), nil)
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
		{"RS256 by another key under the published kid", secForge(t, header, claims, secRS256(otherKey))},
		{"RS256 by another key with an embedded jwk", secForge(t, secWith(header, map[string]any{"kid": nil, "jwk": map[string]any{
			"kty": "RSA", "n": secB64(otherKey.N.Bytes()), "e": "AQAB"}}), claims, secRS256(otherKey))},
		{"RS256 by the server's key without kid", secForge(t, secWith(header, map[string]any{"kid": nil}), claims, signed)},
		{"PS256 by the server's key", secForge(t, secWith(header, map[string]any{"alg": "PS256"}), claims, func(in []byte) []byte {
			sum := sha256.Sum256(in)
			sig, _ := rsa.SignPSS(rand.Reader, serverKey, crypto.SHA256, sum[:], nil)
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
		{"of a credential that does not exist", secForge(t, header, secWith(claims, map[string]any{"client_id": unknownID}), signed)},
		{"over 8 KiB", secForge(t, header, secWith(claims, map[string]any{"pad": strings.Repeat("a", 9<<10)}), signed)},
		{"with a flipped trailing base64 bit in its signature (the same bytes to a lenient decoder)", secFlipTrailingBit(t, real)},
		{"with a crit header, signed by the server's key", secForge(t, secWith(header, map[string]any{"crit": []string{"b64"}, "b64": true}), claims, signed)},
	}
	reference := a.do("GET", "/transaction", "", nil, "Authorization", "Bearer not.a.jwt")
	problem(t, reference, http.StatusUnauthorized, "unauthorized")
	t.Run("refused", func(t *testing.T) {
		for _, c := range cases {
			t.Run("a token "+c.name+" answers 401 with the one body", func(t *testing.T) {
				t.Parallel()
				r := a.do("GET", "/transaction", c.token, nil)
				problem(t, r, http.StatusUnauthorized, "unauthorized")
				if got := r.header.Get("WWW-Authenticate"); got != `Bearer error="invalid_token"` {
					t.Errorf("WWW-Authenticate = %q", got)
				}
				if x, y := problemBody(t, r), problemBody(t, reference); x != y {
					t.Fatalf("the body tells this refusal apart:\n%s\n%s", x, y)
				}
			})
		}
	})
	t.Run("the log names the failed check; the answer does not", func(t *testing.T) {
		if !strings.Contains(a.log.String(), `"status":401`) {
			t.Fatal("no access log line for the refusals")
		}
	})
}

func TestOWASPAPI2ARevokedCredentialsTokensStopWorkingAtOnce(t *testing.T) {
	t.Parallel()
	a := secAPI(t)
	_, tok := a.account()
	cred := a.want(t, http.StatusCreated, "POST", "/auth/credentials", tok, nil)
	if cred.header.Get("Cache-Control") != "no-store" {
		t.Errorf("the new secret's answer is cacheable: Cache-Control %q", cred.header.Get("Cache-Control"))
	}
	c := cred.json(t)
	clientID, secret := c["client_id"].(string), c["client_secret"].(string)
	granted := a.clientCredentials(clientID, secret)
	if granted.status != http.StatusOK {
		t.Fatalf("token: %d %s", granted.status, granted.body)
	}
	second := granted.json(t)["access_token"].(string)
	a.want(t, http.StatusOK, "GET", "/transaction", second, nil)

	a.want(t, http.StatusNoContent, "DELETE", "/auth/credentials/"+clientID, tok, nil)

	reference := a.do("GET", "/transaction", "garbage", nil)
	r := a.do("GET", "/transaction", second, nil)
	problem(t, r, http.StatusUnauthorized, "unauthorized")
	if x, y := problemBody(t, r), problemBody(t, reference); x != y {
		t.Fatalf("a revoked credential's token answers apart:\n%s\n%s", x, y)
	}
	again := a.clientCredentials(clientID, secret)
	if again.status != http.StatusUnauthorized || again.json(t)["error"] != "invalid_client" {
		t.Fatalf("the revoked credential still obtains tokens: %d %s", again.status, again.body)
	}
	a.want(t, http.StatusOK, "GET", "/transaction", tok, nil) // the other credential lives on
}

func TestOWASPAPI2ADisabledAccountAnswers403Forbidden(t *testing.T) {
	t.Parallel()
	a := secAPI(t)
	accountID, tok := a.account()
	c := a.want(t, http.StatusCreated, "POST", "/auth/credentials", tok, nil).json(t)
	id := a.charge(t, tok, 1_000)
	must(t, application.NewDisableAccount(a.accounts).Execute(context.Background(), accountID))
	for _, rt := range []struct {
		method, path string
		body         any
	}{
		{"GET", "/transaction", nil}, {"GET", "/transaction/" + id, nil}, {"POST", "/transaction", minimalTransaction()},
		{"GET", "/balance", nil}, {"GET", "/balance/entries", nil}, {"POST", "/auth/credentials", nil}, {"GET", "/webhook/secret", nil},
	} {
		t.Run(rt.method+" "+rt.path, func(t *testing.T) {
			t.Parallel()
			problem(t, a.do(rt.method, rt.path, tok, rt.body), http.StatusForbidden, "forbidden")
		})
	}
	t.Run("its credentials obtain no token", func(t *testing.T) {
		t.Parallel()
		r := a.clientCredentials(c["client_id"].(string), c["client_secret"].(string))
		if r.status != http.StatusUnauthorized || r.json(t)["error"] != "invalid_client" {
			t.Fatalf("%d %s", r.status, r.body)
		}
	})
}

func TestOWASPAPI2TheTokenEndpointTellsNoCredentialFailureApart(t *testing.T) {
	t.Parallel()
	a := secAPI(t)
	x := a.newAccount()
	y := a.newAccount()
	strip := func(r response) string {
		if r.status != http.StatusUnauthorized {
			t.Fatalf("status %d: %s", r.status, r.body)
		}
		if r.header.Get("Cache-Control") != "no-store" {
			t.Errorf("token error without Cache-Control: no-store")
		}
		return string(r.body)
	}
	unknown := strip(a.clientCredentials(unknownID, x.Credential.Secret))
	wrong := strip(a.clientCredentials(x.Credential.ClientID, x.Credential.Secret+"x"))
	crossed := strip(a.clientCredentials(x.Credential.ClientID, y.Credential.Secret))
	if unknown != wrong || wrong != crossed {
		t.Fatalf("bodies differ:\n%s\n%s\n%s", unknown, wrong, crossed)
	}
	t.Run("a secret in the query string is refused before it is checked", func(t *testing.T) {
		q := url.Values{"client_id": {x.Credential.ClientID}, "client_secret": {x.Credential.Secret}}
		for _, method := range []string{"GET", "POST"} {
			r := a.do(method, "/auth/token?"+q.Encode(), "", nil)
			if r.status != http.StatusBadRequest || r.json(t)["error"] != "invalid_request" {
				t.Fatalf("%s: %d %s", method, r.status, r.body)
			}
		}
	})
	t.Run("no secret reaches the log", func(t *testing.T) {
		for _, s := range []string{x.Credential.Secret, y.Credential.Secret} {
			if strings.Contains(a.log.String(), s) {
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
	t.Parallel()
	a := secAPI(t)
	_, tok := a.account()
	t.Run("refused", func(t *testing.T) {
		for name, value := range secServerFields {
			t.Run(name+" answers 422 unknown_field", func(t *testing.T) {
				t.Parallel()
				body := minimalTransaction()
				body[name] = value
				fields := problem(t, a.do("POST", "/transaction", tok, body), http.StatusUnprocessableEntity, "validation_failed")
				if !slices.Equal(fields, []string{name + " unknown_field"}) {
					t.Fatalf("errors %v", fields)
				}
			})
		}
		t.Run("nested server fields answer 422 too", func(t *testing.T) {
			t.Parallel()
			body := fullTransaction()
			body["customer"].(map[string]any)["document"] = map[string]any{"value": validCNPJ, "type": "CNPJ"}
			body["items"].([]any)[0].(map[string]any)["id"] = "x"
			body["pix"] = map[string]any{"expirationSeconds": 600, "uri": "000201"}
			fields := problem(t, a.do("POST", "/transaction", tok, body), http.StatusUnprocessableEntity, "validation_failed")
			want := []string{"customer.document invalid_type", "items[0].id unknown_field", "pix.uri unknown_field"}
			if !slices.Equal(fields, want) {
				t.Fatalf("errors %v, want %v", fields, want)
			}
		})
	})
	t.Run("nothing of the kind was stored", func(t *testing.T) {
		if total := a.want(t, http.StatusOK, "GET", "/transaction", tok, nil).json(t)["total"]; total != float64(0) {
			t.Fatalf("%v transactions stored", total)
		}
	})
}

func TestOWASPAPI3ServerFieldsCannotBeSetThroughPOSTWithdrawal(t *testing.T) {
	t.Parallel()
	a := secAPI(t)
	_, tok := a.account()
	a.paidCharge(t, tok, 100_000)
	before := a.secBalance(t, tok)
	t.Run("refused", func(t *testing.T) {
		for name, value := range map[string]any{
			"id": unknownID, "status": "PROCESSED", "amountWithdrawn": 1, "processedDate": "2020-01-01T00:00:00.000Z",
			"feeAmount": 0, "acquirer": "EVIL", "method": "PIX", "createdAt": "2020-01-01T00:00:00.000Z",
			"updatedAt": "2020-01-01T00:00:00.000Z", "statusHistory": []any{}, "errorMessage": "x",
			"endToEnd": "E00360305202611221419aBcDeFgHiJk", "payer": map[string]any{}, "receiver": map[string]any{},
			"accountId": "someone-else",
		} {
			t.Run(name+" answers 422 unknown_field", func(t *testing.T) {
				t.Parallel()
				body := map[string]any{"amount": 1_000, "pixKey": map[string]any{"key": "maria@example.com", "type": "EMAIL"}, name: value}
				fields := problem(t, a.do("POST", "/withdrawal", tok, body), http.StatusUnprocessableEntity, "validation_failed")
				if !slices.Equal(fields, []string{name + " unknown_field"}) {
					t.Fatalf("errors %v", fields)
				}
			})
		}
	})
	if after := a.secBalance(t, tok); after != before {
		t.Fatalf("the balance moved: %s -> %s", before, after)
	}
}

func TestOWASPAPI3AnswersShowNoInternalOrUnmaskedProperty(t *testing.T) {
	t.Parallel()
	a := secAPI(t)
	accountID, tok := a.account()
	body := fullTransaction()
	body["idempotencyKey"] = "secret-idempotency-key-0001"
	created := a.want(t, http.StatusCreated, "POST", "/transaction", tok, body)
	id := created.json(t)["id"].(string)
	a.paidCharge(t, tok, 10_000)
	wd := a.want(t, http.StatusCreated, "POST", "/withdrawal", tok, map[string]any{"amount": 1, "pixKey": map[string]any{"key": validCPF, "type": "CPF"}})
	wdID := wd.json(t)["id"].(string)

	answers := map[string]response{
		"POST /transaction":     created,
		"GET /transaction/{id}": a.want(t, http.StatusOK, "GET", "/transaction/"+id, tok, nil),
		"GET /transaction":      a.want(t, http.StatusOK, "GET", "/transaction", tok, nil),
		"POST /withdrawal":      wd,
		"GET /withdrawal/{id}":  a.want(t, http.StatusOK, "GET", "/withdrawal/"+wdID, tok, nil),
	}
	for name, r := range answers {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			for _, leak := range []string{accountID, "secret-idempotency-key-0001", "birthdate", "1990-05-17",
				"52998224725", validCPF, "fingerprint", "version", "accountId", "whsec_"} {
				if bytes.Contains(r.body, []byte(leak)) {
					t.Errorf("the answer shows %q:\n%s", leak, r.body)
				}
			}
		})
	}
	t.Run("the document is masked, the transaction shows only the fields of docs/API.md, Response shapes", func(t *testing.T) {
		t.Parallel()
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
	t.Parallel()
	a := secAPI(t, apiSettings{AcquirerSecret: acquirerSecret})
	_, tok := a.account()
	id := a.charge(t, tok, 1_000)
	big := `{"metadata": {"x": "` + strings.Repeat("a", 1<<20) + `"}}`
	t.Run("refused", func(t *testing.T) {
		for _, rt := range []struct{ path, auth string }{
			{"/transaction", "Bearer " + tok},
			{"/withdrawal", "Bearer " + tok},
			{"/sandbox/transaction/" + id + "/pay", "Bearer " + tok},
			{"/transaction/" + id + "/refund", "Bearer " + tok},
			{"/acquirer/pix", "Bearer " + acquirerSecret},
		} {
			for _, chunked := range []bool{false, true} {
				t.Run(fmt.Sprintf("POST %s chunked=%v", rt.path, chunked), func(t *testing.T) {
					t.Parallel()
					var body io.Reader = strings.NewReader(big)
					if chunked {
						body = secReader{body}
					}
					req, err := http.NewRequest("POST", a.srv.URL+rt.path, body)
					must(t, err)
					req.Header.Set("Content-Type", "application/json")
					req.Header.Set("Authorization", rt.auth)
					res, err := a.srv.Client().Do(req)
					must(t, err)
					defer res.Body.Close()
					raw, _ := io.ReadAll(res.Body)
					problem(t, response{status: res.StatusCode, header: res.Header, body: raw}, http.StatusRequestEntityTooLarge, "payload_too_large")
				})
			}
		}
		t.Run("POST /auth/token answers 413 in OAuth's shape", func(t *testing.T) {
			t.Parallel()
			r := a.do("POST", "/auth/token", "", "client_id=a&client_secret="+strings.Repeat("a", 1<<20), "Content-Type", "application/x-www-form-urlencoded")
			if r.status != http.StatusRequestEntityTooLarge || r.json(t)["error"] != "invalid_request" {
				t.Fatalf("%d %.200s", r.status, r.body)
			}
		})
	})
	if r := a.want(t, http.StatusOK, "GET", "/transaction/"+id, tok, nil); r.json(t)["status"] != "PIX_QRCODE_GENERATED" {
		t.Fatalf("a refused body moved the transaction: %s", r.body)
	}
}

func TestOWASPAPI4CollectionsAndPagesAreBounded(t *testing.T) {
	t.Parallel()
	a := secAPI(t)
	_, tok := a.account()
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
			t.Parallel()
			body := minimalTransaction()
			c.set(body)
			fields := problem(t, a.do("POST", "/transaction", tok, body), http.StatusUnprocessableEntity, "validation_failed")
			if !slices.Equal(fields, []string{c.field}) {
				t.Fatalf("errors %v", fields)
			}
		})
	}
	t.Run("perPage 101 answers 422; 100 is the most", func(t *testing.T) {
		t.Parallel()
		fields := problem(t, a.do("GET", "/transaction?perPage=101", tok, nil), http.StatusUnprocessableEntity, "validation_failed")
		if !slices.Equal(fields, []string{"perPage out_of_range"}) {
			t.Fatalf("errors %v", fields)
		}
		if got := a.want(t, http.StatusOK, "GET", "/transaction?perPage=100", tok, nil).json(t)["perPage"]; got != float64(100) {
			t.Fatalf("perPage %v", got)
		}
	})
	t.Run("deeply nested JSON answers 422 malformed_json", func(t *testing.T) {
		t.Parallel()
		deep := `{"amount": 1000, "paymentMethod": "PIX", "pix": {}, "metadata": {"x": ` +
			strings.Repeat("[", 200_000) + strings.Repeat("]", 200_000) + `}}`
		problem(t, a.do("POST", "/transaction", tok, deep), http.StatusUnprocessableEntity, "malformed_json")
	})
}

// TestOWASPAPI4ValidationAnswersStayBounded: a body of 1 MiB must not buy an answer many times
// its size (nor the memory to build it). A body of a million tiny wrong values is the cheapest
// way to ask for one error each.
func TestOWASPAPI4ValidationAnswersStayBounded(t *testing.T) {
	t.Parallel()
	a := secAPI(t, apiSettings{AcquirerSecret: acquirerSecret})
	_, tok := a.account()
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
		{"400 000 callback entries of the wrong type", "/acquirer/pix", "Bearer " + acquirerSecret, `{"pix": [` + ones + `]}`},
	}
	for _, c := range cases {
		t.Run(c.name+" answers 422 in less than 256 KiB", func(t *testing.T) {
			t.Parallel()
			if len(c.body) > 1<<20 {
				t.Fatalf("the body has %d bytes, over the limit it means to stay under", len(c.body))
			}
			r := a.do("POST", c.path, "", c.body, "Authorization", c.auth)
			if r.status != http.StatusUnprocessableEntity {
				t.Fatalf("status %d", r.status)
			}
			if len(r.body) > limit {
				t.Fatalf("a %d-byte body bought a %d-byte answer (%.0f times its size)", len(c.body), len(r.body), float64(len(r.body))/float64(len(c.body)))
			}
		})
	}
	t.Run("8 000 unknown query parameters answer 422 in less than 256 KiB", func(t *testing.T) {
		t.Parallel()
		var q strings.Builder
		for i := range 8_000 {
			fmt.Fprintf(&q, "%x&", i)
		}
		r := a.do("GET", "/transaction?"+q.String(), tok, nil)
		if r.status != http.StatusUnprocessableEntity || len(r.body) > limit {
			t.Fatalf("status %d, %d bytes", r.status, len(r.body))
		}
	})
}

func TestOWASPAPI4CreationIsRateLimitedPerAccount(t *testing.T) {
	t.Parallel()
	// The buckets refill by the API's clock, held still here: at 1 request a second, two
	// creations slower than half a second each (a busy machine) would otherwise refill the
	// bucket before the third request and turn the expected 429 into a 201.
	a := secAPI(t, apiSettings{Clock: newFakeClock(time.Now().UTC()), RateRPS: 1, RateBurst: 2})
	_, tok := a.account()
	_, other := a.account()
	a.charge(t, tok, 1_000)
	a.charge(t, tok, 1_000)
	r := a.do("POST", "/transaction", tok, minimalTransaction())
	problem(t, r, http.StatusTooManyRequests, "rate_limited")
	if ra := r.header.Get("Retry-After"); ra == "" || strings.Trim(ra, "0123456789") != "" || ra == "0" {
		t.Fatalf("Retry-After = %q, want whole seconds, at least 1", ra)
	}
	t.Run("invalid requests spend the bucket too, so they cannot be used to probe for free", func(t *testing.T) {
		problem(t, a.do("POST", "/transaction", tok, `{}`), http.StatusTooManyRequests, "rate_limited")
	})
	t.Run("another account is not limited by the flood", func(t *testing.T) {
		a.charge(t, other, 1_000)
	})
}
