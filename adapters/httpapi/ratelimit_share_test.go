package httpapi

import (
	"context"
	"github.com/pixgate/pixgate/adapters/memory"
	"testing"
	"time"
)

// TestRateShare floods three instances sharing one registry, round-robin, for a minute of a
// stepped clock: together they allow the configured rate, not three times it; once one leaves,
// the two others take up its share at their next heartbeat.
func TestRateShare(t *testing.T) {
	clock := NewFakeClock(time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC))
	reg := memory.NewInstances()
	const rps, burst = 30, 30
	var limiters []*RateLimiter
	var shares []*RateShare
	for _, id := range []string{"a", "b", "c"} {
		l := NewRateLimiter(rps, burst, clock)
		limiters = append(limiters, l)
		shares = append(shares, NewRateShare(reg, id, clock, []*RateLimiter{l}, nil))
	}
	beat := func(ss []*RateShare, want int) {
		t.Helper()
		for _, s := range ss {
			if n, err := s.Beat(context.Background()); err != nil || n != want {
				t.Fatalf("Beat = %d, %v; want %d live instances", n, err, want)
			}
		}
	}
	for _, s := range shares { // the first two beats see fewer instances
		if _, err := s.Beat(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	beat(shares, 3)
	flood := func(ls []*RateLimiter, seconds int) int {
		allowed := 0
		for step := 0; step < seconds*100; step++ { // 10 requests per instance every 10 ms
			for range 10 {
				for _, l := range ls {
					if l.take("acct").allowed {
						allowed++
					}
				}
			}
			clock.Advance(10 * time.Millisecond)
		}
		return allowed
	}
	// A full burst, then the rate: about 30 + 60*30.
	if got, want := flood(limiters, 60), burst+60*rps; got < want*9/10 || got > want*11/10 {
		t.Errorf("three instances allowed %d in a minute, want about %d (the configured rate)", got, want)
	}
	if err := shares[2].Leave(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, s := range shares[:2] { // a minute without heartbeats: each sees itself first
		if _, err := s.Beat(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	beat(shares[:2], 2)
	if got, want := flood(limiters[:2], 60), 60*rps; got < want*9/10 || got > want*11/10 {
		t.Errorf("two instances allowed %d in a minute once the third left, want about %d", got, want)
	}
}
