package application_test

// Hand-written fakes of the ports the authentication use cases need. Their names start with
// "auth" so that they cannot collide with the fakes of other use cases in this package.

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/pixgate/pixgate/domain"
	"github.com/pixgate/pixgate/ports"
)

type authClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *authClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *authClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

type authIDs struct {
	mu sync.Mutex
	n  int
}

func (g *authIDs) NewID() string {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.n++
	return fmt.Sprintf("00000000-0000-4000-8000-%012d", g.n)
}

// authRepo is an in-memory ports.AccountRepository that can be told to fail and counts calls.
type authRepo struct {
	mu          sync.Mutex
	accounts    map[string]*domain.Account
	credentials map[string]domain.Credential
	calls       map[string]int
	fail        error // returned by every call when set
	// beforeCreateCredential runs before CreateCredential stores, to stage races.
	beforeCreateCredential func(domain.Credential)
}

var _ ports.AccountRepository = (*authRepo)(nil)

func newAuthRepo() *authRepo {
	return &authRepo{accounts: map[string]*domain.Account{}, credentials: map[string]domain.Credential{}, calls: map[string]int{}}
}

func (r *authRepo) enter(name string) error {
	r.calls[name]++
	return r.fail
}

func (r *authRepo) Calls(name string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.calls[name]
}

func (r *authRepo) ResetCalls() {
	r.mu.Lock()
	r.calls = map[string]int{}
	r.mu.Unlock()
}

func (r *authRepo) SetFail(err error) {
	r.mu.Lock()
	r.fail = err
	r.mu.Unlock()
}

func authCopyAccount(a *domain.Account) *domain.Account {
	return domain.UnmarshalAccountFromDatabase(a.Record())
}

func authCopyCredential(c domain.Credential) domain.Credential {
	c.SecretHash = bytes.Clone(c.SecretHash)
	if c.RevokedAt != nil {
		t := *c.RevokedAt
		c.RevokedAt = &t
	}
	if c.LastUsedAt != nil {
		t := *c.LastUsedAt
		c.LastUsedAt = &t
	}
	return c
}

func (r *authRepo) CreateAccount(_ context.Context, a *domain.Account) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.enter("CreateAccount"); err != nil {
		return err
	}
	if _, ok := r.accounts[a.ID()]; ok {
		return ports.ErrDuplicate
	}
	r.accounts[a.ID()] = authCopyAccount(a)
	return nil
}

func (r *authRepo) GetAccount(_ context.Context, id string) (*domain.Account, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.enter("GetAccount"); err != nil {
		return nil, err
	}
	a, ok := r.accounts[id]
	if !ok {
		return nil, domain.ErrNotFound
	}
	return authCopyAccount(a), nil
}

func (r *authRepo) ListAccounts(context.Context) ([]*domain.Account, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.enter("ListAccounts"); err != nil {
		return nil, err
	}
	out := []*domain.Account{}
	for _, a := range r.accounts {
		out = append(out, authCopyAccount(a))
	}
	slices.SortFunc(out, func(a, b *domain.Account) int {
		if c := a.CreatedAt().Compare(b.CreatedAt()); c != 0 {
			return c
		}
		return cmp.Compare(a.ID(), b.ID())
	})
	return out, nil
}

func (r *authRepo) UpdateAccount(_ context.Context, id string, fn func(*domain.Account) error) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.enter("UpdateAccount"); err != nil {
		return err
	}
	a, ok := r.accounts[id]
	if !ok {
		return domain.ErrNotFound
	}
	work := authCopyAccount(a)
	if err := fn(work); err != nil {
		return err
	}
	rec := work.Record()
	rec.Version++
	r.accounts[id] = domain.UnmarshalAccountFromDatabase(rec)
	return nil
}

