// Package jwtauth issues and verifies pixgate's own access tokens: JWTs signed with RS256.
//
// RS256 because verification runs on every request and RSA verification (a small public
// exponent) is the cheapest of the asymmetric choices, and every JWT and JWKS client supports
// it; the signing cost lands only on the token endpoint. Tokens carry kid (the key's RFC 7638
// thumbprint), iss, sub (the client account id), aud, iat, nbf, exp, jti, scope
// (comma-separated) and client_id. The public keys are published as a JWKS document.
//
// Verification is strict: only RS256 and a known kid, base64 segments decoded strictly (a
// signature whose padding bits were flipped is refused rather than read as the same bytes),
// and a crit header refused, since pixgate understands no JWS extension (RFC 7515 section
// 4.1.11).
//
// The package implements ports.TokenIssuer and ports.TokenVerifier. It knows nothing of
// accounts, credentials or HTTP: whether a verified token's credential is still valid is the
// application's question.
package jwtauth
