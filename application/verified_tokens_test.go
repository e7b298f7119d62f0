package application_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pixgate/pixgate/application"
	"github.com/pixgate/pixgate/ports"
)

// countingVerifier accepts "good" until expires and counts its verifications.
type countingVerifier struct {
	calls   atomic.Int64
	expires time.Time
}

func (v *countingVerifier) Verify(_ context.Context, raw string) (ports.TokenClaims, error) {
	v.calls.Add(1)
	if raw != "good" {
		return ports.TokenClaims{}, ports.ErrInvalidToken
	}
	return ports.TokenClaims{ClientID: "c", ExpiresAt: v.expires}, nil
}

func TestCachingVerifierVerifiesATokenOnceUntilItExpires(t *testing.T) {
	clock := newFakeClock(time.Date(2031, 1, 1, 0, 0, 0, 0, time.UTC))
	inner := &countingVerifier{expires: clock.Now().Add(time.Minute)}
	v := application.NewCachingVerifier(inner, clock, 8)
	for range 3 {
		if _, err := v.Verify(context.Background(), "good"); err != nil {
			t.Fatal(err)
		}
	}
	if n := inner.calls.Load(); n != 1 {
		t.Fatalf("%d verifications of one token, want 1", n)
	}
	for range 2 {
		if _, err := v.Verify(context.Background(), "bad"); !errors.Is(err, ports.ErrInvalidToken) {
			t.Fatalf("bad token: %v", err)
		}
	}
	if n := inner.calls.Load(); n != 3 {
		t.Fatalf("%d verifications, want a refusal verified again each time (3)", n)
	}
	clock.Advance(time.Minute)
	if _, err := v.Verify(context.Background(), "good"); err != nil || inner.calls.Load() != 4 {
		t.Fatalf("at its expiry the token was answered from the cache (%d verifications, %v)", inner.calls.Load(), err)
	}
	if application.NewCachingVerifier(inner, clock, -1) != ports.TokenVerifier(inner) {
		t.Fatal("a negative size does not turn the cache off")
	}
}