func (r *authRepo) CreateCredential(_ context.Context, c domain.Credential) error {
	if hook := r.beforeCreateCredential; hook != nil {
		hook(c)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.enter("CreateCredential"); err != nil {
		return err
	}
	if _, ok := r.accounts[c.AccountID]; !ok {
		return domain.ErrNotFound
	}
	if _, ok := r.credentials[c.ClientID]; ok {
		return ports.ErrDuplicate
	}
	active := 0
	for _, other := range r.credentials {
		if other.AccountID == c.AccountID && !other.Revoked() {
			active++
		}
	}
	if active >= domain.MaxActiveCredentials && !c.Revoked() {
		return domain.ErrCredentialLimit
	}
	r.credentials[c.ClientID] = authCopyCredential(c)
	return nil
}

func (r *authRepo) RecordCredentialUse(_ context.Context, clientID string, at time.Time) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.enter("RecordCredentialUse"); err != nil {
		return err
	}
	c, ok := r.credentials[clientID]
	if !ok {
		return domain.ErrNotFound
	}
	if c.LastUsedAt == nil || c.LastUsedAt.Before(at) {
		at = at.UTC()
		c.LastUsedAt = &at
		r.credentials[clientID] = c
	}
	return nil
}

func (r *authRepo) GetCredential(_ context.Context, clientID string) (domain.Credential, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.enter("GetCredential"); err != nil {
		return domain.Credential{}, err
	}
	c, ok := r.credentials[clientID]
	if !ok {
		return domain.Credential{}, domain.ErrNotFound
	}
	return authCopyCredential(c), nil
}

func (r *authRepo) ListCredentials(_ context.Context, accountID string) ([]domain.Credential, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.enter("ListCredentials"); err != nil {
		return nil, err
	}
	out := []domain.Credential{}
	for _, c := range r.credentials {
		if c.AccountID == accountID {
			out = append(out, authCopyCredential(c))
		}
	}
	slices.SortFunc(out, func(a, b domain.Credential) int {
		if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
			return c
		}
		return cmp.Compare(a.ClientID, b.ClientID)
	})
	return out, nil
}

func (r *authRepo) RevokeCredential(_ context.Context, accountID, clientID string, at time.Time) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.enter("RevokeCredential"); err != nil {
		return err
	}
	c, ok := r.credentials[clientID]
	if !ok || c.AccountID != accountID {
		return domain.ErrNotFound
	}
	if c.RevokedAt == nil {
		at = at.UTC()
		c.RevokedAt = &at
		r.credentials[clientID] = c
	}
	return nil
}

// authIssuer is a ports.TokenIssuer whose tokens are readable strings.
type authIssuer struct {
	clock  ports.Clock
	mu     sync.Mutex
	issued []domain.Principal
}

func (i *authIssuer) Issue(_ context.Context, p domain.Principal, lifetime time.Duration) (ports.IssuedToken, error) {
	i.mu.Lock()
	defer i.mu.Unlock()
	i.issued = append(i.issued, p)
	now := i.clock.Now().Truncate(time.Second)
	return ports.IssuedToken{Token: fmt.Sprintf("token-%d-%s", len(i.issued), p.ClientID), IssuedAt: now, ExpiresAt: now.Add(lifetime)}, nil
}

func (i *authIssuer) Issued() []domain.Principal {
	i.mu.Lock()
	defer i.mu.Unlock()
	return slices.Clone(i.issued)
}

// authVerifier is a ports.TokenVerifier that knows the tokens it was told about.
type authVerifier struct {
	tokens map[string]ports.TokenClaims
}

func (v *authVerifier) Verify(_ context.Context, raw string) (ports.TokenClaims, error) {
	c, ok := v.tokens[raw]
	if !ok {
		return ports.TokenClaims{}, fmt.Errorf("%w: unknown test token", ports.ErrInvalidToken)
	}
	return c, nil
}

// authExchanger is a ports.CredentialExchanger answering from a table.
type authExchanger struct {
	secrets map[string]string // client id -> secret
	scopes  []domain.Scope
	down    bool
	clock   ports.Clock
	asked   []domain.Scope // the scopes of the last exchange
}

func (e *authExchanger) Exchange(_ context.Context, clientID, secret string, scopes []domain.Scope) (ports.UpstreamToken, error) {
	e.asked = scopes
	if e.down {
		return ports.UpstreamToken{}, fmt.Errorf("%w: connection refused", ports.ErrUpstreamUnavailable)
	}
	if s, ok := e.secrets[clientID]; !ok || s != secret {
		return ports.UpstreamToken{}, ports.ErrInvalidCredentials
	}
	return ports.UpstreamToken{AccessToken: "upstream-" + clientID, Lifetime: 5 * time.Minute, ExpiresAt: e.clock.Now().Add(5 * time.Minute), Scopes: e.scopes}, nil
}
