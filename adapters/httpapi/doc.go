// Package httpapi is pixgate's REST adapter (docs/API.md, Extensions): gorilla/mux routes for the
// core endpoints and pixgate's extensions (refunds, withdrawals, the balance and its statement), strict JSON decoding, request validation with
// ozzo-validation, RFC 9457 problem answers, the response shapes (masking included) and the
// middleware every request passes (request id, body limit, panic recovery, logging,
// authentication and scopes). It routes the payer-facing page's addresses (/pay/{token}) to a
// PaymentPage that cmd builds (adapters/paypage), and lends it its problem answers (Problems).
//
// Handlers are thin: decode, validate, call the use case, map the error through the one error
// table (errors.go), encode. The package knows the application's use cases and the domain; it
// must not know which store, emitter or token signer stands behind them.
package httpapi
