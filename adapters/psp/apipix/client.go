package apipix

import (
	"errors"
	"strings"

	"github.com/pixgate/pixgate/adapters/psp"
)

// The transport's operations, as metrics and errors name them.
const (
	OpCobPut        = "cob_put"
	OpCobGet        = "cob_get"
	OpCobPatch      = "cob_patch"
	OpDevolutionPut = "devolution_put"
	OpDevolutionGet = "devolution_get"
	OpWebhookGet    = "webhook_get"
	OpWebhookPut    = "webhook_put"
	OpPixList       = "pix_list"
)

// Config is what the adapter needs: the transport to the PSP's API Pix and pixgate's key there.
type Config struct {
	// Transport reaches the API: its APIURL is API Pix's base (for instance
	// https://pix.psp.example/v2), below which /cob/{txid}, /pix/... are joined.
	Transport psp.Config
	// Key is pixgate's PIX key at the PSP (PIXGATE_PIX_KEY): the key charges are made for
	// (chave) and whose webhook notifies the payments.
	Key string
	// Name is the acquirer's name in pixgate (each transaction's `acquirer`); empty means
	// DefaultName.
	Name string
}

// DefaultName is the acquirer's name when Config gives none.
const DefaultName = "APIPIX"

// Client is the PSP's API Pix. Build it with New; safe for concurrent use.
type Client struct {
	client *psp.Client
	key    string
	name   string
}

// New checks cfg and builds the client; it fetches no token (the first call does). Its errors
// are the transport's *psp.SettingError values (joined when several settings are at fault),
// and one for a missing key.
func New(cfg Config) (*Client, error) {
	if strings.TrimSpace(cfg.Key) == "" {
		return nil, errors.New("apipix: pixgate's PIX key is required")
	}
	c, err := psp.New(cfg.Transport)
	if err != nil {
		return nil, err
	}
	name := cfg.Name
	if name == "" {
		name = DefaultName
	}
	return &Client{client: c, key: cfg.Key, name: name}, nil
}

// Key is pixgate's PIX key at the PSP.
func (c *Client) Key() string { return c.key }

// Transport is the shared client, for an operation of API Pix this package does not wrap.
func (c *Client) Transport() *psp.Client { return c.client }

// CloseIdleConnections closes the connections kept for later calls (at shutdown).
func (c *Client) CloseIdleConnections() { c.client.CloseIdleConnections() }
