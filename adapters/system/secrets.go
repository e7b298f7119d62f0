package system

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"slices"

	"github.com/pixgate/pixgate/ports"
)

// MinSecretKeyBytes is the shortest key NewClientSecrets accepts.
const MinSecretKeyBytes = 32

// ClientSecrets makes client secrets (32 random bytes, base64url without padding: 43
// characters) and webhook signing secrets, and hashes client secrets with HMAC-SHA256 under the server's key. A keyed hash rather
// than a password hash because the secrets are 32 random bytes (no dictionary to guard
// against) and the token endpoint must stay cheap; the key keeps a leaked store from being
// checked offline.
type ClientSecrets struct {
	key []byte
}

var _ ports.Secrets = (*ClientSecrets)(nil)

// NewClientSecrets returns the secrets keyed with key (at least MinSecretKeyBytes).
func NewClientSecrets(key []byte) (*ClientSecrets, error) {
	if len(key) < MinSecretKeyBytes {
		return nil, fmt.Errorf("secret hashing key must have at least %d bytes, got %d", MinSecretKeyBytes, len(key))
	}
	return &ClientSecrets{key: slices.Clone(key)}, nil
}

// NewSecret returns a fresh client secret.
func (*ClientSecrets) NewSecret() string {
	var b [32]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails; it panics instead
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// NewWebhookSecret returns a fresh webhook signing secret: "whsec_" and the standard base64 of
// 32 random bytes.
func (*ClientSecrets) NewWebhookSecret() string {
	var b [32]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails; it panics instead
	return "whsec_" + base64.StdEncoding.EncodeToString(b[:])
}

// Hash is the keyed hash of secret.
func (s *ClientSecrets) Hash(secret string) []byte {
	m := hmac.New(sha256.New, s.key)
	m.Write([]byte(secret))
	return m.Sum(nil)
}

// Matches tells, in time independent of where they differ, whether secret hashes to hash.
func (s *ClientSecrets) Matches(secret string, hash []byte) bool {
	return hmac.Equal(s.Hash(secret), hash)
}
