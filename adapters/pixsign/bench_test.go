package pixsign_test

import (
	"context"
	"testing"

	"github.com/pixgate/pixgate/adapters/pixsign"
)

// BenchmarkSign times one payload location's JWS with a 2048-bit key: what the first fetch of
// a charge after a change adds to a fetch whose answer is kept (docs/PERFORMANCE.md).
//
//	go test -run '^$' -bench Sign -benchmem ./adapters/pixsign
func BenchmarkSign(b *testing.B) {
	s, err := pixsign.New(pixsign.Config{Key: keys[0], KeySetURL: keySetURL})
	if err != nil {
		b.Fatal(err)
	}
	p := samplePayload()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.Sign(context.Background(), p); err != nil {
			b.Fatal(err)
		}
	}
}
