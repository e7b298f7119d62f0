package httpapi

import (
	"math"
	"net/http"
	"strconv"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/pixgate/pixgate/ports"
)

// RateLimiter limits requests per client account with a token bucket per account (docs/API.md,
// Rate limits). A RateShare divides the limit among the live instances of the service;
// without one the limit holds per process. Buckets of idle accounts are dropped once they are full again
// (a new bucket starts full, so dropping a full one changes nothing), keeping memory bounded
// however many accounts come and go. Safe for concurrent use.
type RateLimiter struct {
	// configuredRPS and configuredBurst are the limit of the whole service; rps and burst are
	// this instance's share of it (all of it until a RateShare says otherwise).
	configuredRPS   rate.Limit
	configuredBurst int
	rps             rate.Limit
	burst           int
	clock           ports.Clock

	mu        sync.Mutex
	buckets   map[string]*rate.Limiter
	lastSweep time.Time
	lastNow   time.Time // the latest time given to a bucket
}

// NewRateLimiter allows rps requests a second with bursts of burst per account; rps 0 turns
// limiting off (nil limiter).
func NewRateLimiter(rps float64, burst int, clock ports.Clock) *RateLimiter {
	if rps <= 0 {
		return nil
	}
	if burst < 1 {
		burst = 1
	}
	return &RateLimiter{configuredRPS: rate.Limit(rps), configuredBurst: burst, rps: rate.Limit(rps), burst: burst,
		clock: clock, buckets: map[string]*rate.Limiter{}}
}

// decision is the outcome of one request against its account's bucket.
type decision struct {
	allowed    bool
	limit      int
	remaining  int
	reset      time.Duration // until the bucket is full again
	retryAfter time.Duration // until the next request would pass, when refused
}

// take spends a token of account's bucket, when one is there.
func (l *RateLimiter) take(account string) decision {
	l.mu.Lock()
	defer l.mu.Unlock()
	// Read under the lock, and never before the last time a bucket saw: a bucket given an
	// earlier time than its last moves back and counts the gap twice (a request that waited
	// for the lock would refill its bucket a little).
	now := l.clock.Now()
	if now.Before(l.lastNow) {
		now = l.lastNow
	}
	l.lastNow = now
	l.sweep(now)
	b := l.buckets[account]
	if b == nil {
		b = rate.NewLimiter(l.rps, l.burst)
		l.buckets[account] = b
	}
	d := decision{limit: l.burst, allowed: b.AllowN(now, 1)}
	tokens := b.TokensAt(now)
	d.remaining = int(math.Max(0, math.Floor(tokens)))
	d.reset = time.Duration((float64(l.burst) - tokens) / float64(l.rps) * float64(time.Second))
	if !d.allowed {
		d.retryAfter = time.Duration((1 - tokens) / float64(l.rps) * float64(time.Second))
	}
	return d
}

// sweep drops the full buckets, at most once a minute.
func (l *RateLimiter) sweep(now time.Time) {
	if now.Sub(l.lastSweep) < time.Minute {
		return
	}
	l.lastSweep = now
	for account, b := range l.buckets {
		if b.TokensAt(now) >= float64(l.burst) {
			delete(l.buckets, account)
		}
	}
}

// Allow spends a token of key's bucket: ok, or how long until the next request would pass. A
// nil limiter allows every request. It serves another adapter's routes (the payment page's).
func (l *RateLimiter) Allow(key string) (ok bool, retryAfter time.Duration) {
	if l == nil {
		return true, 0
	}
	d := l.take(key)
	return d.allowed, d.retryAfter
}

// size is how many accounts have a bucket now (tests watch eviction with it).
func (l *RateLimiter) size() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.buckets)
}

func ceilSeconds(d time.Duration) int {
	s := int(math.Ceil(d.Seconds()))
	if s < 0 {
		return 0
	}
	return s
}

// limited wraps an authenticated handler: every answer carries the RateLimit-* headers, and a
// request over the limit answers 429 rate_limited with Retry-After (whole seconds, at least 1).
func (s *Server) limited(h http.HandlerFunc) http.HandlerFunc {
	if s.deps.RateLimiter == nil {
		return h
	}
	return func(w http.ResponseWriter, r *http.Request) {
		d := s.deps.RateLimiter.take(principalFrom(r.Context()).AccountID)
		w.Header().Set("RateLimit-Limit", strconv.Itoa(d.limit))
		w.Header().Set("RateLimit-Remaining", strconv.Itoa(d.remaining))
		w.Header().Set("RateLimit-Reset", strconv.Itoa(ceilSeconds(d.reset)))
		if !d.allowed {
			w.Header().Set("Retry-After", strconv.Itoa(max(1, ceilSeconds(d.retryAfter))))
			writeProblem(w, r, http.StatusTooManyRequests, "rate_limited", "too many requests; retry after the time in Retry-After", nil)
			return
		}
		h(w, r)
	}
}
