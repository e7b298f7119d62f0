package ports

import "context"

// AcquirerWebhook is the acquirer's registration of the URL it posts pixgate's payment
// notifications to (API Pix's webhook of pixgate's PIX key; the acquirer posts to that URL
// followed by /pix).
//
// Both methods are safe for concurrent use. An error means the call did not end well (the
// acquirer unreachable, a refusal): nothing can be concluded about the registration, and the
// caller tries again later.
type AcquirerWebhook interface {
	// RegisteredWebhook answers the URL registered now, or "" with no error when none is.
	RegisteredWebhook(ctx context.Context) (string, error)
	// RegisterWebhook registers url, replacing any URL registered before. Registering the
	// same URL again changes nothing.
	RegisterWebhook(ctx context.Context, url string) error
}
