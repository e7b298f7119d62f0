package domain

// A payment token is the capability in a transaction's hosted payment page address
// (/pay/<token>): whoever holds the link sees the page, so the token is the only secret of the
// link and must be unguessable. Tokens are made from at least 128 random bits by a port
// (ports.CapabilityGenerator) and written in the URL-safe base64 alphabet; the domain checks
// their shape, and that a transaction's token is never its id, which merchants show and log.

// Bounds of a payment token's length, in characters of [A-Za-z0-9_-]. 22 characters carry
// 132 bits, the least that holds 128 random bits.
const (
	MinPaymentTokenLength = 22
	MaxPaymentTokenLength = 64
)

// ValidPaymentToken tells whether s has the shape of a payment token. It says nothing about
// whether one exists; adapters use it to refuse malformed tokens before any look-up.
func ValidPaymentToken(s string) bool {
	if len(s) < MinPaymentTokenLength || len(s) > MaxPaymentTokenLength {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}
