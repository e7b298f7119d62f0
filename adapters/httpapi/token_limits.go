package httpapi

import (
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"sync"
	"time"

	"github.com/pixgate/pixgate/ports"
)

// TokenLimits slow down the token endpoints (README, Rate limits): a token bucket per client_id
// caps how often one client asks for tokens, and a budget of failed requests (answers 400 or
// 401) per client address caps how fast anyone can guess secrets, while many clients behind
// one address keep getting their tokens as long as they do not fail. An address over its
// failure budget gets 429 for every token request until the budget refills, since a guess
// cannot be told from a good request before the secret is checked. A RateShare divides both
// among the live instances; without one they hold per process. Safe for concurrent use; a nil *TokenLimits limits nothing.
type TokenLimits struct {
	perClient *RateLimiter    // nil: off
	failures  *failureBudgets // nil: off
}

// NewTokenLimits allows clientRPS token requests a second with bursts of clientBurst per
// client_id (clientRPS 0 turns that limit off) and failuresPerMinute failed requests a minute
// per client address (0 turns that limit off). Both off: nil.
func NewTokenLimits(clientRPS float64, clientBurst int, failuresPerMinute int, clock ports.Clock) *TokenLimits {
	l := &TokenLimits{perClient: NewRateLimiter(clientRPS, clientBurst, clock)}
	if failuresPerMinute > 0 {
		l.failures = &failureBudgets{limit: float64(failuresPerMinute), configured: float64(failuresPerMinute), clock: clock, budgets: map[string]*failureBudget{}}
	}
	if l.perClient == nil && l.failures == nil {
		return nil
	}
	return l
}

// failureBudgets hold, per client address, how many more requests may fail before the address
// is slowed down. A request reserves one failure before it runs and gives it back when it
// does not fail, so that concurrent guesses cannot overrun the budget. Budgets refill at limit
// a minute; full ones are dropped, at most once a minute, keeping memory bounded.
type failureBudgets struct {
	limit      float64 // this instance's share of configured (see RateShare)
	configured float64
	clock      ports.Clock

	mu        sync.Mutex
	budgets   map[string]*failureBudget
	lastSweep time.Time
}

type failureBudget struct {
	left float64
	at   time.Time
}

// refill brings b up to now.
func (f *failureBudgets) refill(b *failureBudget, now time.Time) {
	b.left = min(f.limit, b.left+now.Sub(b.at).Minutes()*f.limit)
	b.at = now
}

// reserve takes one failure from addr's budget; when none is left it answers how long until
// one is.
func (f *failureBudgets) reserve(addr string) (ok bool, retryAfter time.Duration) {
	now := f.clock.Now()
	f.mu.Lock()
	defer f.mu.Unlock()
	if now.Sub(f.lastSweep) >= time.Minute {
		f.lastSweep = now
		for a, b := range f.budgets {
			if f.refill(b, now); b.left >= f.limit {
				delete(f.budgets, a)
			}
		}
	}
	b := f.budgets[addr]
	if b == nil {
		b = &failureBudget{left: f.limit, at: now}
		f.budgets[addr] = b
	}
	f.refill(b, now)
	if b.left < 1 {
		return false, time.Duration((1 - b.left) / f.limit * float64(time.Minute))
	}
	b.left--
	return true, 0
}

// giveBack returns the failure a request reserved and did not spend.
func (f *failureBudgets) giveBack(addr string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if b := f.budgets[addr]; b != nil {
		b.left = min(f.limit, b.left+1)
	}
}

// clientAddress is who the failure budget is kept for: the peer's IP address, or for IPv6 its
// /64 network (one host usually holds a whole /64). Forwarding headers are not trusted: any
// client could forge them to get a fresh budget.
func clientAddress(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return host
	}
	ip = ip.Unmap()
	if ip.Is6() {
		p, _ := ip.Prefix(64)
		return p.String()
	}
	return ip.String()
}

// slowDown answers 429 with Retry-After (whole seconds, at least 1) and the RFC 6749 body
// clients of the token endpoint understand.
func slowDown(w http.ResponseWriter, retryAfter time.Duration, description string) {
	w.Header().Set("Retry-After", strconv.Itoa(max(1, ceilSeconds(retryAfter))))
	writeTokenError(w, http.StatusTooManyRequests, "slow_down", description, false)
}

// tokenGuard wraps a token endpoint with the failure budget of the caller's address.
func (s *Server) tokenGuard(h http.HandlerFunc) http.HandlerFunc {
	l := s.deps.Auth.Limits
	if l == nil || l.failures == nil {
		return h
	}
	return func(w http.ResponseWriter, r *http.Request) {
		addr := clientAddress(r)
		ok, wait := l.failures.reserve(addr)
		if !ok {
			slowDown(w, wait, "too many failed token requests from this address; retry after the time in Retry-After")
			return
		}
		rec := &statusRecorder{ResponseWriter: w}
		h(rec, r)
		if rec.status != http.StatusBadRequest && rec.status != http.StatusUnauthorized {
			l.failures.giveBack(addr)
		}
	}
}

// allowClient spends one token request of clientID's bucket; false means the answer (429) was
// written.
func (s *Server) allowClient(w http.ResponseWriter, clientID string) bool {
	l := s.deps.Auth.Limits
	if l == nil || l.perClient == nil {
		return true
	}
	if d := l.perClient.take(clientID); !d.allowed {
		slowDown(w, d.retryAfter, "too many token requests for this client_id; reuse the token until it nearly expires")
		return false
	}
	return true
}
