package domain_test

import (
	"strings"
	"testing"

	"github.com/pixgate/pixgate/domain"
)

func TestNewIDMakesDistinctLowercaseUUIDv4(t *testing.T) {
	seen := map[string]bool{}
	for range 1000 {
		id := domain.NewID()
		if !domain.IsUUIDv4(id) || strings.ToLower(id) != id {
			t.Fatalf("%q is not a lowercase UUID v4", id)
		}
		if seen[id] {
			t.Fatalf("%q repeated", id)
		}
		seen[id] = true
	}
}
