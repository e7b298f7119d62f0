package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"log/slog"
	"math/big"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"

	"github.com/pixgate/pixgate/adapters/qr/qrtest"
)

// Dynamic charges over real HTTPS: pixgate's public address is its own TLS test server, so
// that the URL in each BR Code and the jku in each JWS are fetched exactly as a payer's bank
// would fetch them. Helpers here start with "loc".

// locEnv is newEnv served over TLS, with PIXGATE_PUBLIC_URL set to its own https address.
func locEnv(t *testing.T, vars map[string]string, options ...func(*app)) *env {
	t.Helper()
	srv := httptest.NewUnstartedServer(nil)
	t.Cleanup(srv.Close)
	base := map[string]string{"PIXGATE_SANDBOX": "true", "PIXGATE_RATE_LIMIT_RPS": "0",
		"PIXGATE_TOKEN_RATE_LIMIT_RPS": "0", "PIXGATE_TOKEN_FAILURE_LIMIT": "0",
		"PIXGATE_PUBLIC_URL": "https://" + srv.Listener.Addr().String()}
	for k, v := range vars {
		base[k] = v
	}
	cfg, err := loadConfig(func(k string) string { return base[k] })
	if err != nil {
		t.Fatalf("config: %v", err)
	}
	logs := &syncBuffer{}
	a, err := newApp(context.Background(), cfg, slog.New(slog.NewJSONHandler(logs, nil)), options...)
	if err != nil {
		t.Fatalf("building the app: %v", err)
	}
	srv.Config.Handler = a.server.Handler()
	srv.StartTLS()
	return &env{t: t, app: a, srv: srv, log: logs}
}

// locCharge is a created dynamic charge, as its 201 answer and its BR Code show it.
type locCharge struct {
	id, uri, createdAt string
	png                []byte            // the PNG of pixResponse.qrCodeBase64
	fields             map[string]string // the BR Code's top-level fields
	account            map[string]string // the fields of template 26
	additional         map[string]string // the fields of template 62
}

// locTLV splits EMV fields (two-digit id, two-digit length, value).
func locTLV(t *testing.T, s string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for len(s) > 0 {
		if len(s) < 4 {
			t.Fatalf("truncated field %q", s)
		}
		n, err := strconv.Atoi(s[2:4])
		if err != nil || len(s) < 4+n {
			t.Fatalf("bad field length in %q", s)
		}
		if _, dup := out[s[:2]]; dup {
			t.Fatalf("field %s twice", s[:2])
		}
		out[s[:2]] = s[4 : 4+n]
		s = s[4+n:]
	}
	return out
}

// locCRC is CRC-16/CCITT-FALSE, written again here so that the emitter's cannot hide a mistake.
func locCRC(s string) string {
	crc := 0xFFFF
	for _, b := range []byte(s) {
		crc ^= int(b) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = (crc<<1 ^ 0x1021) & 0xFFFF
			} else {
				crc = crc << 1 & 0xFFFF
			}
		}
	}
	return fmt.Sprintf("%04X", crc)
}

// locCreate creates a charge of body and checks its code's structure and CRC; its QR image
// is TestDynamicChargeCodeAndLocation's to read.
func (e *env) locCreate(tok string, body map[string]any) locCharge {
	e.t.Helper()
	t := e.t
	r := e.do("POST", "/transaction", tok, body)
	if r.status != http.StatusCreated {
		t.Fatalf("create: %d %s", r.status, r.body)
	}
	m := r.json(t)
	pr := m["pixResponse"].(map[string]any)
	uri := pr["uri"].(string)
	if !strings.HasSuffix(uri[:len(uri)-4], "6304") || locCRC(uri[:len(uri)-4]) != uri[len(uri)-4:] {
		t.Fatalf("the CRC of %q does not check", uri)
	}
	c := locCharge{id: m["id"].(string), uri: uri, createdAt: e.do("GET", "/transaction/"+m["id"].(string), tok, nil).json(t)["createdAt"].(string), fields: locTLV(t, uri)}
	c.account, c.additional = locTLV(t, c.fields["26"]), locTLV(t, c.fields["62"])
	raw, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(pr["qrCodeBase64"].(string), "data:image/png;base64,"))
	if err != nil {
		t.Fatal(err)
	}
	c.png = raw
	return c
}

