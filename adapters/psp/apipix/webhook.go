package apipix

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/pixgate/pixgate/adapters/psp"
	"github.com/pixgate/pixgate/ports"
)

var _ ports.AcquirerWebhook = (*Client)(nil)

// webhookBody is API Pix's webhook of a key, as PUT takes it and GET answers it; members not
// named here are ignored (GET also answers chave and criacao).
type webhookBody struct {
	WebhookURL string `json:"webhookUrl"`
}

// RegisteredWebhook reads GET /webhook/{chave} of pixgate's key: the URL the PSP posts the
// key's PIX to (followed by /pix), or "" when the PSP answers 404 (none is registered). The
// read is repeated on 429, 5xx and network errors within the transport's timeout.
func (c *Client) RegisteredWebhook(ctx context.Context) (string, error) {
	var ans webhookBody
	err := c.client.Do(ctx, psp.Request{
		Operation: OpWebhookGet, Method: http.MethodGet, Path: []string{"webhook", c.key}, Retryable: true,
	}, &ans)
	switch {
	case errors.Is(err, psp.ErrNotFound):
		return "", nil
	case err != nil:
		return "", fmt.Errorf("apipix: reading the webhook of pixgate's key: %w", err)
	}
	return clean(ans.WebhookURL), nil
}

// RegisterWebhook sends PUT /webhook/{chave} {"webhookUrl": url} for pixgate's key, which
// replaces any URL registered before. Registering a URL twice leaves one registration, so the
// PUT is repeated on 429, 5xx and network errors within the transport's timeout. A PSP that
// first probes the URL (a POST to it) refuses the registration when the probe fails.
func (c *Client) RegisterWebhook(ctx context.Context, url string) error {
	err := c.client.Do(ctx, psp.Request{
		Operation: OpWebhookPut, Method: http.MethodPut, Path: []string{"webhook", c.key},
		Body: webhookBody{WebhookURL: url}, Retryable: true,
	}, nil)
	if err != nil {
		return fmt.Errorf("apipix: registering the webhook of pixgate's key: %w", err)
	}
	return nil
}
