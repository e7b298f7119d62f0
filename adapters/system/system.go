// Package system adapts the operating system's clock and random source to the ports that
// need them: the wall clock in UTC, random UUID v4 identifiers and capability tokens.
package system

import (
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"time"

	"github.com/pixgate/pixgate/ports"
)

// Clock is the wall clock, in UTC.
type Clock struct{}

var _ ports.Clock = Clock{}

// Now returns the current time in UTC.
func (Clock) Now() time.Time { return time.Now().UTC() }

// UUIDs makes random UUID v4 identifiers from crypto/rand, in lowercase.
type UUIDs struct{}

var _ ports.IDGenerator = UUIDs{}

// NewID returns a fresh random UUID v4.
func (UUIDs) NewID() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(fmt.Sprintf("crypto/rand failed: %v", err)) // never happens on a supported OS
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// Capabilities makes the tokens of capability URLs: 24 bytes (192 bits) from crypto/rand,
// 32 characters of URL-safe base64.
type Capabilities struct{}

var _ ports.CapabilityGenerator = Capabilities{}

// NewCapability returns a fresh random token.
func (Capabilities) NewCapability() string {
	var b [24]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(fmt.Sprintf("crypto/rand failed: %v", err)) // never happens on a supported OS
	}
	return base64.RawURLEncoding.EncodeToString(b[:])
}
