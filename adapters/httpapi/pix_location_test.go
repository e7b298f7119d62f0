package httpapi_test

// Dynamic charges over real HTTPS (docs/API.md, Dynamic charges): with DynamicCharges the API's
// public address is its own TLS test server, so that the URL in each BR Code and the jku in each
// JWS are fetched exactly as a payer's bank would fetch them. Helpers here start with "loc".
// What only serve's configuration decides (the PIXGATE_PIX_SIGNING_*_FILE files, the generated
// key's warning, the public address's length) is tested in cmd/pixgate.

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"

	"github.com/pixgate/pixgate/adapters/httpapi"
	"github.com/pixgate/pixgate/adapters/pixsign"
	"github.com/pixgate/pixgate/adapters/qr/qrtest"
)

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
func (a *api) locCreate(t *testing.T, tok string, body map[string]any) locCharge {
	t.Helper()
	r := a.do("POST", "/transaction", tok, body)
	if r.status != http.StatusCreated {
		t.Fatalf("create: %d %s", r.status, r.body)
	}
	m := r.json(t)
	pr := m["pixResponse"].(map[string]any)
	uri := pr["uri"].(string)
	if !strings.HasSuffix(uri[:len(uri)-4], "6304") || locCRC(uri[:len(uri)-4]) != uri[len(uri)-4:] {
		t.Fatalf("the CRC of %q does not check", uri)
	}
	c := locCharge{id: m["id"].(string), uri: uri, createdAt: a.do("GET", "/transaction/"+m["id"].(string), tok, nil).json(t)["createdAt"].(string), fields: locTLV(t, uri)}
	c.account, c.additional = locTLV(t, c.fields["26"]), locTLV(t, c.fields["62"])
	raw, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(pr["qrCodeBase64"].(string), "data:image/png;base64,"))
	must(t, err)
	c.png = raw
	return c
}

// locFetch fetches a URL the way a payer's bank does: over https, no token.
func (a *api) locFetch(t *testing.T, url string) response {
	t.Helper()
	res, err := a.srv.Client().Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	return response{status: res.StatusCode, header: res.Header, body: raw}
}

// locVerify fetches the charge's location, verifies its JWS with go-jose against the key set
// fetched from its jku, and returns the header, the payload and the JWS.
func (a *api) locVerify(t *testing.T, c locCharge) (jose.Header, map[string]any, string) {
	t.Helper()
	r := a.locFetch(t, "https://"+c.account["25"])
	if r.status != http.StatusOK || r.header.Get("Content-Type") != "application/jose" {
		t.Fatalf("location: %d %q %s", r.status, r.header.Get("Content-Type"), r.body)
	}
	h, body := a.locCheck(t, string(r.body), nil)
	return h, body, string(r.body)
}

