package ports

import (
	"context"
	"errors"
	"time"

	"github.com/pixgate/pixgate/domain"
)

// WebhookMessage is one signed delivery attempt of one event.
type WebhookMessage struct {
	URL       string    // the resource's webhookUrl (https)
	EventID   string    // sent as webhook-id, the same on every attempt of the event
	Timestamp time.Time // this attempt's time, sent as webhook-timestamp in Unix seconds
	Body      []byte    // sent and signed exactly as given
	Secrets   []string  // the account's signing secrets ("whsec_<base64>"): one signature each
}

// WebhookResponse is what a receiver answered.
type WebhookResponse struct {
	StatusCode int
	// RetryAfter is the delay the receiver asked for in Retry-After (seconds or an HTTP date),
	// zero when it asked for none or wrote something unreadable.
	RetryAfter time.Duration
}

// ErrWebhookAddressRefused: the webhook's host resolved only to addresses the sender refuses
// to reach (loopback, private, link-local, shared, multicast, unspecified, ...), so nothing was
// sent. Test it with errors.Is.
var ErrWebhookAddressRefused = errors.New("webhook destination address refused")

// WebhookSender makes one HTTP delivery attempt of a notification, signed per Standard Webhooks.
//
// Send is safe for concurrent use. Any answer, whatever its status (a 3xx included: redirects
// are not followed), is a WebhookResponse and a nil error; judging it is the caller's business.
// No answer is an error: ErrWebhookAddressRefused when the destination is refused, the
// context's error when ctx ended first, otherwise a transport failure (name resolution,
// connection, TLS, timeout, connection closed). Error texts are recorded with the attempt and
// shown to the merchant, so they never carry a secret or an internal detail. A secret that is
// not "whsec_" followed by base64 is an error and nothing is sent.
type WebhookSender interface {
	Send(ctx context.Context, m WebhookMessage) (WebhookResponse, error)
}

// EventEncoder writes the body of an event's notification: {"id", "type", "createdAt", "data"},
// data being the resource exactly as its GET returns it, taken from the event's snapshot. The
// HTTP adapter implements it, since it owns the resources' JSON.
//
// EncodeEvent is safe for concurrent use and pure (no I/O, hence no context): the same event
// always encodes to the same bytes, so every attempt sends the same body. An error means the
// event cannot be encoded at all (a snapshot missing), a bug rather than a passing condition.
type EventEncoder interface {
	EncodeEvent(e domain.Event) ([]byte, error)
}
