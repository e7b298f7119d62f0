package pixsign_test

import (
	"context"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"

	"github.com/pixgate/pixgate/adapters/pixsign"
	"github.com/pixgate/pixgate/domain"
	"github.com/pixgate/pixgate/ports"
)

const keySetURL = "https://pay.shop.example/pix/jwks"

// Keys are slow to make; the tests share three.
var keys = func() [3]*rsa.PrivateKey {
	var out [3]*rsa.PrivateKey
	for i := range out {
		k, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			panic(err)
		}
		out[i] = k
	}
	return out
}()

func newSigner(t *testing.T, cfg pixsign.Config) *pixsign.Signer {
	t.Helper()
	if cfg.KeySetURL == "" {
		cfg.KeySetURL = keySetURL
	}
	s, err := pixsign.New(cfg)
	if err != nil {
		t.Fatalf("pixsign.New: %v", err)
	}
	return s
}

var created = time.Date(2026, 11, 22, 11, 19, 32, 123_000_000, time.UTC)

func samplePayload() ports.PixLocationPayload {
	return ports.PixLocationPayload{
		Cob: domain.Cob{
			Location: domain.PixLocation{ID: "ABCDEFGHIJKLMNOPQRSTUVWXYZ", CobTxID: "QRSTUVWXYZ234567ABCDEFGHIJ"},
			Status:   domain.CobCompleted, Revision: 1, CreatedAt: created, ExpirationSeconds: 1800,
			Amount: 1234, PayerRequest: "Camiseta azul",
		},
		PresentedAt: created.Add(time.Minute),
		Key:         "pix@pixgate.example",
	}
}

// verify checks jws with go-jose against the key set and returns its header and payload.
func verify(t *testing.T, jws string, keySet []byte) (jose.Header, map[string]any) {
	t.Helper()
	var set jose.JSONWebKeySet
	if err := json.Unmarshal(keySet, &set); err != nil {
		t.Fatalf("the key set does not parse: %v\n%s", err, keySet)
	}
	obj, err := jose.ParseSigned(jws, []jose.SignatureAlgorithm{jose.PS256})
	if err != nil {
		t.Fatalf("ParseSigned: %v", err)
	}
	h := obj.Signatures[0].Protected
	found := set.Key(h.KeyID)
	if len(found) != 1 {
		t.Fatalf("kid %q names %d keys of the set", h.KeyID, len(found))
	}
	body, err := obj.Verify(found[0].Key)
	if err != nil {
		t.Fatalf("Verify: %v", err)
	}
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatal(err)
	}
	return h, m
}

func TestSignWritesAPS256JWSThatGoJoseVerifies(t *testing.T) {
	s := newSigner(t, pixsign.Config{Key: keys[0]})
	jws, err := s.Sign(context.Background(), samplePayload())
	if err != nil {
		t.Fatal(err)
	}
	h, body := verify(t, jws, s.KeySet())
	if h.Algorithm != "PS256" || h.ExtraHeaders["jku"] != keySetURL {
		t.Errorf("header alg %q jku %v; want PS256 and %s", h.Algorithm, h.ExtraHeaders["jku"], keySetURL)
	}
	thumb, err := (&jose.JSONWebKey{Key: &keys[0].PublicKey}).Thumbprint(crypto.SHA256)
	if err != nil || h.KeyID != base64.RawURLEncoding.EncodeToString(thumb) || s.KeyID() != h.KeyID {
		t.Errorf("kid %q, want the RFC 7638 thumbprint %s", h.KeyID, base64.RawURLEncoding.EncodeToString(thumb))
	}
	want := map[string]any{
		"revisao": 1.0,
		"calendario": map[string]any{"criacao": "2026-11-22T11:19:32.123Z", "apresentacao": "2026-11-22T11:20:32.123Z",
			"expiracao": 1800.0},
		"txid":  "QRSTUVWXYZ234567ABCDEFGHIJ",
		"valor": map[string]any{"original": "12.34"},
		"chave": "pix@pixgate.example", "status": "CONCLUIDA", "solicitacaoPagador": "Camiseta azul",
	}
	got, _ := json.Marshal(body)
	exp, _ := json.Marshal(want)
	if string(got) != string(exp) {
		t.Errorf("payload\n%s\nwant\n%s", got, exp)
	}
}

func TestSignLeavesOutAnAbsentPayerRequest(t *testing.T) {
	s := newSigner(t, pixsign.Config{Key: keys[0]})
	p := samplePayload()
	p.Cob.PayerRequest = ""
	jws, err := s.Sign(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	if _, body := verify(t, jws, s.KeySet()); body["solicitacaoPagador"] != nil {
		t.Errorf("solicitacaoPagador = %v, want it left out", body["solicitacaoPagador"])
	}
}

func TestARotatedKeySetStillVerifiesTheOldKeysJWS(t *testing.T) {
	old := newSigner(t, pixsign.Config{Key: keys[0]})
	before, err := old.Sign(context.Background(), samplePayload())
	if err != nil {
		t.Fatal(err)
	}
	rotated := newSigner(t, pixsign.Config{Key: keys[1], Previous: []*rsa.PublicKey{&keys[0].PublicKey, &keys[1].PublicKey}})
	after, err := rotated.Sign(context.Background(), samplePayload())
	if err != nil {
		t.Fatal(err)
	}
	var set jose.JSONWebKeySet
	if err := json.Unmarshal(rotated.KeySet(), &set); err != nil || len(set.Keys) != 2 {
		t.Fatalf("rotated key set has %d keys (%v), want the new and the old one", len(set.Keys), err)
	}
	hOld, _ := verify(t, before, rotated.KeySet())
	hNew, _ := verify(t, after, rotated.KeySet())
	if hOld.KeyID == hNew.KeyID {
		t.Fatal("the old and the new key have the same kid")
	}
}

// chain makes a CA and a certificate for leafKey that it issued.
func chain(t *testing.T, leafKey *rsa.PrivateKey) []*x509.Certificate {
	t.Helper()
	caTpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "Test Root"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true,
		BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, caTpl, caTpl, &keys[2].PublicKey, keys[2])
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	leafTpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "pay.shop.example"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), KeyUsage: x509.KeyUsageDigitalSignature}
	leafDER, err := x509.CreateCertificate(rand.Reader, leafTpl, ca, &leafKey.PublicKey, keys[2])
	if err != nil {
		t.Fatal(err)
	}
	leaf, _ := x509.ParseCertificate(leafDER)
	return []*x509.Certificate{leaf, ca}
}

