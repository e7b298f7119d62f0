package httpapi_test

// The hand-written fakes of the ports the black-box tests of this package need, one of each
// port: a clock the test moves, ids, a token issuer and verifier sharing a table, a token
// granter that fails, and stand-ins for the ports a test does not exercise. The account store
// is adapters/memory's.

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"sync"
	"time"

	"github.com/pixgate/pixgate/adapters/httpapi"
	"github.com/pixgate/pixgate/application"
	"github.com/pixgate/pixgate/domain"
	"github.com/pixgate/pixgate/ports"
)

// Each fake is the port it stands for.
var (
	_ ports.Clock          = (*fakeClock)(nil)
	_ ports.IDGenerator    = fakeIDs{}
	_ ports.TokenIssuer    = (*fakeTokens)(nil)
	_ ports.TokenVerifier  = (*fakeTokens)(nil)
	_ httpapi.TokenGranter = failingGranter{}
)

// fakeClock is a clock that moves only when the test advances it: the internal tests' one
// (httpapi.FakeClock, fakes_internal_test.go).
type fakeClock = httpapi.FakeClock

func newFakeClock(at time.Time) *fakeClock { return httpapi.NewFakeClock(at) }

// fakeIDs makes random version 4 UUIDs, as the service does.
type fakeIDs struct{}

func (fakeIDs) NewID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6], b[8] = b[6]&0x0f|0x40, b[8]&0x3f|0x80
	h := hex.EncodeToString(b[:])
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// fakeTokens issues opaque tokens and verifies them from its table.
type fakeTokens struct {
	clock  *fakeClock
	mu     sync.Mutex
	issued map[string]ports.TokenClaims
}

func newFakeTokens(clock *fakeClock) *fakeTokens {
	return &fakeTokens{clock: clock, issued: map[string]ports.TokenClaims{}}
}

func (t *fakeTokens) Issue(_ context.Context, p domain.Principal, lifetime time.Duration) (ports.IssuedToken, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.clock.Now().Truncate(time.Second)
	raw := "tok_" + fakeIDs{}.NewID()
	t.issued[raw] = ports.TokenClaims{AccountID: p.AccountID, ClientID: p.ClientID, Scopes: p.Scopes, ExpiresAt: now.Add(lifetime)}
	return ports.IssuedToken{Token: raw, IssuedAt: now, ExpiresAt: now.Add(lifetime)}, nil
}

func (t *fakeTokens) Verify(_ context.Context, raw string) (ports.TokenClaims, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	c, ok := t.issued[raw]
	if !ok || !t.clock.Now().Before(c.ExpiresAt) {
		return ports.TokenClaims{}, ports.ErrInvalidToken
	}
	return c, nil
}

// failingGranter answers every token request with err.
type failingGranter struct{ err error }

func (g failingGranter) Execute(context.Context, string, string, []domain.Scope) (application.TokenGrant, error) {
	return application.TokenGrant{}, g.err
}

// Ports a test does not exercise (the transaction use cases are required by httpapi.New but
// never called here): interface values whose methods panic when called.
type (
	unusedTransactions struct{ ports.TransactionRepository }
	unusedCapabilities struct{ ports.CapabilityGenerator }
	unusedEmitter      struct{ ports.PixEmitter }
	unusedRenderer     struct{ ports.QRRenderer }
	unusedAcquirer     struct{ ports.Acquirer }
	unusedWithdrawals  struct{ ports.WithdrawalRepository }
	unusedLedger       struct{ ports.Ledger }
	unusedOutbox       struct{ ports.Outbox }
)
