package psp

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"math/big"
	"os"
	"path/filepath"
	"testing"
	"time"

	"software.sslmate.com/src/go-pkcs12"
)

// issue makes a certificate for key, signed by parent's key (itself when parent is nil).
func issue(t *testing.T, name string, key *ecdsa.PrivateKey, parent *x509.Certificate, parentKey *ecdsa.PrivateKey) *x509.Certificate {
	t.Helper()
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: parent == nil, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
	}
	if parent == nil {
		parent, parentKey = tmpl, key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, parentKey)
	if err != nil {
		t.Fatal(err)
	}
	c, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestAPKCS12BundleFindsTheLeafOfItsKeyWhateverItsOrder(t *testing.T) {
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	leafKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	ca := issue(t, "ca", caKey, nil, nil)
	leaf := issue(t, "leaf", leafKey, ca, caKey)
	write := func(first *x509.Certificate, rest ...*x509.Certificate) string {
		der, err := pkcs12.Modern2023.Encode(leafKey, first, rest, "pw")
		if err != nil {
			t.Fatal(err)
		}
		file := filepath.Join(t.TempDir(), "bundle.p12")
		if err := os.WriteFile(file, der, 0o600); err != nil {
			t.Fatal(err)
		}
		return file
	}

	t.Run("the CA written first, the leaf after it", func(t *testing.T) {
		cert, err := loadP12(write(ca, leaf), "pw")
		if err != nil {
			t.Fatal(err)
		}
		if !cert.Leaf.Equal(leaf) || len(cert.Certificate) != 2 || string(cert.Certificate[0]) != string(leaf.Raw) || string(cert.Certificate[1]) != string(ca.Raw) {
			t.Fatalf("leaf %s, chain of %d", cert.Leaf.Subject, len(cert.Certificate))
		}
	})

	t.Run("no certificate of the key", func(t *testing.T) {
		_, err := loadP12(write(ca), "pw")
		var se *SettingError
		if !errors.As(err, &se) || se.Setting != SettingP12File {
			t.Fatalf("err = %v", err)
		}
	})
}
