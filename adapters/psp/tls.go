package psp

import (
	"crypto"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"

	"software.sslmate.com/src/go-pkcs12"
)

// tlsConfig is the client side of mutual TLS: pixgate's certificate, the system's roots and
// the extra CAs, TLS 1.2 or later.
func tlsConfig(s settings, now time.Time) (*tls.Config, error) {
	var cert tls.Certificate
	var err error
	if s.P12File != "" {
		cert, err = loadP12(s.P12File, s.P12Password)
	} else {
		cert, err = loadPEM(s.CertFile, s.KeyFile)
	}
	if err != nil {
		return nil, err
	}
	if err := checkValidity(cert.Leaf, now, s); err != nil {
		return nil, err
	}
	roots, err := x509.SystemCertPool()
	if err != nil {
		roots = x509.NewCertPool()
	}
	for _, file := range s.CAFiles {
		if err := appendCAFile(roots, file); err != nil {
			return nil, err
		}
	}
	return &tls.Config{
		MinVersion: tls.VersionTLS12,
		RootCAs:    roots,
		// Always present the certificate. With Certificates, Go sends one only when its issuer
		// is among the CAs the server lists in its request, and a PSP that lists only the root
		// of a chain pixgate holds an intermediate of would get none and refuse the handshake.
		GetClientCertificate: func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return &cert, nil },
	}, nil
}

// loadPEM reads a certificate (and its chain) and its private key from PEM files.
func loadPEM(certFile, keyFile string) (tls.Certificate, error) {
	certPEM, err := readFile(certFile)
	if err != nil {
		return tls.Certificate{}, &SettingError{Setting: SettingCertFile, Err: err}
	}
	if _, err := firstCertificate(certPEM); err != nil {
		return tls.Certificate{}, &SettingError{Setting: SettingCertFile, Err: err}
	}
	keyPEM, err := readFile(keyFile)
	if err != nil {
		return tls.Certificate{}, &SettingError{Setting: SettingKeyFile, Err: err}
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		// The certificate parsed above, so what fails is the key or the pair: the key file is
		// the setting at fault. crypto/tls's messages name no key material.
		return tls.Certificate{}, &SettingError{Setting: SettingKeyFile, Err: fmt.Errorf("does not hold the certificate's private key: %w", err)}
	}
	return cert, nil
}

// loadP12 reads a PKCS#12 bundle: one private key, its certificate and, maybe, its chain.
func loadP12(file, password string) (tls.Certificate, error) {
	raw, err := readFile(file)
	if err != nil {
		return tls.Certificate{}, &SettingError{Setting: SettingP12File, Err: err}
	}
	key, leaf, chain, err := pkcs12.DecodeChain(raw, password)
	if errors.Is(err, pkcs12.ErrIncorrectPassword) {
		return tls.Certificate{}, settingErr(SettingP12Password, "does not open the PKCS#12 file")
	}
	if err != nil {
		return tls.Certificate{}, settingErr(SettingP12File, "is not a PKCS#12 bundle of one private key and its certificate: %v", err)
	}
	signer, ok := key.(crypto.Signer)
	if !ok {
		return tls.Certificate{}, settingErr(SettingP12File, "holds a private key of an unsupported type %T", key)
	}
	// DecodeChain takes the first certificate for the key's; bundles are not always written
	// in that order, so the leaf is the one whose public key is the key's.
	certs := append([]*x509.Certificate{leaf}, chain...)
	at := -1
	for i, c := range certs {
		if pub, ok := c.PublicKey.(interface{ Equal(crypto.PublicKey) bool }); ok && pub.Equal(signer.Public()) {
			at = i
			break
		}
	}
	if at < 0 {
		return tls.Certificate{}, settingErr(SettingP12File, "holds no certificate for its private key")
	}
	certs[0], certs[at] = certs[at], certs[0]
	out := tls.Certificate{PrivateKey: signer, Leaf: certs[0]}
	for _, c := range certs {
		out.Certificate = append(out.Certificate, c.Raw)
	}
	return out, nil
}

// checkValidity refuses a certificate that is expired or not valid yet: the PSP would refuse
// every handshake, and the start is the place to say why.
func checkValidity(leaf *x509.Certificate, now time.Time, s settings) error {
	setting := SettingCertFile
	if s.P12File != "" {
		setting = SettingP12File
	}
	if leaf == nil {
		return settingErr(setting, "holds no certificate")
	}
	if now.Before(leaf.NotBefore) {
		return settingErr(setting, "the certificate is valid only from %s", leaf.NotBefore.UTC().Format(time.RFC3339))
	}
	if now.After(leaf.NotAfter) {
		return settingErr(setting, "the certificate expired at %s", leaf.NotAfter.UTC().Format(time.RFC3339))
	}
	return nil
}

// firstCertificate parses the first CERTIFICATE block of a PEM file.
func firstCertificate(raw []byte) (*x509.Certificate, error) {
	for block, rest := pem.Decode(raw); block != nil; block, rest = pem.Decode(rest) {
		if block.Type == "CERTIFICATE" {
			c, err := x509.ParseCertificate(block.Bytes)
			if err != nil {
				return nil, fmt.Errorf("holds a certificate that does not parse: %w", err)
			}
			return c, nil
		}
	}
	return nil, errors.New("holds no PEM certificate")
}

// appendCAFile adds the certificates of a PEM file to pool; a file without one is an error.
func appendCAFile(pool *x509.CertPool, file string) error {
	raw, err := readFile(file)
	if err != nil {
		return &SettingError{Setting: SettingCAFile, Err: err}
	}
	n := 0
	for block, rest := pem.Decode(raw); block != nil; block, rest = pem.Decode(rest) {
		if block.Type != "CERTIFICATE" {
			continue
		}
		c, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			return settingErr(SettingCAFile, "%s holds a certificate that does not parse: %v", file, err)
		}
		pool.AddCert(c)
		n++
	}
	if n == 0 {
		return settingErr(SettingCAFile, "%s holds no PEM certificate", file)
	}
	return nil
}

// readFile reads a file, naming it in its error once (os's errors name it already).
func readFile(name string) ([]byte, error) {
	raw, err := os.ReadFile(name)
	var pathErr *fs.PathError
	if errors.As(err, &pathErr) {
		return nil, fmt.Errorf("cannot read %s: %w", name, pathErr.Err)
	}
	if err != nil {
		return nil, fmt.Errorf("cannot read %s: %w", name, err)
	}
	return raw, nil
}
