// Package pixsign signs the payload locations of dynamic PIX charges: the compact JWS (PS256)
// that a payer's bank fetches from the URL in a dynamic BR Code, and the public key set (JWKS)
// that verifies it, served at the jku address named in every JWS header (docs/API.md,
// Dynamic charges).
//
// Its key is not the key that signs API tokens: a payer's bank trusts it for charges, and in
// production its certificate must chain to ICP-Brasil. The package reads keys and certificate
// chains from PEM files, signs with the standard library's RSA-PSS, and knows nothing of
// transactions, stores or HTTP.
package pixsign