// locCheck verifies jws against keySet, or against the key set at its jku when keySet is nil.
func (a *api) locCheck(t *testing.T, jws string, keySet []byte) (jose.Header, map[string]any) {
	t.Helper()
	obj, err := jose.ParseSigned(jws, []jose.SignatureAlgorithm{jose.PS256})
	if err != nil {
		t.Fatalf("not a PS256 JWS: %v\n%s", err, jws)
	}
	h := obj.Signatures[0].Protected
	jku, _ := h.ExtraHeaders["jku"].(string)
	if want := a.srv.URL + httpapi.PixKeySetPath; jku != want || h.KeyID == "" {
		t.Fatalf("header jku %q kid %q; want jku %s and a kid", jku, h.KeyID, want)
	}
	if keySet == nil {
		r := a.locFetch(t, jku)
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
	must(t, json.Unmarshal(payload, &body))
	return h, body
}

func locStatus(body map[string]any) (string, float64) {
	rev, _ := body["revisao"].(float64)
	status, _ := body["status"].(string)
	return status, rev
}

func TestDynamicChargeCodeAndLocation(t *testing.T) {
	t.Parallel()
	a := newAPI(t, apiSettings{DynamicCharges: true})
	_, tok := a.account()
	c := a.locCreate(t, tok, fullTransaction())

	t.Run("the code is dynamic: location without scheme, no key, no amount, txid ***", func(t *testing.T) {
		t.Parallel()
		host := strings.TrimPrefix(a.srv.URL, "https://")
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
		t.Parallel()
		if got := qrtest.Decode(t, c.png); got != c.uri {
			t.Fatalf("the QR image reads\n %q\nwant the code\n %q", got, c.uri)
		}
	})

	t.Run("the location verifies against its jku and states the charge", func(t *testing.T) {
		t.Parallel()
		h, body, _ := a.locVerify(t, c)
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
		t.Parallel()
		_, body, _ := a.locVerify(t, a.locCreate(t, tok, minimalTransaction()))
		if _, ok := body["solicitacaoPagador"]; ok {
			t.Errorf("solicitacaoPagador = %v", body["solicitacaoPagador"])
		}
	})

	t.Run("an unchanged charge answers the same signed bytes again", func(t *testing.T) {
		t.Parallel()
		_, _, first := a.locVerify(t, c)
		_, _, again := a.locVerify(t, c)
		if first != again {
			t.Error("the second fetch of an unchanged charge was signed again")
		}
	})

	t.Run("a sandbox payment makes it CONCLUIDA at revision 1", func(t *testing.T) {
		t.Parallel()
		// A charge of its own, fetched first so that its ATIVA answer is kept: the payment
		// must replace it.
		paid := a.locCreate(t, tok, fullTransaction())
		if _, body, _ := a.locVerify(t, paid); body["status"] != "ATIVA" {
			t.Fatalf("before payment: %v", body["status"])
		}
		if r := a.do("POST", "/sandbox/transaction/"+paid.id+"/pay", tok, nil); r.status != http.StatusOK {
			t.Fatalf("pay: %d %s", r.status, r.body)
		}
		_, body, _ := a.locVerify(t, paid)
		if s, rev := locStatus(body); s != "CONCLUIDA" || rev != 1 {
			t.Fatalf("after payment: %s revision %v", s, rev)
		}
	})

	for name, id := range map[string]string{
		"unknown": "ABCDEFGHIJKLMNOPQRSTUVWXYZ", "too short": "short", "the transaction id": c.id,
		"too long": strings.Repeat("A", 33), "outside the alphabet": "ABCDEFGHIJKLMNOPQRSTUVWXY_",
	} {
		t.Run("a location "+name+" answers the 404 problem", func(t *testing.T) {
			t.Parallel()
			r := a.locFetch(t, a.srv.URL+"/pix/qr/"+id)
			if r.status != http.StatusNotFound || r.json(t)["code"] != "not_found" {
				t.Errorf("%s: %d %s", id, r.status, r.body)
			}
		})
	}
}

func TestDynamicChargeExpiresAsRemovidaPeloPSP(t *testing.T) {
	t.Parallel()
	clock := newFakeClock(time.Now().UTC())
	a := newAPI(t, apiSettings{DynamicCharges: true, Clock: clock})
	_, tok := a.account()
	body := minimalTransaction()
	body["pix"] = map[string]any{"expirationSeconds": 60}
	c := a.locCreate(t, tok, body)
	if _, b, _ := a.locVerify(t, c); b["status"] != "ATIVA" {
		t.Fatalf("new charge: %v", b["status"])
	}

	clock.Advance(61 * time.Second)
	_, b, before := a.locVerify(t, c)
	if s, rev := locStatus(b); s != "REMOVIDA_PELO_PSP" || rev != 1 {
		t.Fatalf("expired by the clock, before the sweeper: %s revision %v", s, rev)
	}
	if n := a.expire(); n != 1 {
		t.Fatalf("the sweeper expired %d", n)
	}
	_, b, after := a.locVerify(t, c)
	if s, rev := locStatus(b); s != "REMOVIDA_PELO_PSP" || rev != 1 || after != before {
		t.Fatalf("after the sweeper: %s revision %v (the same revision must answer the same JWS: %v)", s, rev, after == before)
	}
}

// locOtherE2E is the end-to-end id of a second payment, beside acquirerE2E.
const locOtherE2E = "E00360305202611221420zYxWvUtSrQp"

func TestAcquirerCallbackPaysADynamicChargeByItsCobTxID(t *testing.T) {
	t.Parallel()
	a := newAPI(t, apiSettings{DynamicCharges: true, AcquirerSecret: acquirerSecret})
	_, tok := a.account()
	c := a.locCreate(t, tok, minimalTransaction())
	_, body, _ := a.locVerify(t, c)
	txid := body["txid"].(string)

	res := a.acquirerNotify(t, map[string]any{"pix": []any{a.pixPayment(txid, acquirerE2E)}})
	if len(res) != 1 || res[0].Outcome != "applied" || res[0].Status != "PAID" || res[0].TxID != txid {
		t.Fatalf("results %+v", res)
	}
	if got := a.do("GET", "/transaction/"+c.id, tok, nil).json(t); got["status"] != "PAID" || got["endToEnd"] != acquirerE2E {
		t.Fatalf("transaction %v %v", got["status"], got["endToEnd"])
	}
	_, body, _ = a.locVerify(t, c)
	if s, rev := locStatus(body); s != "CONCLUIDA" || rev != 1 {
		t.Fatalf("location after the callback: %s revision %v", s, rev)
	}
	// An unknown cob-shaped txid is unknown, as any other.
	res = a.acquirerNotify(t, map[string]any{"pix": []any{a.pixPayment("ZZZZZZZZZZZZZZZZZZZZZZZZZZ", locOtherE2E)}})
	if res[0].Outcome != "unknown_txid" {
		t.Fatalf("unknown cob txid: %+v", res[0])
	}
}

func locKey(t *testing.T) *rsa.PrivateKey {
	t.Helper()
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	must(t, err)
	return k
}

func TestPixSigningKeyRotationAndCertificateChain(t *testing.T) {
	t.Parallel()
	oldKey, newKey := locKey(t), locKey(t)

	old := newAPI(t, apiSettings{DynamicCharges: true, PixSigning: pixsign.Config{Key: oldKey}})
	_, tok := old.account()
	_, _, before := old.locVerify(t, old.locCreate(t, tok, minimalTransaction()))

	t.Run("after a rotation the key set serves both keys and the old JWS still verifies", func(t *testing.T) {
		t.Parallel()
		rotated := newAPI(t, apiSettings{DynamicCharges: true,
			PixSigning: pixsign.Config{Key: newKey, Previous: []*rsa.PublicKey{&oldKey.PublicKey}}})
		_, tok := rotated.account()
		hNew, _, _ := rotated.locVerify(t, rotated.locCreate(t, tok, minimalTransaction()))
		keySet := rotated.locFetch(t, rotated.srv.URL+httpapi.PixKeySetPath).body
		hOld, _ := old.locCheck(t, before, keySet)
		if hOld.KeyID == hNew.KeyID {
			t.Fatal("the new key signs with the old kid")
		}
	})

	t.Run("a certificate chain goes into the header as x5c and x5t#S256", func(t *testing.T) {
		t.Parallel()
		tpl := &x509.Certificate{SerialNumber: big.NewInt(7), Subject: pkix.Name{CommonName: "pay.shop.example"},
			NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), KeyUsage: x509.KeyUsageDigitalSignature}
		der, err := x509.CreateCertificate(rand.Reader, tpl, tpl, &newKey.PublicKey, newKey)
		must(t, err)
		cert, err := x509.ParseCertificate(der)
		must(t, err)
		a := newAPI(t, apiSettings{DynamicCharges: true, PixSigning: pixsign.Config{Key: newKey, Chain: []*x509.Certificate{cert}}})
		_, tok := a.account()
		h, _, _ := a.locVerify(t, a.locCreate(t, tok, minimalTransaction()))
		roots := x509.NewCertPool()
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

func TestWithoutDynamicChargesCodesAreStaticAndLocationsAnswer404(t *testing.T) {
	t.Parallel()
	a := newAPI(t)
	_, tok := a.account()
	r := a.do("POST", "/transaction", tok, minimalTransaction())
	uri := r.json(t)["pixResponse"].(map[string]any)["uri"].(string)
	if account := locTLV(t, locTLV(t, uri)["26"]); account["01"] != "pix@pixgate.example" || account["25"] != "" {
		t.Fatalf("without a public address the code must stay static: %v", account)
	}
	for _, path := range []string{"/pix/qr/ABCDEFGHIJKLMNOPQRSTUVWXYZ", httpapi.PixKeySetPath} {
		t.Run(path, func(t *testing.T) {
			t.Parallel()
			if r := a.do("GET", path, "", nil); r.status != http.StatusNotFound {
				t.Errorf("%s: %d", path, r.status)
			}
		})
	}
}

func TestPixLocationIsRateLimitedPerAddressWithItsKeySet(t *testing.T) {
	t.Parallel()
	a := newAPI(t, apiSettings{DynamicCharges: true, PixLocationRPS: 0.01, PixLocationBurst: 2})
	_, tok := a.account()
	c := a.locCreate(t, tok, minimalTransaction())
	for i := range 2 {
		if r := a.locFetch(t, "https://"+c.account["25"]); r.status != http.StatusOK {
			t.Fatalf("fetch %d: %d", i, r.status)
		}
	}
	r := a.locFetch(t, "https://"+c.account["25"])
	if r.status != http.StatusTooManyRequests || r.header.Get("Retry-After") == "" || r.json(t)["code"] != "rate_limited" {
		t.Fatalf("over the limit: %d %v %s", r.status, r.header, r.body)
	}
	if r := a.locFetch(t, a.srv.URL+httpapi.PixKeySetPath); r.status != http.StatusTooManyRequests {
		t.Fatalf("the key set shares the limit: %d", r.status)
	}
}
