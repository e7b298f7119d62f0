package ports

import "time"

// Clock tells the time. Now is safe for concurrent use; tests hand in a clock they move
// themselves.
type Clock interface {
	Now() time.Time
}

// IDGenerator makes identifiers: random UUID v4 in lowercase (for example
// "3f0c9a52-8d1e-4b7a-9c2f-5e6d7a8b9c0d"). NewID is safe for concurrent use and never fails: an
// implementation that cannot read randomness panics, as crypto/rand does.
type IDGenerator interface {
	NewID() string
}

// CapabilityGenerator makes the secret tokens of capability URLs (a transaction's hosted
// payment page, /pay/<token>): at least 128 bits from a cryptographic random source, written
// in the URL-safe base64 alphabet without padding (domain.ValidPaymentToken). NewCapability is
// safe for concurrent use and never fails: an implementation that cannot read randomness
// panics, as crypto/rand does.
type CapabilityGenerator interface {
	NewCapability() string
}
