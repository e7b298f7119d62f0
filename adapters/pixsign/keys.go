package pixsign

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
)

// MinKeyBits is the smallest RSA key accepted for signing charges.
const MinKeyBits = 2048

// GenerateKey makes a fresh 2048-bit RSA key. A payer's bank that cached the key set will
// not know the next process's key; the caller warns about that.
func GenerateKey() (*rsa.PrivateKey, error) {
	key, err := rsa.GenerateKey(rand.Reader, MinKeyBits)
	if err != nil {
		return nil, fmt.Errorf("pixsign: generate RSA key: %w", err)
	}
	return key, nil
}

// LoadKeyFile reads the signing key: the first PEM block of path, an RSA private key of at
// least MinKeyBits in PKCS#1 ("RSA PRIVATE KEY") or PKCS#8 ("PRIVATE KEY"). Errors name the
// file, never its content.
func LoadKeyFile(path string) (*rsa.PrivateKey, error) {
	blocks, err := readPEM(path)
	if err != nil {
		return nil, err
	}
	pub, priv, err := parseKeyBlock(blocks[0])
	if err != nil {
		return nil, fmt.Errorf("pixsign: %s: %w", path, err)
	}
	if priv == nil {
		return nil, fmt.Errorf("pixsign: %s: PEM block %q holds no private key", path, blocks[0].Type)
	}
	return priv, checkBits(pub)
}

// LoadPublicKeysFile reads the earlier keys a rotation keeps in the key set: every PEM block of
// path, each an RSA private key (PKCS#1 or PKCS#8), a public key ("PUBLIC KEY", "RSA PUBLIC
// KEY") or a certificate. Only their public halves are kept.
func LoadPublicKeysFile(path string) ([]*rsa.PublicKey, error) {
	blocks, err := readPEM(path)
	if err != nil {
		return nil, err
	}
	keys := make([]*rsa.PublicKey, 0, len(blocks))
	for i, b := range blocks {
		pub, _, err := parseKeyBlock(b)
		if err != nil {
			return nil, fmt.Errorf("pixsign: %s, PEM block %d: %w", path, i+1, err)
		}
		if err := checkBits(pub); err != nil {
			return nil, fmt.Errorf("pixsign: %s, PEM block %d: %w", path, i+1, err)
		}
		keys = append(keys, pub)
	}
	return keys, nil
}

// LoadCertificateChainFile reads the signing key's certificate chain: every PEM block of path
// is a "CERTIFICATE", the key's own first, then each issuer up to (and maybe including) the
// root.
func LoadCertificateChainFile(path string) ([]*x509.Certificate, error) {
	blocks, err := readPEM(path)
	if err != nil {
		return nil, err
	}
	chain := make([]*x509.Certificate, 0, len(blocks))
	for i, b := range blocks {
		if b.Type != "CERTIFICATE" {
			return nil, fmt.Errorf("pixsign: %s, PEM block %d is %q, want CERTIFICATE", path, i+1, b.Type)
		}
		c, err := x509.ParseCertificate(b.Bytes)
		if err != nil {
			return nil, fmt.Errorf("pixsign: %s, PEM block %d: malformed certificate", path, i+1)
		}
		chain = append(chain, c)
	}
	return chain, nil
}

func readPEM(path string) ([]*pem.Block, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("pixsign: %w", err)
	}
	var blocks []*pem.Block
	for {
		var b *pem.Block
		b, data = pem.Decode(data)
		if b == nil {
			break
		}
		blocks = append(blocks, b)
	}
	if len(blocks) == 0 {
		return nil, fmt.Errorf("pixsign: %s: no PEM block found", path)
	}
	return blocks, nil
}

// parseKeyBlock reads an RSA key or certificate block; priv is nil for a public one.
func parseKeyBlock(b *pem.Block) (pub *rsa.PublicKey, priv *rsa.PrivateKey, err error) {
	var k any
	switch b.Type {
	case "RSA PRIVATE KEY":
		k, err = x509.ParsePKCS1PrivateKey(b.Bytes)
	case "PRIVATE KEY":
		k, err = x509.ParsePKCS8PrivateKey(b.Bytes)
	case "RSA PUBLIC KEY":
		k, err = x509.ParsePKCS1PublicKey(b.Bytes)
	case "PUBLIC KEY":
		k, err = x509.ParsePKIXPublicKey(b.Bytes)
	case "CERTIFICATE":
		var c *x509.Certificate
		if c, err = x509.ParseCertificate(b.Bytes); err == nil {
			k = c.PublicKey
		}
	default:
		return nil, nil, fmt.Errorf("PEM block %q is not an RSA key or a certificate", b.Type)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("malformed %s", b.Type)
	}
	switch k := k.(type) {
	case *rsa.PrivateKey:
		if k.Validate() != nil {
			return nil, nil, errors.New("RSA key fails validation")
		}
		return &k.PublicKey, k, nil
	case *rsa.PublicKey:
		return k, nil, nil
	}
	return nil, nil, fmt.Errorf("%s holds a %T, want an RSA key (charges are signed PS256)", b.Type, k)
}

func checkBits(k *rsa.PublicKey) error {
	if bits := k.N.BitLen(); bits < MinKeyBits {
		return fmt.Errorf("pixsign: RSA key of %d bits, want at least %d", bits, MinKeyBits)
	}
	return nil
}
