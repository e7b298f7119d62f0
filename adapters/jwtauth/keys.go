package jwtauth

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"os"
)

// MinKeyBits is the smallest RSA key accepted for signing.
const MinKeyBits = 2048

// GenerateKey makes a fresh 2048-bit RSA signing key. Tokens signed with it die with the
// process; the caller warns about that.
func GenerateKey() (*rsa.PrivateKey, error) {
	key, err := rsa.GenerateKey(rand.Reader, MinKeyBits)
	if err != nil {
		return nil, fmt.Errorf("jwtauth: generate RSA key: %w", err)
	}
	return key, nil
}

// LoadKeyFile reads an RSA private key from a PEM file, PKCS#1 ("RSA PRIVATE KEY") or PKCS#8
// ("PRIVATE KEY"). Errors name the file, never its content.
func LoadKeyFile(path string) (*rsa.PrivateKey, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("jwtauth: read signing key: %w", err)
	}
	key, err := ParsePrivateKeyPEM(data)
	if err != nil {
		return nil, fmt.Errorf("jwtauth: signing key %s: %w", path, err)
	}
	return key, nil
}

// ParsePrivateKeyPEM reads an RSA private key of at least MinKeyBits from the first PEM block
// of data, PKCS#1 or PKCS#8.
func ParsePrivateKeyPEM(data []byte) (*rsa.PrivateKey, error) {
	block, _ := pem.Decode(data)
	if block == nil {
		return nil, errors.New("no PEM block found")
	}
	var key *rsa.PrivateKey
	switch block.Type {
	case "RSA PRIVATE KEY":
		k, err := x509.ParsePKCS1PrivateKey(block.Bytes)
		if err != nil {
			return nil, errors.New("malformed PKCS#1 private key")
		}
		key = k
	case "PRIVATE KEY":
		k, err := x509.ParsePKCS8PrivateKey(block.Bytes)
		if err != nil {
			return nil, errors.New("malformed PKCS#8 private key")
		}
		rk, ok := k.(*rsa.PrivateKey)
		if !ok {
			return nil, fmt.Errorf("PKCS#8 key is a %T, want an RSA key (tokens are RS256)", k)
		}
		key = rk
	default:
		return nil, fmt.Errorf("PEM block %q, want \"RSA PRIVATE KEY\" or \"PRIVATE KEY\"", block.Type)
	}
	if bits := key.N.BitLen(); bits < MinKeyBits {
		return nil, fmt.Errorf("RSA key of %d bits, want at least %d", bits, MinKeyBits)
	}
	if err := key.Validate(); err != nil {
		return nil, errors.New("RSA key fails validation")
	}
	return key, nil
}

// Thumbprint is the RFC 7638 JWK thumbprint of an RSA public key (SHA-256, base64url without
// padding), used as the key's kid.
func Thumbprint(pub *rsa.PublicKey) string {
	// RFC 7638 section 3.2: the required members in lexicographic order, no white space.
	canonical := `{"e":"` + b64(big.NewInt(int64(pub.E)).Bytes()) + `","kty":"RSA","n":"` + b64(pub.N.Bytes()) + `"}`
	sum := sha256.Sum256([]byte(canonical))
	return b64(sum[:])
}

// jwk is one RSA public key of a JWKS document (RFC 7517, RFC 7518 section 6.3).
type jwk struct {
	Kty string `json:"kty"`
	Use string `json:"use"`
	Alg string `json:"alg"`
	Kid string `json:"kid"`
	N   string `json:"n"`
	E   string `json:"e"`
}

// jwksDocument renders the public keys as a JWKS document.
func jwksDocument(keys []*rsa.PublicKey) ([]byte, error) {
	doc := struct {
		Keys []jwk `json:"keys"`
	}{Keys: make([]jwk, 0, len(keys))}
	for _, k := range keys {
		doc.Keys = append(doc.Keys, jwk{
			Kty: "RSA", Use: "sig", Alg: algorithm, Kid: Thumbprint(k),
			N: b64(k.N.Bytes()), E: b64(big.NewInt(int64(k.E)).Bytes()),
		})
	}
	return json.Marshal(doc)
}

func b64(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }
