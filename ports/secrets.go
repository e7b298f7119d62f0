package ports

// Secrets makes an account's secrets: the secrets of its client credentials, which it turns
// into what the store keeps (only the hash is ever stored; the secret is shown once, to whoever
// created the credential), and its webhook signing secrets.
//
// Every method is safe for concurrent use and never fails: an implementation that cannot read
// randomness panics, as crypto/rand does. Hash is deterministic for one configuration, so the
// configuration (a server key) must be the same for every instance and survive restarts, or
// every stored credential stops matching.
type Secrets interface {
	// NewSecret makes a client secret: at least 256 bits from a cryptographic random source,
	// in characters safe in forms, Basic headers and shells.
	NewSecret() string
	// Hash is what the store keeps of secret; it does not contain the secret.
	Hash(secret string) []byte
	// Matches tells, in time independent of where they differ, whether secret hashes to hash.
	Matches(secret string, hash []byte) bool
	// NewWebhookSecret makes a webhook signing secret in the Standard Webhooks format:
	// "whsec_" and the standard base64 of at least 256 random bits.
	NewWebhookSecret() string
}
