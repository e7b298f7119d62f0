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

// WebhookVerdict is what a receiver's answer means for the delivery, as the sender reads it.
type WebhookVerdict int

const (
	// WebhookRetry: the receiver did not take the event (any status but a 2xx and 410, a 3xx
	// included); the delivery is tried again on its schedule. The zero value.
	WebhookRetry WebhookVerdict = iota
	// WebhookDelivered: the receiver took the event (a 2xx).
	WebhookDelivered
	// WebhookGone: the receiver says the endpoint is gone for good (410 Gone); no more attempts.
	WebhookGone
)

// WebhookResponse is what a receiver answered.
type WebhookResponse struct {
	StatusCode int
	// Verdict is what StatusCode means for the delivery.
	Verdict WebhookVerdict
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
// are not followed), is a WebhookResponse with its verdict and a nil error; when to try again
// is the caller's business.
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
