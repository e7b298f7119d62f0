// Package system adapts the operating system's clock and random source to the ports that
// need them: the wall clock in UTC, random UUID v4 identifiers and capability tokens.
package system

import (
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"time"

	"github.com/pixgate/pixgate/domain"
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

// NewID returns a fresh random UUID v4 (domain.NewID, the one implementation).
func (UUIDs) NewID() string { return domain.NewID() }

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
