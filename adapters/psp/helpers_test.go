package psp_test

import (
	"context"
	"crypto/rand"
	"net/http"
	"sync"
	"testing"

	"github.com/pixgate/pixgate/adapters/psp"
	"github.com/pixgate/pixgate/adapters/psp/psptest"
)

// observed records a client's observations.
type observed struct {
	mu   sync.Mutex
	list []psp.Observation
}

func (o *observed) add(x psp.Observation) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.list = append(o.list, x)
}

func (o *observed) all() []psp.Observation {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]psp.Observation(nil), o.list...)
}

// config is a client configuration for the fake p with PEM files, its CA trusted and the token
// URL left to its default.
func config(p *psptest.PSP) psp.Config {
	return psp.Config{
		APIURL:       p.APIURL,
		ClientID:     p.ClientID,
		ClientSecret: p.ClientSecret,
		CertFile:     p.Client.CertFile,
		KeyFile:      p.Client.KeyFile,
		CAFiles:      []string{p.CA.CertFile},
	}
}

// newClient builds a client for p from config(p) as edit changes it, with its observations.
func newClient(t *testing.T, p *psptest.PSP, edit func(*psp.Config)) (*psp.Client, *observed) {
	t.Helper()
	cfg := config(p)
	obs := &observed{}
	cfg.Observe = obs.add
	if edit != nil {
		edit(&cfg)
	}
	c, err := psp.New(cfg)
	if err != nil {
		t.Fatalf("psp.New: %v", err)
	}
	t.Cleanup(c.CloseIdleConnections)
	return c, obs
}

// txid is a fresh cob txid: 26 characters [A-Z2-7].
func txid() string { return rand.Text() }

// putCob asks p for a cob of valor through c, as the API Pix acquirer does.
func putCob(ctx context.Context, c *psp.Client, p *psptest.PSP, id, valor string) (psptest.Cob, error) {
	var cob psptest.Cob
	err := c.Do(ctx, psp.Request{
		Operation: "cob_put",
		Method:    http.MethodPut,
		Path:      []string{"cob", id},
		Body: map[string]any{
			"calendario": map[string]any{"expiracao": 3600},
			"valor":      map[string]any{"original": valor},
			"chave":      p.Chave,
		},
		Retryable: true,
	}, &cob)
	return cob, err
}

// getCob reads a cob back.
func getCob(ctx context.Context, c *psp.Client, id string) (psptest.Cob, error) {
	var cob psptest.Cob
	err := c.Do(ctx, psp.Request{Operation: "cob_get", Method: http.MethodGet, Path: []string{"cob", id}, Retryable: true}, &cob)
	return cob, err
}
