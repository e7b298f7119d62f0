// Package apipix is pixgate's production acquirer: a client of Banco Central's standard API Pix
// (openapi.yaml of bacen/pix-api, 2.x), which every PSP that holds a PIX key for pixgate
// exposes, on the shared PSP transport (adapters/psp: OAuth 2.0 client credentials over mutual
// TLS, the token cached, retries of what may be repeated, bounded answers).
//
// What pixgate asks of the API, each operation in a file of its own:
//
//   - devolutions (devolution.go): PUT /pix/{e2eid}/devolucao/{id} returns a payment, or part
//     of it, to its payer (ports.Acquirer);
//   - their read back (devolution_read.go): GET /pix/{e2eid}/devolucao/{id}, and the transport's
//     errors as the port's (a refusal, a devolution the PSP never made, an unknown outcome).
//
// Other operations (charges, the webhook, the PIX received) join the Client in files of their
// own; each states its port at compile time. Transport answers the shared client for an
// operation this package does not wrap yet, and the transport's Observe hook
// (psp.Config.Observe) counts every call for metrics, under the operation names below.
//
// The package must not know the application, the domain's state machines or any other adapter
// but the transport. No client secret, token, key or password ever reaches an error it returns.
// Package psptest (adapters/psp/psptest) is the fake PSP its tests run against.
package apipix
