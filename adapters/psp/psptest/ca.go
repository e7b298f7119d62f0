package psptest

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"software.sslmate.com/src/go-pkcs12"
)

// CA is a certificate authority made for one test: its certificate is a PEM file in the test's
// temporary directory, and it issues server and client certificates written there too.
type CA struct {
	// Cert is the CA's certificate; CertFile holds it in PEM, for a trust setting.
	Cert     *x509.Certificate
	CertFile string

	key    crypto.Signer
	dir    string
	mu     sync.Mutex
	serial int64
}

// Certificate is a key and the certificate a CA issued for it, in every form a test needs.
type Certificate struct {
	TLS  tls.Certificate
	Leaf *x509.Certificate
	// CertFile and KeyFile are PEM files (the key in PKCS#8).
	CertFile string
	KeyFile  string
	// P12File is the same key and certificate as a PKCS#12 bundle (go-pkcs12's Modern2023
	// encoder, as OpenSSL 3 writes them) opened by P12Password.
	P12File     string
	P12Password string

	key crypto.Signer
	dir string
}

// Spec says what a certificate is for.
type Spec struct {
	CommonName string
	// Hosts are the DNS names and IP addresses a server certificate is valid for.
	Hosts []string
	// Server and Client set the extended key usages; a certificate may have both.
	Server, Client bool
	// NotBefore and NotAfter default to an hour ago and a day from now.
	NotBefore, NotAfter time.Time
}

// NewCA makes a CA named name, its files in a fresh temporary directory of t.
func NewCA(t testing.TB, name string) *CA {
	t.Helper()
	key := newKey(t)
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: name, Organization: []string{"pixgate tests"}},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		t.Fatalf("psptest: making the CA: %v", err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatalf("psptest: making the CA: %v", err)
	}
	ca := &CA{Cert: cert, key: key, dir: t.TempDir(), serial: 1}
	ca.CertFile = writePEM(t, ca.dir, "ca.pem", "CERTIFICATE", der)
	return ca
}

// Pool is a pool holding the CA alone.
func (ca *CA) Pool() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(ca.Cert)
	return p
}

// IssueServer issues a server certificate for hosts (names or IP addresses).
func (ca *CA) IssueServer(t testing.TB, hosts ...string) *Certificate {
	t.Helper()
	return ca.Issue(t, Spec{CommonName: hosts[0], Hosts: hosts, Server: true})
}

// IssueClient issues a client certificate named name.
func (ca *CA) IssueClient(t testing.TB, name string) *Certificate {
	t.Helper()
	return ca.Issue(t, Spec{CommonName: name, Client: true})
}

// Issue issues a certificate by spec and writes its files: PEM certificate and key, and a
// PKCS#12 bundle with a random password.
func (ca *CA) Issue(t testing.TB, spec Spec) *Certificate {
	t.Helper()
	ca.mu.Lock()
	ca.serial++
	serial := ca.serial
	ca.mu.Unlock()
	if spec.NotBefore.IsZero() {
		spec.NotBefore = time.Now().Add(-time.Hour)
	}
	if spec.NotAfter.IsZero() {
		spec.NotAfter = time.Now().Add(24 * time.Hour)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(serial),
		Subject:      pkix.Name{CommonName: spec.CommonName, Organization: []string{"pixgate tests"}},
		NotBefore:    spec.NotBefore,
		NotAfter:     spec.NotAfter,
		KeyUsage:     x509.KeyUsageDigitalSignature,
	}
	if spec.Server {
		tmpl.ExtKeyUsage = append(tmpl.ExtKeyUsage, x509.ExtKeyUsageServerAuth)
	}
	if spec.Client {
		tmpl.ExtKeyUsage = append(tmpl.ExtKeyUsage, x509.ExtKeyUsageClientAuth)
	}
	for _, h := range spec.Hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	key := newKey(t)
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, key.Public(), ca.key)
	if err != nil {
		t.Fatalf("psptest: issuing %q: %v", spec.CommonName, err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatalf("psptest: issuing %q: %v", spec.CommonName, err)
	}
	pkcs8, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatalf("psptest: issuing %q: %v", spec.CommonName, err)
	}
	base := "cert-" + big.NewInt(serial).String()
	c := &Certificate{
		TLS:      tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf},
		Leaf:     leaf,
		CertFile: writePEM(t, ca.dir, base+".pem", "CERTIFICATE", der),
		KeyFile:  writePEM(t, ca.dir, base+"-key.pem", "PRIVATE KEY", pkcs8),
		key:      key,
		dir:      ca.dir,
	}
	c.P12Password = rand.Text()
	c.P12File = c.WriteP12(t, c.P12Password)
	return c
}

// WriteP12 writes the key and certificate as a PKCS#12 bundle opened by password (which may be
// empty) and answers its path.
func (c *Certificate) WriteP12(t testing.TB, password string) string {
	t.Helper()
	der, err := pkcs12.Modern2023.Encode(c.key, c.Leaf, nil, password)
	if err != nil {
		t.Fatalf("psptest: writing the PKCS#12 bundle: %v", err)
	}
	f, err := os.CreateTemp(c.dir, "bundle-*.p12")
	if err != nil {
		t.Fatalf("psptest: writing the PKCS#12 bundle: %v", err)
	}
	defer f.Close()
	if _, err := f.Write(der); err != nil {
		t.Fatalf("psptest: writing the PKCS#12 bundle: %v", err)
	}
	return f.Name()
}

func newKey(t testing.TB) crypto.Signer {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatalf("psptest: generating a key: %v", err)
	}
	return key
}

func writePEM(t testing.TB, dir, name, kind string, der []byte) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der}), 0o600); err != nil {
		t.Fatalf("psptest: writing %s: %v", name, err)
	}
	return path
}
