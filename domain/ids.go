package domain

import (
	"crypto/rand"
	"fmt"
)

// NewID returns a random UUID v4 in lowercase ("3f0c9a52-8d1e-4b7a-9c2f-5e6d7a8b9c0d"), the
// form of every id pixgate makes. It is the one implementation: transitions call it for the
// ids of the events they raise (no port reaches inside a transition, and an event id needs
// nothing but uniqueness); adapters/system serves it to the application as ports.IDGenerator,
// so that tests can hand in ids of their own; the token issuer takes its jti from it.
func NewID() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(fmt.Sprintf("crypto/rand failed: %v", err)) // never happens on a supported OS
	}
	b[6] = b[6]&0x0f | 0x40 // version 4
	b[8] = b[8]&0x3f | 0x80 // RFC 9562 variant
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}
