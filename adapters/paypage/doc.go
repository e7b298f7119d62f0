// Package paypage is the payer-facing payment page (docs/API.md, Payment page): GET /pay/{token}
// answers one server-rendered HTML page of a charge, GET /pay/{token}/status its state as JSON,
// and GET /pay/{token}/events the same state as server-sent events while it can still change.
//
// The token is a capability: whoever holds the link may look, so the routes need no bearer
// token, and show nothing but what a payer needs (the merchant's name, the amount, the QR code
// and its code, the expiry and the status): never payer data, never the transaction id.
//
// The page loads nothing from anywhere: its style and script (assets/) are inline, allowed by
// their SHA-256 in a Content-Security-Policy that allows nothing else (default-src 'none'), the
// QR code is a data: image, and the script talks only to its own origin.
//
// The package knows the two use cases it calls and the domain's statuses. It must not know the
// store, nor the merchant API: the API mounts a Handler on its router, and lends it its problem
// answers (Problems) so that one error table decides every status.
package paypage
