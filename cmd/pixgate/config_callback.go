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
	// Secret is the bearer secret of POST /acquirer/pix on the API's address; empty: that
	// route does not exist.
	Secret string
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

// settings are the PIXGATE_ACQUIRER_SECRET, _CALLBACK_* and _WEBHOOK_* variables.
func (cb *CallbackConfig) settings() []setting {
	return []setting{
		{"PIXGATE_ACQUIRER_SECRET", "", "Shared secret of POST /acquirer/pix; empty: the route does not exist.", callbackSecret(&cb.Secret)},
		{envCallbackAddr, "", "Address of the mutual-TLS listener for the PSP's callbacks: `POST /acquirer/pix` without any Authorization header, and `POST /acquirer` (the PSP's test notification, answered 200); every other path 404. A client certificate that chains to PIXGATE_ACQUIRER_CALLBACK_CLIENT_CA_FILE is required. Empty: no such listener (the bearer secret route on the main address still works). See [PSP.md, Callbacks and the webhook](PSP.md#callbacks-and-the-webhook).", optional(hostPort(&cb.Addr))},
		{envCallbackCert, "", "PEM certificate (its chain after it) the callback listener presents; required with PIXGATE_ACQUIRER_CALLBACK_ADDR.", text(&cb.CertFile)},
		{envCallbackKey, "", "PEM private key of PIXGATE_ACQUIRER_CALLBACK_TLS_CERT_FILE; required with PIXGATE_ACQUIRER_CALLBACK_ADDR.", text(&cb.KeyFile)},
		{envCallbackClientCA, "", "PEM CA certificates the PSP's client certificate must chain to (the PSP publishes them); required with PIXGATE_ACQUIRER_CALLBACK_ADDR.", text(&cb.ClientCAFile)},
		{"PIXGATE_ACQUIRER_WEBHOOK_URL", "", "https URL registered at the PSP as the webhook of PIXGATE_PIX_KEY (the PSP posts to it followed by /pix): the public address of the callback listener. Empty: PIXGATE_PUBLIC_URL followed by /acquirer.", optional(webhookURL(&cb.WebhookURL))},
		{"PIXGATE_ACQUIRER_WEBHOOK_REGISTER", "true", "With PIXGATE_ACQUIRER_API_URL, read the PSP's webhook of PIXGATE_PIX_KEY at start and every hour, and register PIXGATE_ACQUIRER_WEBHOOK_URL when it is missing or different; `false` leaves it to the PSP's portal.", boolean(&cb.Register)},
	}
}

func callbackSecret(dst *string) func(string) error {
	return func(v string) error {
		if v != "" && len(v) < 32 {
			return fmt.Errorf("must have at least 32 characters")
		}
		*dst = v
		return nil
	}
}

// webhookURL reads PIXGATE_ACQUIRER_WEBHOOK_URL, which the PSP appends /pix to: an https URL
// without a query, kept without a trailing slash.
func webhookURL(dst *string) func(string) error {
	return func(v string) error {
		if err := httpsURL(new(string))(v); err != nil {
			return err
		}
		if strings.ContainsAny(v, "?") {
			return errors.New("must have no query: the PSP appends /pix to it")
		}
		*dst = strings.TrimRight(v, "/")
		return nil
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
	if _, port, _ := net.SplitHostPort(cb.Addr); cb.Addr != "" && cb.Addr == c.Server.Addr && port != "0" {
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
