// Package psptest is a fake PSP for tests, as net/http/httptest is a fake server: a real HTTPS
// server on loopback that speaks Banco Central's API Pix as its specification (openapi.yaml of
// bacen/pix-api, 2.x) writes it, with state, and misbehaves on demand.
//
// What a test gets from New:
//
//   - a CA of its own, in the test's temporary directory, that issued the server's certificate
//     and the client certificates the server accepts (PEM files and a PKCS#12 bundle with a
//     password); a client without a certificate, or with one of another CA, fails the
//     handshake;
//   - an OAuth 2.0 token endpoint (/oauth/token) that checks the client's credentials in HTTP
//     Basic, takes the form body of RFC 6749 or the JSON body some PSPs want, and issues opaque
//     tokens that expire within seconds;
//   - API Pix under /v2: PUT, GET and PATCH /cob/{txid} (with a dynamic BR Code), GET /pix
//     (paged), GET /pix/{e2eid}, PUT and GET /pix/{e2eid}/devolucao/{id}, GET, PUT and DELETE
//     /webhook/{chave}, each requiring a valid bearer token with its scope and answering
//     RFC 7807 problems;
//   - controls: Pay a cob (and deliver the callback over mutual TLS), settle a devolution,
//     faults (Inject: 503 with Retry-After, delays, 401, garbage, oversized bodies, wrong
//     content types, hang-ups, before or after the request is carried out), callback switches
//     (drop, twice, vendor fields), and counters of requests and answers by operation.
//
// A second API (a PSP's payout API) mounts on the same server with HandleAPI, behind the same
// TLS, tokens, faults and counters, and posts its callbacks with Deliver.
//
// It is test support: production code never imports it. It shares nothing with the adapters
// it tests: it writes its own BR Codes and reads its own requests.
package psptest
