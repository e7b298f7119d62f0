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

// TokenLimits slow down the token endpoints (docs/API.md, Rate limits) without letting anyone turn
// them against a client: a client_id is no secret (it is in every token), so nothing a request
// with a wrong secret does may keep the right secret from its token.
//
//   - Per client_id, a token bucket caps how often a client obtains tokens. Only requests that
//     proved the secret spend it, so guesses cannot empty it.
//   - Per client address, a budget of failed requests (answers 400 or 401) caps how fast one
//     address can guess secrets, while many clients behind one address keep getting their
//     tokens as long as they do not fail. An address over its budget gets 429 for every token
//     request until the budget refills: its own failures spent it.
//   - Per client_id, a budget of the same size counts wrong secrets from every address. Once
//     it is spent, an address that sent a wrong secret for that client_id within the last
//     minute gets 429 without its secret being checked (so a guess it sends cannot succeed,
//     and guessing from many addresses stays as slow as the budget); any other address still
//     has its secret checked: the right one gets its token, a wrong one 429 (and that address
//     is refused unchecked from then on). Unknown client_ids are counted like known ones, so
//     that both answer alike.
//
// A RateShare divides the bucket and both budgets among the live instances; without one they
// hold per process. Which addresses guessed is each instance's own memory. Safe for concurrent
// use; a nil *TokenLimits limits nothing.
type TokenLimits struct {
	perClient *RateLimiter    // successful requests per client_id; nil: off
	failures  *failureBudgets // failed requests per client address; nil: off
	guesses   *failureBudgets // wrong secrets per client_id; nil when failures is
}

// NewTokenLimits allows clientRPS token requests a second with bursts of clientBurst per
// client_id (clientRPS 0 turns that limit off) and failuresPerMinute failed requests a minute
// per client address and wrong secrets a minute per client_id (0 turns both off). All off:
// nil.
func NewTokenLimits(clientRPS float64, clientBurst int, failuresPerMinute int, clock ports.Clock) *TokenLimits {
	l := &TokenLimits{perClient: NewRateLimiter(clientRPS, clientBurst, clock)}
	if failuresPerMinute > 0 {
		l.failures = newFailureBudgets(failuresPerMinute, clock)
		l.guesses = newFailureBudgets(failuresPerMinute, clock)
	}
	if l.perClient == nil && l.failures == nil {
		return nil
	}
	return l
}

// guessMemory is how long an instance remembers that an address sent a wrong secret for a
// client_id: the period over which the budgets refill.
const guessMemory = time.Minute

// failureBudgets hold, per key (a client address, or a client_id), how many more requests may
// fail before the key is slowed down. A request reserves one failure before it runs and gives
// it back when it does not fail, so that concurrent guesses cannot overrun the budget. Budgets
// refill at limit a minute; full ones are dropped, at most once a minute, keeping memory
// bounded: what a budget remembers only matters while it is not full.
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
	// guessed holds, for a client_id's budget, when each address last sent a wrong secret
	// for it (within guessMemory). Every entry is a failure that address's own budget let
	// through, so there are never more than the addresses' budgets allow.
	guessed map[string]time.Time
}

func newFailureBudgets(perMinute int, clock ports.Clock) *failureBudgets {
	return &failureBudgets{limit: float64(perMinute), configured: float64(perMinute), clock: clock, budgets: map[string]*failureBudget{}}
}

// refill brings b up to now.
func (f *failureBudgets) refill(b *failureBudget, now time.Time) {
	b.left = min(f.limit, b.left+now.Sub(b.at).Minutes()*f.limit)
	b.at = now
}

// budget is key's budget brought up to now, made full when there was none; f.mu is held. Once
// a minute the full budgets are dropped and the guesses older than guessMemory forgotten.
func (f *failureBudgets) budget(key string, now time.Time) *failureBudget {
	if now.Sub(f.lastSweep) >= time.Minute {
		f.lastSweep = now
		for k, b := range f.budgets {
			if f.refill(b, now); b.left >= f.limit {
				delete(f.budgets, k)
				continue
			}
			for addr, at := range b.guessed {
				if now.Sub(at) >= guessMemory {
					delete(b.guessed, addr)
				}
			}
		}
	}
	b := f.budgets[key]
	if b == nil {
		b = &failureBudget{left: f.limit, at: now}
		f.budgets[key] = b
	}
	f.refill(b, now)
	return b
}

// wait is how long until b holds one failure again.
func (f *failureBudgets) wait(b *failureBudget) time.Duration {
	return time.Duration((1 - b.left) / f.limit * float64(time.Minute))
}

