package main

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
)

// CallbackConfig is where the PSP's callbacks arrive and how pixgate keeps its webhook
// registered at the PSP.
type CallbackConfig struct {
	// Addr is the address of the mutual-TLS callback listener; empty: there is none.
	Addr string
	// CertFile and KeyFile are the listener's TLS certificate (PEM, the chain after the
	// leaf) and key; ClientCAFile the PEM CA certificates a PSP's client certificate must
	// chain to. All three come with Addr.
	CertFile     string
	KeyFile      string
	ClientCAFile string
	// WebhookURL is what is registered at the PSP as the webhook of PIXGATE_PIX_KEY (the PSP
	// posts to it followed by /pix); empty: PublicURL + "/acquirer".
	WebhookURL string
	// Register says whether pixgate registers WebhookURL itself (false: through the PSP's
	// portal).
	Register bool
}

// The variables of the callback listener, in the order they are checked.
const (
	envCallbackAddr     = "PIXGATE_ACQUIRER_CALLBACK_ADDR"
	envCallbackCert     = "PIXGATE_ACQUIRER_CALLBACK_TLS_CERT_FILE"
	envCallbackKey      = "PIXGATE_ACQUIRER_CALLBACK_TLS_KEY_FILE"
	envCallbackClientCA = "PIXGATE_ACQUIRER_CALLBACK_CLIENT_CA_FILE"
)

// callbackSettings are the PIXGATE_ACQUIRER_CALLBACK_* and _WEBHOOK_* variables (settings()
// lists them with the others).
func callbackSettings() []setting {
	file := func(name, doc string, field func(*CallbackConfig) *string) setting {
		return setting{name, "", doc, func(c *Config, v string) error {
			*field(&c.Callback) = v
			return nil
		}}
	}
	return []setting{
		{envCallbackAddr, "", "Address of the mutual-TLS listener for the PSP's callbacks (POST /acquirer/pix without any Authorization header, and POST /acquirer, the PSP's test notification); it requires a client certificate that chains to PIXGATE_ACQUIRER_CALLBACK_CLIENT_CA_FILE. Empty: no such listener (the bearer secret route on the main address still works).", func(c *Config, v string) error {
			if v == "" {
				return nil
			}
			return hostPort(&c.Callback.Addr, v)
		}},
		file(envCallbackCert, "PEM certificate (its chain after it) the callback listener presents; required with PIXGATE_ACQUIRER_CALLBACK_ADDR.", func(c *CallbackConfig) *string { return &c.CertFile }),
		file(envCallbackKey, "PEM private key of PIXGATE_ACQUIRER_CALLBACK_TLS_CERT_FILE; required with PIXGATE_ACQUIRER_CALLBACK_ADDR.", func(c *CallbackConfig) *string { return &c.KeyFile }),
		file(envCallbackClientCA, "PEM CA certificates the PSP's client certificate must chain to (the PSP publishes them); required with PIXGATE_ACQUIRER_CALLBACK_ADDR.", func(c *CallbackConfig) *string { return &c.ClientCAFile }),
		{"PIXGATE_ACQUIRER_WEBHOOK_URL", "", "https URL registered at the PSP as the webhook of PIXGATE_PIX_KEY (the PSP posts to it followed by /pix): the public address of the callback listener. Empty: PIXGATE_PUBLIC_URL followed by /acquirer.", func(c *Config, v string) error {
			if v == "" {
				return nil
			}
			if err := httpsURL(v); err != nil {
				return err
			}
			if strings.ContainsAny(v, "?") {
				return errors.New("must have no query: the PSP appends /pix to it")
			}
			c.Callback.WebhookURL = strings.TrimRight(v, "/")
			return nil
		}},
		{"PIXGATE_ACQUIRER_WEBHOOK_REGISTER", "true", "With PIXGATE_ACQUIRER_API_URL, read the PSP's webhook of PIXGATE_PIX_KEY at start and every hour, and register PIXGATE_ACQUIRER_WEBHOOK_URL when it is missing or different; false leaves it to the PSP's portal.", boolSetting(func(c *Config) *bool { return &c.Callback.Register })},
	}
}

// callbackConfig checks that the listener's settings come together: an address with all three
// files, or none of them. The files are read when the listener is built (callbackTLS).
func callbackConfig(c *Config) error {
	cb := c.Callback
	files := []struct{ name, value string }{
		{envCallbackCert, cb.CertFile}, {envCallbackKey, cb.KeyFile}, {envCallbackClientCA, cb.ClientCAFile},
	}
	for _, f := range files {
		switch {
		case cb.Addr != "" && f.value == "":
			return fmt.Errorf("%s: required with %s", f.name, envCallbackAddr)
		case cb.Addr == "" && f.value != "":
			return fmt.Errorf("%s: set without %s", f.name, envCallbackAddr)
		}
	}
	if _, port, _ := net.SplitHostPort(cb.Addr); cb.Addr != "" && cb.Addr == c.Addr && port != "0" {
		return fmt.Errorf("%s: must differ from PIXGATE_ADDR", envCallbackAddr)
	}
	return nil
}

// callbackTLS reads the listener's certificate, key and client CAs: TLS 1.2 or later, and a
// client certificate chained to those CAs required from every client. Each error names the
// variable whose file is missing, unreadable or wrong, and never holds a key.
func callbackTLS(cb CallbackConfig) (*tls.Config, error) {
	certPEM, err := os.ReadFile(cb.CertFile)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", envCallbackCert, unwrapPath(err))
	}
	keyPEM, err := os.ReadFile(cb.KeyFile)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", envCallbackKey, unwrapPath(err))
	}
	caPEM, err := os.ReadFile(cb.ClientCAFile)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", envCallbackClientCA, unwrapPath(err))
	}
	if !hasPEM(certPEM, "CERTIFICATE") {
		return nil, fmt.Errorf("%s: no PEM certificate in %s", envCallbackCert, cb.CertFile)
	}
	if !hasPEM(keyPEM, "PRIVATE KEY") {
		return nil, fmt.Errorf("%s: no PEM private key in %s", envCallbackKey, cb.KeyFile)
	}
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		// tls's errors name the mismatch or the parse failure, never the key's bytes.
		return nil, fmt.Errorf("%s: does not go with %s: %v", envCallbackKey, envCallbackCert, err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		return nil, fmt.Errorf("%s: no PEM CA certificate in %s", envCallbackClientCA, cb.ClientCAFile)
	}
	return &tls.Config{
		MinVersion:   tls.VersionTLS12,
		Certificates: []tls.Certificate{pair},
		ClientAuth:   tls.RequireAndVerifyClientCert,
		ClientCAs:    pool,
	}, nil
}

// hasPEM tells whether raw holds a PEM block whose type ends with kind ("PRIVATE KEY" takes
// the PKCS#8, PKCS#1 and SEC 1 forms).
func hasPEM(raw []byte, kind string) bool {
	return strings.Contains(string(raw), "-----BEGIN ") && strings.Contains(string(raw), kind+"-----")
}

// unwrapPath keeps an *os.PathError's words (the path and the cause), the only thing a
// failed read has to say.
func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("reading %s: %w", pe.Path, pe.Err)
	}
	return err
}