func TestACertificateChainGoesInTheHeaderAndTheKeySet(t *testing.T) {
	c := chain(t, keys[0])
	s := newSigner(t, pixsign.Config{Key: keys[0], Chain: c})
	jws, err := s.Sign(context.Background(), samplePayload())
	if err != nil {
		t.Fatal(err)
	}
	h, _ := verify(t, jws, s.KeySet())
	certs, err := h.Certificates(x509.VerifyOptions{Roots: pool(c[1])})
	if err != nil || len(certs) != 1 || !certs[0][0].Equal(c[0]) {
		t.Fatalf("x5c does not verify up to the root: %v", err)
	}
	sum := sha256.Sum256(c[0].Raw)
	if h.ExtraHeaders["x5t#S256"] != base64.RawURLEncoding.EncodeToString(sum[:]) {
		t.Errorf("x5t#S256 = %v", h.ExtraHeaders["x5t#S256"])
	}
	var set jose.JSONWebKeySet
	if err := json.Unmarshal(s.KeySet(), &set); err != nil || len(set.Keys[0].Certificates) != 2 {
		t.Fatalf("the key set's key has no x5c: %v", err)
	}
	if _, err := pixsign.New(pixsign.Config{Key: keys[1], Chain: c, KeySetURL: keySetURL}); err == nil {
		t.Error("New accepted a chain whose certificate is another key's")
	}
}

func pool(c *x509.Certificate) *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(c)
	return p
}

func TestNewRefusesWhatCannotSign(t *testing.T) {
	for name, cfg := range map[string]pixsign.Config{
		"no key":               {KeySetURL: keySetURL},
		"an http key set URL":  {Key: keys[0], KeySetURL: "http://pay.shop.example/pix/jwks"},
		"a relative key set":   {Key: keys[0], KeySetURL: "/pix/jwks"},
		"a key set URL absent": {Key: keys[0]},
	} {
		if _, err := pixsign.New(cfg); err == nil {
			t.Errorf("%s: New succeeded", name)
		}
	}
}

func writePEM(t *testing.T, blocks ...*pem.Block) string {
	t.Helper()
	var b strings.Builder
	for _, bl := range blocks {
		b.Write(pem.EncodeToMemory(bl))
	}
	path := filepath.Join(t.TempDir(), "keys.pem")
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestKeyFilesLoad(t *testing.T) {
	pkcs8, _ := x509.MarshalPKCS8PrivateKey(keys[1])
	spki, _ := x509.MarshalPKIXPublicKey(&keys[2].PublicKey)
	key, err := pixsign.LoadKeyFile(writePEM(t, &pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(keys[0])}))
	if err != nil || !key.Equal(keys[0]) {
		t.Fatalf("LoadKeyFile(PKCS#1) = %v", err)
	}
	previous, err := pixsign.LoadPublicKeysFile(writePEM(t,
		&pem.Block{Type: "PRIVATE KEY", Bytes: pkcs8}, &pem.Block{Type: "PUBLIC KEY", Bytes: spki},
		&pem.Block{Type: "CERTIFICATE", Bytes: chain(t, keys[0])[0].Raw}))
	if err != nil || len(previous) != 3 || !previous[0].Equal(&keys[1].PublicKey) ||
		!previous[1].Equal(&keys[2].PublicKey) || !previous[2].Equal(&keys[0].PublicKey) {
		t.Fatalf("LoadPublicKeysFile = %d keys, %v", len(previous), err)
	}
	c, err := pixsign.LoadCertificateChainFile(writePEM(t, &pem.Block{Type: "CERTIFICATE", Bytes: chain(t, keys[0])[0].Raw}))
	if err != nil || len(c) != 1 {
		t.Fatalf("LoadCertificateChainFile = %v", err)
	}
	small, _ := rsa.GenerateKey(rand.Reader, 1024)
	for name, path := range map[string]string{
		"a public key as the signing key": writePEM(t, &pem.Block{Type: "PUBLIC KEY", Bytes: spki}),
		"a 1024-bit key":                  writePEM(t, &pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(small)}),
		"no PEM at all":                   writePEM(t),
		"a missing file":                  filepath.Join(t.TempDir(), "absent.pem"),
	} {
		if _, err := pixsign.LoadKeyFile(path); err == nil {
			t.Errorf("LoadKeyFile(%s) succeeded", name)
		}
	}
	if _, err := pixsign.LoadCertificateChainFile(writePEM(t, &pem.Block{Type: "PUBLIC KEY", Bytes: spki})); err == nil {
		t.Error("LoadCertificateChainFile accepted a public key")
	}
}
