package apipix_test

import (
	"context"
	"crypto/rand"
	"net/http"
	"testing"
	"time"

	"github.com/pixgate/pixgate/adapters/psp"
	"github.com/pixgate/pixgate/adapters/psp/apipix"
	"github.com/pixgate/pixgate/adapters/psp/psptest"
)

// newClient is the adapter as pixgate builds it: the form token request, mutual TLS with the
// fake's client certificate, trusting the fake's CA.
func newClient(t *testing.T, p *psptest.PSP, edit func(*apipix.Config)) *apipix.Client {
	t.Helper()
	cfg := apipix.Config{Key: p.Chave, Transport: psp.Config{
		APIURL: p.APIURL, ClientID: p.ClientID, ClientSecret: p.ClientSecret,
		Scopes:   []string{"cob.write", "cob.read", "pix.write", "pix.read", "webhook.write", "webhook.read"},
		CertFile: p.Client.CertFile, KeyFile: p.Client.KeyFile, CAFiles: []string{p.CA.CertFile},
		Timeout: 5 * time.Second,
	}}
	if edit != nil {
		edit(&cfg)
	}
	c, err := apipix.New(cfg)
	if err != nil {
		t.Fatalf("apipix.New: %v", err)
	}
	t.Cleanup(c.CloseIdleConnections)
	return c
}

// paidPix makes a cob of valor at the fake, through the transport as it is, pays it and
// answers the payment's end-to-end id.
func paidPix(t *testing.T, p *psptest.PSP, c *apipix.Client, valor string) string {
	t.Helper()
	txid := rand.Text() // 26 characters [A-Z2-7]
	body := map[string]any{"calendario": map[string]int{"expiracao": 3600}, "valor": map[string]string{"original": valor}, "chave": p.Chave}
	if err := c.Transport().Do(context.Background(), psp.Request{Operation: apipix.OpCobPut, Method: http.MethodPut,
		Path: []string{"cob", txid}, Body: body}, nil); err != nil {
		t.Fatalf("making the cob: %v", err)
	}
	pix, err := p.Pay(txid, psptest.Payment{})
	if err != nil {
		t.Fatalf("paying the cob: %v", err)
	}
	return pix.EndToEndID
}
