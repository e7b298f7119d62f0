package main

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"math/big"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Dynamic charges as serve's configuration turns them on: the settings, and the signing key
// read from its files or generated with a warning. What the routes answer (the BR Code, the
// signed location, its key set, rotation, certificate chain, rate limit) is tested on the API
// itself in adapters/httpapi (pix_location_test.go). Helpers here start with "loc".

// locKeyFile writes blocks as PEM in a file of the test's own.
func locKeyFile(t *testing.T, blocks ...*pem.Block) string {
	t.Helper()
	var b []byte
	for _, bl := range blocks {
		b = append(b, pem.EncodeToMemory(bl)...)
	}
	path := filepath.Join(t.TempDir(), "key.pem")
	if err := os.WriteFile(path, b, 0o600); err != nil {
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

// TestPixSigningKeyComesFromItsFilesOrIsGeneratedWithAWarning: without a public address no key
// is made and there is no key set; with one and no key file a key is generated with a warning;
// with the three files, the key, the previous keys and the certificate chain are the key set's.
func TestPixSigningKeyComesFromItsFilesOrIsGeneratedWithAWarning(t *testing.T) {
	t.Parallel()
	const publicURL = "https://pay.shop.example"
	key, previous := locKey(t), locKey(t)
	tpl := &x509.Certificate{SerialNumber: big.NewInt(7), Subject: pkix.Name{CommonName: "pay.shop.example"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), KeyUsage: x509.KeyUsageDigitalSignature}
	der, err := x509.CreateCertificate(rand.Reader, tpl, tpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name     string
		vars     map[string]string
		warns    bool // the generated key's warning is logged
		keys     int  // keys in /pix/jwks; 0: the route does not exist
		withX5C  bool // the current key's entry carries the certificate chain
		mentions bool // the log names PIXGATE_PIX_SIGNING_KEY_FILE at all
	}{
		{name: "without a public URL no key is generated", vars: nil},
		{name: "with a public URL and no key file a generated key warns", vars: map[string]string{"PIXGATE_PUBLIC_URL": publicURL},
			warns: true, keys: 1, mentions: true},
		{name: "the key, previous keys and certificate files are the key set's", vars: map[string]string{
			"PIXGATE_PUBLIC_URL":                     publicURL,
			"PIXGATE_PIX_SIGNING_KEY_FILE":           locKeyFile(t, pkcs1(key)),
			"PIXGATE_PIX_SIGNING_PREVIOUS_KEYS_FILE": locKeyFile(t, pkcs1(previous)),
			"PIXGATE_PIX_SIGNING_CERT_FILE":          locKeyFile(t, &pem.Block{Type: "CERTIFICATE", Bytes: der}),
		}, keys: 2, withX5C: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, tc.vars)
			logs := e.log.String()
			if got := strings.Contains(logs, `"level":"WARN","msg":"no PIXGATE_PIX_SIGNING_KEY_FILE`); got != tc.warns {
				t.Errorf("the generated key's warning logged: %v, want %v\n%s", got, tc.warns, logs)
			}
			if got := strings.Contains(logs, "PIXGATE_PIX_SIGNING_KEY_FILE"); got != tc.mentions {
				t.Errorf("the log names PIXGATE_PIX_SIGNING_KEY_FILE: %v, want %v (a configured key, or none, reported as generated)\n%s", got, tc.mentions, logs)
			}
			r := e.do("GET", "/pix/jwks", "", nil)
			if tc.keys == 0 {
				if r.status != http.StatusNotFound {
					t.Fatalf("/pix/jwks without a public URL: %d", r.status)
				}
				return
			}
			var set struct {
				Keys []struct {
					Kid string   `json:"kid"`
					X5C []string `json:"x5c"`
				} `json:"keys"`
			}
			if r.status != http.StatusOK || json.Unmarshal(r.body, &set) != nil {
				t.Fatalf("/pix/jwks: %d %s", r.status, r.body)
			}
			if len(set.Keys) != tc.keys || (len(set.Keys[0].X5C) == 1) != tc.withX5C {
				t.Fatalf("key set %s: want %d keys, x5c on the first: %v", r.body, tc.keys, tc.withX5C)
			}
		})
	}
}

func TestPixLocationSettings(t *testing.T) {
	t.Parallel()
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
