package system_test

import (
	"testing"

	"github.com/pixgate/pixgate/adapters/system"
	"github.com/pixgate/pixgate/domain"
)

func TestUUIDsAreDistinctVersion4(t *testing.T) {
	seen := map[string]bool{}
	for i := 0; i < 1000; i++ {
		id := system.UUIDs{}.NewID()
		if !domain.IsUUIDv4(id) {
			t.Fatalf("%q is not a UUID v4", id)
		}
		if seen[id] {
			t.Fatalf("%q repeated", id)
		}
		seen[id] = true
	}
}

func TestClockIsUTC(t *testing.T) {
	if loc := (system.Clock{}).Now().Location(); loc.String() != "UTC" {
		t.Fatalf("location = %v, want UTC", loc)
	}
}

func TestCapabilitiesAreDistinctTokensOfAtLeast128Bits(t *testing.T) {
	seen := map[string]bool{}
	for i := 0; i < 1000; i++ {
		tok := system.Capabilities{}.NewCapability()
		if !domain.ValidPaymentToken(tok) || len(tok)*6 < 128 {
			t.Fatalf("%q is not a payment token of at least 128 bits", tok)
		}
		if seen[tok] {
			t.Fatalf("%q repeated", tok)
		}
		seen[tok] = true
	}
}