// locFetch fetches a URL the way a payer's bank does: over https, no token.
func (e *env) locFetch(url string) response {
	e.t.Helper()
	res, err := e.srv.Client().Get(url)
	if err != nil {
		e.t.Fatalf("GET %s: %v", url, err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	return response{status: res.StatusCode, header: res.Header, body: raw}
}

// locVerify fetches the charge's location, verifies its JWS with go-jose against the key set
// fetched from its jku, and returns the header and the payload.
func (e *env) locVerify(c locCharge) (jose.Header, map[string]any, string) {
	e.t.Helper()
	t := e.t
	r := e.locFetch("https://" + c.account["25"])
	if r.status != http.StatusOK || r.header.Get("Content-Type") != "application/jose" {
		t.Fatalf("location: %d %q %s", r.status, r.header.Get("Content-Type"), r.body)
	}
	h, body := e.locCheck(string(r.body), nil)
	return h, body, string(r.body)
}

// locCheck verifies jws against keySet, or against the key set at its jku when keySet is nil.
func (e *env) locCheck(jws string, keySet []byte) (jose.Header, map[string]any) {
	e.t.Helper()
	t := e.t
	obj, err := jose.ParseSigned(jws, []jose.SignatureAlgorithm{jose.PS256})
	if err != nil {
		t.Fatalf("not a PS256 JWS: %v\n%s", err, jws)
	}
	h := obj.Signatures[0].Protected
	jku, _ := h.ExtraHeaders["jku"].(string)
	if want := e.app.cfg.Server.PublicURL + "/pix/jwks"; jku != want || h.KeyID == "" {
		t.Fatalf("header jku %q kid %q; want jku %s and a kid", jku, h.KeyID, want)
	}
	if keySet == nil {
		r := e.locFetch(jku)
		if r.status != http.StatusOK {
			t.Fatalf("jku: %d", r.status)
		}
		keySet = r.body
	}
	var set jose.JSONWebKeySet
	if err := json.Unmarshal(keySet, &set); err != nil {
		t.Fatalf("key set: %v", err)
	}
	keys := set.Key(h.KeyID)
	if len(keys) != 1 {
		t.Fatalf("kid %s names %d keys of the set", h.KeyID, len(keys))
	}
	payload, err := obj.Verify(keys[0].Key)
	if err != nil {
		t.Fatalf("the JWS does not verify: %v", err)
	}
	var body map[string]any
	if err := json.Unmarshal(payload, &body); err != nil {
		t.Fatal(err)
	}
	return h, body
}

func locStatus(body map[string]any) (string, float64) {
	rev, _ := body["revisao"].(float64)
	status, _ := body["status"].(string)
	return status, rev
}

func TestDynamicChargeCodeAndLocation(t *testing.T) {
	e := locEnv(t, nil)
	_, tok := e.account()
	c := e.locCreate(tok, fullTransaction())

	t.Run("the code is dynamic: location without scheme, no key, no amount, txid ***", func(t *testing.T) {
		host := strings.TrimPrefix(e.app.cfg.Server.PublicURL, "https://")
		loc, ok := strings.CutPrefix(c.account["25"], host+"/pix/qr/")
		if !ok || len(loc) < 25 || len(loc) > 32 || strings.Contains(loc, strings.ReplaceAll(c.id, "-", "")) {
			t.Fatalf("26-25 = %q; want %s/pix/qr/ and a location id", c.account["25"], host)
		}
		if c.account["00"] != "br.gov.bcb.pix" || c.account["01"] != "" || c.fields["54"] != "" ||
			c.additional["05"] != "***" || c.fields["01"] != "12" {
			t.Fatalf("fields %v, 26 %v, 62 %v", c.fields, c.account, c.additional)
		}
	})

	t.Run("its QR image reads back as the code", func(t *testing.T) {
		if got := qrtest.Decode(t, c.png); got != c.uri {
			t.Fatalf("the QR image reads\n %q\nwant the code\n %q", got, c.uri)
		}
	})

	t.Run("the location verifies against its jku and states the charge", func(t *testing.T) {
		h, body, _ := e.locVerify(c)
		if h.Algorithm != "PS256" {
			t.Errorf("alg %s", h.Algorithm)
		}
		cal := body["calendario"].(map[string]any)
		txid, _ := body["txid"].(string)
		if len(txid) < 26 || len(txid) > 35 {
			t.Errorf("txid %q: want 26 to 35 characters", txid)
		}
		checks := map[string][2]any{
			"revisao":            {body["revisao"], 0.0},
			"status":             {body["status"], "ATIVA"},
			"valor.original":     {body["valor"].(map[string]any)["original"], "123.45"},
			"chave":              {body["chave"], "pix@pixgate.example"},
			"calendario.criacao": {cal["criacao"], c.createdAt},
			"expiracao":          {cal["expiracao"], 600.0},
			"solicitacaoPagador": {body["solicitacaoPagador"], "Algodão"},
		}
		for name, ch := range checks {
			if ch[0] != ch[1] {
				t.Errorf("%s = %v, want %v", name, ch[0], ch[1])
			}
		}
		if _, err := time.Parse("2006-01-02T15:04:05.000Z", cal["apresentacao"].(string)); err != nil {
			t.Errorf("apresentacao %v", cal["apresentacao"])
		}
		for _, secret := range []string{"529", "joao", "João", "Paulista", "order-000123", c.id} {
			if raw, _ := json.Marshal(body); strings.Contains(string(raw), secret) {
				t.Errorf("the payload shows %q: %s", secret, raw)
			}
		}
	})

	t.Run("without an item description there is no solicitacaoPagador", func(t *testing.T) {
		_, body, _ := e.locVerify(e.locCreate(tok, minimalTransaction()))
		if _, ok := body["solicitacaoPagador"]; ok {
			t.Errorf("solicitacaoPagador = %v", body["solicitacaoPagador"])
		}
	})

	t.Run("an unchanged charge answers the same signed bytes again", func(t *testing.T) {
		_, _, first := e.locVerify(c)
		_, _, again := e.locVerify(c)
		if first != again {
			t.Error("the second fetch of an unchanged charge was signed again")
		}
	})

	t.Run("a sandbox payment makes it CONCLUIDA at revision 1", func(t *testing.T) {
		if r := e.do("POST", "/sandbox/transaction/"+c.id+"/pay", tok, nil); r.status != http.StatusOK {
			t.Fatalf("pay: %d %s", r.status, r.body)
		}
		_, body, _ := e.locVerify(c)
		if s, rev := locStatus(body); s != "CONCLUIDA" || rev != 1 {
			t.Fatalf("after payment: %s revision %v", s, rev)
		}
	})

	t.Run("unknown, malformed and id-shaped locations answer 404 problems", func(t *testing.T) {
		for _, id := range []string{"ABCDEFGHIJKLMNOPQRSTUVWXYZ", "short", c.id, strings.Repeat("A", 33), "ABCDEFGHIJKLMNOPQRSTUVWXY_"} {
			r := e.locFetch(e.srv.URL + "/pix/qr/" + id)
			if r.status != http.StatusNotFound || r.json(t)["code"] != "not_found" {
				t.Errorf("%s: %d %s", id, r.status, r.body)
			}
		}
	})
}

func TestDynamicChargeExpiresAsRemovidaPeloPSP(t *testing.T) {
	clock := &fakeClock{}
	e := locEnv(t, nil, func(a *app) { a.clock = clock })
	_, tok := e.account()
	body := minimalTransaction()
	body["pix"] = map[string]any{"expirationSeconds": 60}
	c := e.locCreate(tok, body)
	if _, b, _ := e.locVerify(c); b["status"] != "ATIVA" {
		t.Fatalf("new charge: %v", b["status"])
	}

	clock.Advance(61 * time.Second)
	_, b, before := e.locVerify(c)
	if s, rev := locStatus(b); s != "REMOVIDA_PELO_PSP" || rev != 1 {
		t.Fatalf("expired by the clock, before the sweeper: %s revision %v", s, rev)
	}
	if n := e.lcExpire(clock.Now()); n != 1 {
		t.Fatalf("the sweeper expired %d", n)
	}
	_, b, after := e.locVerify(c)
	if s, rev := locStatus(b); s != "REMOVIDA_PELO_PSP" || rev != 1 || after != before {
		t.Fatalf("after the sweeper: %s revision %v (the same revision must answer the same JWS: %v)", s, rev, after == before)
	}
}

func TestAcquirerCallbackPaysADynamicChargeByItsCobTxID(t *testing.T) {
	e := locEnv(t, map[string]string{"PIXGATE_ACQUIRER_SECRET": acqSecret})
	_, tok := e.account()
	c := e.locCreate(tok, minimalTransaction())
	_, body, _ := e.locVerify(c)
	txid := body["txid"].(string)

	res := acqResults(t, e.acqNotify(map[string]any{"pix": []any{acqPix(txid, acqE2E)}}))
	if len(res) != 1 || res[0].Outcome != "applied" || res[0].Status != "PAID" || res[0].TxID != txid {
		t.Fatalf("results %+v", res)
	}
	if got := e.do("GET", "/transaction/"+c.id, tok, nil).json(t); got["status"] != "PAID" || got["endToEnd"] != acqE2E {
		t.Fatalf("transaction %v %v", got["status"], got["endToEnd"])
	}
	_, body, _ = e.locVerify(c)
	if s, rev := locStatus(body); s != "CONCLUIDA" || rev != 1 {
		t.Fatalf("location after the callback: %s revision %v", s, rev)
	}
	// An unknown cob-shaped txid is unknown, as any other.
	res = acqResults(t, e.acqNotify(map[string]any{"pix": []any{acqPix("ZZZZZZZZZZZZZZZZZZZZZZZZZZ", acqOtherE2E)}}))
	if res[0].Outcome != "unknown_txid" {
		t.Fatalf("unknown cob txid: %+v", res[0])
	}
}

// locKeyFile writes key as PEM in a file of the test's own.
func locKeyFile(t *testing.T, blocks ...*pem.Block) string {
	t.Helper()
	var b bytes.Buffer
	for _, bl := range blocks {
		b.Write(pem.EncodeToMemory(bl))
	}
	path := filepath.Join(t.TempDir(), "key.pem")
	if err := os.WriteFile(path, b.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func locKey(t *testing.T) *rsa.PrivateKey {
	t.Helper()
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func pkcs1(k *rsa.PrivateKey) *pem.Block {
	return &pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(k)}
}

func TestPixSigningKeyRotationAndCertificateChain(t *testing.T) {
	oldKey, newKey := locKey(t), locKey(t)

	old := locEnv(t, map[string]string{"PIXGATE_PIX_SIGNING_KEY_FILE": locKeyFile(t, pkcs1(oldKey))})
	if strings.Contains(old.log.String(), "PIXGATE_PIX_SIGNING_KEY_FILE") {
		t.Error("a configured key was reported as generated")
	}
	_, tok := old.account()
	_, _, before := old.locVerify(old.locCreate(tok, minimalTransaction()))

	t.Run("after a rotation the key set serves both keys and the old JWS still verifies", func(t *testing.T) {
		rotated := locEnv(t, map[string]string{
			"PIXGATE_PIX_SIGNING_KEY_FILE":           locKeyFile(t, pkcs1(newKey)),
			"PIXGATE_PIX_SIGNING_PREVIOUS_KEYS_FILE": locKeyFile(t, pkcs1(oldKey)),
		})
		_, tok := rotated.account()
		hNew, _, _ := rotated.locVerify(rotated.locCreate(tok, minimalTransaction()))
		keySet := rotated.locFetch(rotated.app.cfg.Server.PublicURL + "/pix/jwks").body
		hOld, _ := old.locCheck(before, keySet)
		if hOld.KeyID == hNew.KeyID {
			t.Fatal("the new key signs with the old kid")
		}
	})

	t.Run("a certificate chain goes into the header as x5c and x5t#S256", func(t *testing.T) {
		tpl := &x509.Certificate{SerialNumber: big.NewInt(7), Subject: pkix.Name{CommonName: "pay.shop.example"},
			NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), KeyUsage: x509.KeyUsageDigitalSignature}
		der, err := x509.CreateCertificate(rand.Reader, tpl, tpl, &newKey.PublicKey, newKey)
		if err != nil {
			t.Fatal(err)
		}
		e := locEnv(t, map[string]string{
			"PIXGATE_PIX_SIGNING_KEY_FILE":  locKeyFile(t, pkcs1(newKey)),
			"PIXGATE_PIX_SIGNING_CERT_FILE": locKeyFile(t, &pem.Block{Type: "CERTIFICATE", Bytes: der}),
		})
		_, tok := e.account()
		h, _, _ := e.locVerify(e.locCreate(tok, minimalTransaction()))
		roots := x509.NewCertPool()
		cert, _ := x509.ParseCertificate(der)
		roots.AddCert(cert)
		chains, err := h.Certificates(x509.VerifyOptions{Roots: roots})
		if err != nil || len(chains) != 1 || !chains[0][0].Equal(cert) {
			t.Fatalf("x5c: %v", err)
		}
		if h.ExtraHeaders["x5t#S256"] == nil {
			t.Error("no x5t#S256")
		}
	})
}

func TestPixLocationWithoutPublicURL(t *testing.T) {
	e := newEnv(t, nil)
	_, tok := e.account()
	r := e.do("POST", "/transaction", tok, minimalTransaction())
	uri := r.json(t)["pixResponse"].(map[string]any)["uri"].(string)
	if account := locTLV(t, locTLV(t, uri)["26"]); account["01"] != "pix@pixgate.example" || account["25"] != "" {
		t.Fatalf("without a public address the code must stay static: %v", account)
	}
	for _, path := range []string{"/pix/qr/ABCDEFGHIJKLMNOPQRSTUVWXYZ", "/pix/jwks"} {
		if r := e.do("GET", path, "", nil); r.status != http.StatusNotFound {
			t.Errorf("%s: %d", path, r.status)
		}
	}
	if strings.Contains(e.log.String(), "PIXGATE_PIX_SIGNING_KEY_FILE") {
		t.Error("a key for dynamic charges was generated without a public address")
	}
}

func TestPixLocationGeneratedKeyWarnsAndLimitsPerAddress(t *testing.T) {
	e := locEnv(t, map[string]string{"PIXGATE_PIX_LOCATION_RATE_LIMIT_RPS": "0.01", "PIXGATE_PIX_LOCATION_RATE_LIMIT_BURST": "2"})
	if !strings.Contains(e.log.String(), `"level":"WARN","msg":"no PIXGATE_PIX_SIGNING_KEY_FILE`) {
		t.Errorf("no warning about the generated key:\n%s", e.log.String())
	}
	_, tok := e.account()
	c := e.locCreate(tok, minimalTransaction())
	for i := range 2 {
		if r := e.locFetch("https://" + c.account["25"]); r.status != http.StatusOK {
			t.Fatalf("fetch %d: %d", i, r.status)
		}
	}
	r := e.locFetch("https://" + c.account["25"])
	if r.status != http.StatusTooManyRequests || r.header.Get("Retry-After") == "" || r.json(t)["code"] != "rate_limited" {
		t.Fatalf("over the limit: %d %v %s", r.status, r.header, r.body)
	}
	if r := e.locFetch(e.app.cfg.Server.PublicURL + "/pix/jwks"); r.status != http.StatusTooManyRequests {
		t.Fatalf("the key set shares the limit: %d", r.status)
	}
}

func TestPixLocationSettings(t *testing.T) {
	cases := map[string]map[string]string{
		"a public URL too long for a BR Code": {"PIXGATE_PUBLIC_URL": "https://" + strings.Repeat("h", 40) + ".example"},
		"a signing key without a public URL":  {"PIXGATE_PIX_SIGNING_KEY_FILE": "/etc/pixgate/pix.pem"},
		"a rate of -1":                        {"PIXGATE_PIX_LOCATION_RATE_LIMIT_RPS": "-1"},
	}
	for name, vars := range cases {
		if _, err := loadConfig(func(k string) string { return vars[k] }); err == nil || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v; want a one-line error", name, err)
		}
	}
	if _, err := loadConfig(func(k string) string {
		return map[string]string{"PIXGATE_PUBLIC_URL": "https://" + strings.Repeat("h", 35) + ".example"}[k]
	}); err != nil {
		t.Errorf("a 43-character public host: %v", err)
	}
}
