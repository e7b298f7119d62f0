// Package psp is pixgate's transport to its PSP (the bank that holds pixgate's PIX key and
// account): the one HTTP client that every PSP-facing adapter under adapters/psp shares, whether
// it speaks Banco Central's standard API Pix (charges, received PIX, devolutions, the webhook)
// or a PSP's own payout API.
//
// What it does, for every request alike:
//
//   - mutual TLS with pixgate's client certificate, from PEM files or a PKCS#12 bundle, over
//     TLS 1.2 or later, trusting the system's roots and any extra CA files;
//   - OAuth 2.0 client credentials (RFC 6749, form body, credentials in HTTP Basic; or the JSON
//     body some PSPs want), the token cached, renewed ahead of its expiry, fetched by one request
//     at a time however many calls need it, and dropped and fetched again once when the API
//     answers 401;
//   - retries with jittered backoff, honouring Retry-After, of the calls the caller marks
//     retryable, on 429, 5xx and network errors, all within the call's timeout;
//   - answers bounded in time and size, redirects never followed, and every failure reported as
//     an *Error that says whether the PSP certainly did not act (ErrRefused, ErrUnauthorized)
//     or whether it may have (ErrOutcomeUnknown), carrying the PSP's RFC 7807 problem;
//   - one Observation per call and per token fetch, for metrics.
//
// It must not know what it carries: no charge, devolution or payout, no domain type, no port and
// no other adapter. The API adapters beside it turn their operations into a Request and its
// answer into their ports' values. No client secret, token, key or password ever appears in an
// error it returns or in an observation: what the PSP echoes back is scrubbed of them too.
//
// Package psptest, beside it, is a fake PSP for tests, written from the API Pix specification.
package psp
