// Package webhook sends pixgate's webhook notifications over HTTPS: one POST per attempt,
// signed per Standard Webhooks (webhook-id, webhook-timestamp, webhook-signature), with a
// 10 s timeout, no redirect followed and no proxy.
//
// The sender guards against server-side request forgery where it cannot be fooled: in the
// dialer, on the address actually connected to. It resolves the host itself and connects only
// to addresses it accepts (so a DNS answer that changes between a check and the connection,
// DNS rebinding, cannot slip through), and the connecting socket checks its address once more.
// Loopback, private, link-local, shared, multicast, unspecified, reserved and documentation
// ranges are refused, in IPv4, IPv6 and the IPv6 forms that embed an IPv4 address, unless
// Options.AllowPrivate is set for development and tests.
//
// The package implements ports.WebhookSender. It knows nothing of events, accounts, outboxes or
// retries: which body to send, with which secrets, and what to do with the answer are the
// application's business.
package webhook
