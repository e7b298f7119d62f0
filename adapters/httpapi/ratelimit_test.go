package httpapi

import (
	"fmt"
	"testing"
	"time"
)

func TestRateLimiter(t *testing.T) {
	newLimiter := func() (*RateLimiter, *FakeClock) {
		clock := NewFakeClock(time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC))
		return NewRateLimiter(50, 100, clock), clock
	}
	t.Run("a burst of 100 passes and the 101st is refused", func(t *testing.T) {
		l, _ := newLimiter()
		for i := 0; i < 100; i++ {
			if d := l.take("acct"); !d.allowed || d.remaining != 99-i || d.limit != 100 {
				t.Fatalf("request %d: %+v", i+1, d)
			}
		}
		d := l.take("acct")
		if d.allowed || d.remaining != 0 {
			t.Fatalf("101st: %+v", d)
		}
		// At 50 a second the next token comes in 20 ms: Retry-After rounds up to 1 s.
		if d.retryAfter <= 0 || d.retryAfter > 20*time.Millisecond || max(1, ceilSeconds(d.retryAfter)) != 1 {
			t.Fatalf("retryAfter = %v", d.retryAfter)
		}
		if ceilSeconds(d.reset) != 2 {
			t.Fatalf("reset = %v, want 2 s to refill 100 tokens at 50/s", d.reset)
		}
	})
	t.Run("tokens refill at the configured rate", func(t *testing.T) {
		l, clock := newLimiter()
		for i := 0; i < 100; i++ {
			l.take("acct")
		}
		clock.Advance(100 * time.Millisecond) // 5 tokens
		for i := 0; i < 5; i++ {
			if !l.take("acct").allowed {
				t.Fatalf("refilled request %d refused", i+1)
			}
		}
		if l.take("acct").allowed {
			t.Fatal("a sixth request passed after 100 ms")
		}
	})
	t.Run("one account's flood never limits another", func(t *testing.T) {
		l, _ := newLimiter()
		for i := 0; i < 150; i++ {
			l.take("flooder")
		}
		if d := l.take("quiet"); !d.allowed || d.remaining != 99 {
			t.Fatalf("quiet account: %+v", d)
		}
	})
	t.Run("idle accounts' buckets are evicted once full", func(t *testing.T) {
		l, clock := newLimiter()
		for i := 0; i < 1000; i++ {
			l.take(fmt.Sprint("acct-", i))
		}
		if l.size() != 1000 {
			t.Fatalf("size = %d", l.size())
		}
		clock.Advance(2 * time.Minute)
		l.take("newcomer")
		if l.size() != 1 {
			t.Fatalf("after idling, size = %d, want only the newcomer", l.size())
		}
	})
	t.Run("a bucket still refilling is kept", func(t *testing.T) {
		clock := NewFakeClock(time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC))
		l := NewRateLimiter(0.001, 100, clock) // so slow that minutes cannot refill it
		for i := 0; i < 100; i++ {
			l.take("busy")
		}
		clock.Advance(2 * time.Minute)
		l.take("other")
		if l.size() != 2 {
			t.Fatalf("size = %d, want the busy bucket kept", l.size())
		}
	})
	t.Run("rate 0 turns limiting off", func(t *testing.T) {
		if NewRateLimiter(0, 100, &FakeClock{}) != nil {
			t.Fatal("want no limiter")
		}
	})
}