// reserve takes one failure from key's budget; when none is left it answers how long until
// one is.
func (f *failureBudgets) reserve(key string) (ok bool, retryAfter time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	b := f.budget(key, f.clock.Now())
	if b.left < 1 {
		return false, f.wait(b)
	}
	b.left--
	return true, 0
}

// giveBack returns the failure a request reserved and did not spend.
func (f *failureBudgets) giveBack(key string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if b := f.budgets[key]; b != nil {
		b.left = min(f.limit, b.left+1)
	}
}

// guess is a request's standing with its client_id's budget of wrong secrets.
type guess struct {
	clientID, addr string
	reserved       bool // it holds one failure of the budget
}

// admit decides whether the secret of a request for clientID from addr is checked: when the
// budget has a failure left the request reserves it; when it has none, it is checked unless
// addr sent a wrong secret for clientID within guessMemory (then ok is false, with how long
// until the budget holds a failure again).
func (f *failureBudgets) admit(clientID, addr string) (g guess, ok bool, retryAfter time.Duration) {
	g = guess{clientID: clientID, addr: addr}
	now := f.clock.Now()
	f.mu.Lock()
	defer f.mu.Unlock()
	b := f.budget(clientID, now)
	if b.left >= 1 {
		b.left--
		g.reserved = true
		return g, true, 0
	}
	if at, guessed := b.guessed[addr]; guessed && now.Sub(at) < guessMemory {
		return g, false, f.wait(b)
	}
	return g, true, 0
}

// wrongSecret records that g's secret was wrong. over is true when g came past the spent
// budget (the answer is then 429 with retryAfter, not 401).
func (f *failureBudgets) wrongSecret(g guess) (over bool, retryAfter time.Duration) {
	now := f.clock.Now()
	f.mu.Lock()
	defer f.mu.Unlock()
	b := f.budget(g.clientID, now)
	if b.guessed == nil {
		b.guessed = map[string]time.Time{}
	}
	b.guessed[g.addr] = now
	if g.reserved {
		return false, 0
	}
	return true, f.wait(b)
}

// release ends a request whose secret was not found wrong: the failure it reserved goes back.
func (f *failureBudgets) release(g guess) {
	if g.reserved {
		f.giveBack(g.clientID)
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

// tokenAttempt is one token request as the limits see it: the client address it is counted
// for, and whether it failed in a way its answer's status does not show (a wrong secret
// answered 429 past its client_id's budget).
type tokenAttempt struct {
	addr   string
	failed bool
}

// tokenGuard wraps a token endpoint with the failure budget of the caller's address: answers
// 400 and 401, and wrong secrets answered 429, spend it.
func (s *Server) tokenGuard(h func(http.ResponseWriter, *http.Request, *tokenAttempt)) http.HandlerFunc {
	l := s.deps.Auth.Limits
	return func(w http.ResponseWriter, r *http.Request) {
		a := &tokenAttempt{addr: clientAddress(r)}
		if l == nil || l.failures == nil {
			h(w, r, a)
			return
		}
		ok, wait := l.failures.reserve(a.addr)
		if !ok {
			slowDown(w, wait, "too many failed token requests from this address; retry after the time in Retry-After")
			return
		}
		rec := &statusRecorder{ResponseWriter: w}
		h(rec, r, a)
		if !a.failed && rec.status != http.StatusBadRequest && rec.status != http.StatusUnauthorized {
			l.failures.giveBack(a.addr)
		}
	}
}

// admitGuess decides whether the secret of a request for clientID is checked; false means the
// answer (429) was written.
func (s *Server) admitGuess(w http.ResponseWriter, clientID string, a *tokenAttempt) (guess, bool) {
	l := s.deps.Auth.Limits
	if l == nil || l.guesses == nil {
		return guess{}, true
	}
	g, ok, wait := l.guesses.admit(clientID, a.addr)
	if !ok {
		slowDown(w, wait, "too many failed token requests for this client_id; retry after the time in Retry-After")
	}
	return g, ok
}

// guessChecked records what the check of g's secret found; true means the answer (429, for a
// wrong secret past the client_id's budget) was written and the caller answers nothing more.
func (s *Server) guessChecked(w http.ResponseWriter, g guess, a *tokenAttempt, wrongSecret bool) bool {
	l := s.deps.Auth.Limits
	if l == nil || l.guesses == nil {
		return false
	}
	if !wrongSecret {
		l.guesses.release(g)
		return false
	}
	over, wait := l.guesses.wrongSecret(g)
	if over {
		a.failed = true
		slowDown(w, wait, "too many failed token requests for this client_id; retry after the time in Retry-After")
	}
	return over
}

// allowClient spends one token request of clientID's bucket, for a request that proved the
// secret; false means the answer (429) was written.
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
