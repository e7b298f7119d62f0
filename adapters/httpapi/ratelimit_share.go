package httpapi

import (
	"context"
	"math"
	"time"

	"golang.org/x/time/rate"

	"github.com/pixgate/pixgate/ports"
)

// Heartbeats of the instances sharing the rate limits (docs/API.md, Rate limits).
const (
	// HeartbeatInterval is how often an instance renews its registration and learns how
	// many instances share the limits.
	HeartbeatInterval = 2 * time.Second
	// HeartbeatTTL is how long an instance counts after its last heartbeat: a killed
	// instance's share is taken up by the others within it (and one more interval). It spans
	// five intervals so that heartbeats slowed by a busy store (each may take up to the
	// store's operation timeout) do not make live instances drop out and the others take
	// more than their share.
	HeartbeatTTL = 5 * HeartbeatInterval
)

// RateShare divides the configured rate limits among the live instances of the service:
// each instance registers in the store's registry under an id of its own, and each of its
// limiters allows its configured rate and burst divided by the number of live instances, so
// that together they allow about the configured rate, however a balancer spreads the
// requests, as long as it spreads them about evenly. Beat runs every HeartbeatInterval.
type RateShare struct {
	registry ports.InstanceRegistry
	id       string
	clock    ports.Clock
	limiters []*RateLimiter
	budgets  []*failureBudgets
}

// NewRateShare shares the limiters (nil ones are off and skipped), and the token limits (the
// client_ids' buckets, the addresses' and the client_ids' failure budgets), among the
// instances registered in registry; id is this instance's.
func NewRateShare(registry ports.InstanceRegistry, id string, clock ports.Clock, limiters []*RateLimiter, tokens *TokenLimits) *RateShare {
	s := &RateShare{registry: registry, id: id, clock: clock}
	for _, l := range limiters {
		if l != nil {
			s.limiters = append(s.limiters, l)
		}
	}
	if tokens != nil {
		if tokens.perClient != nil {
			s.limiters = append(s.limiters, tokens.perClient)
		}
		if tokens.failures != nil {
			s.budgets = append(s.budgets, tokens.failures, tokens.guesses)
		}
	}
	return s
}

// Beat sends a heartbeat and applies the share it learns. When the store does not answer the
// shares stay as they were. It answers the number of live instances (the job's count).
func (s *RateShare) Beat(ctx context.Context) (int, error) {
	n, err := s.registry.Heartbeat(ctx, s.id, s.clock.Now(), HeartbeatTTL)
	if err != nil {
		return 0, err
	}
	for _, l := range s.limiters {
		l.setShare(n)
	}
	for _, b := range s.budgets {
		b.setShare(n)
	}
	return n, nil
}

// Leave removes this instance from the registry, at shutdown.
func (s *RateShare) Leave(ctx context.Context) error { return s.registry.Leave(ctx, s.id) }

// shareOf is a 1/n share of a limit: its rate divided by n, its burst divided by n and
// rounded to the nearest whole request (at least 1).
func shareOf(rps float64, burst, n int) (rate.Limit, int) {
	n = max(1, n)
	return rate.Limit(rps / float64(n)), max(1, int(math.Round(float64(burst)/float64(n))))
}

// setShare makes the limiter allow its 1/n share of the configured rate and burst, from now
// on, in the buckets it holds and in those it makes.
func (l *RateLimiter) setShare(n int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.clock.Now()
	if now.Before(l.lastNow) {
		now = l.lastNow
	}
	l.lastNow = now
	l.rps, l.burst = shareOf(float64(l.configuredRPS), l.configuredBurst, n)
	for _, b := range l.buckets {
		b.SetLimitAt(now, l.rps)
		b.SetBurstAt(now, l.burst)
	}
}

// setShare makes every failure budget (an address's, a client_id's) its 1/n share of the
// configured one.
func (f *failureBudgets) setShare(n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.limit = f.configured / float64(max(1, n))
	for _, b := range f.budgets {
		b.left = min(b.left, f.limit)
	}
}
