package application_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/pixgate/pixgate/application"
	"github.com/pixgate/pixgate/domain"
	"github.com/pixgate/pixgate/ports"
)

const authCacheTTL = 2 * time.Second

// authInstance is one pixgate instance's authentication: its own cache over a store that
// other instances share, and the use cases that change what the cache remembers.
type authInstance struct {
	cache        *application.AuthCache
	authenticate *application.Authenticate
	revoke       *application.RevokeCredential
	disable      *application.DisableAccount
}

func newAuthInstance(w *authWorld, ttl time.Duration) authInstance {
	cache := application.NewAuthCache(ttl, w.clock, 0)
	accounts := cache.Invalidating(w.repo)
	return authInstance{
		cache:        cache,
		authenticate: application.NewCachedAuthenticate(w.verifier, accounts, cache),
		revoke:       application.NewRevokeCredential(accounts, w.clock),
		disable:      application.NewDisableAccount(accounts),
	}
}

func TestAuthCacheSkipsTheStoreWhileFresh(t *testing.T) {
	ctx := context.Background()
	w := newAuthWorld(t)
	one := newAuthInstance(w, authCacheTTL)
	acc := w.newAccount(t, domain.ScopeTransactionRead)
	raw := w.tokenFor(acc.Account.ID(), acc.Credential.ClientID, domain.ScopeTransactionRead, domain.ScopeTransactionWrite)
	w.repo.ResetCalls()

	for i := range 5 {
		p, err := one.authenticate.Execute(ctx, raw)
		if err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		if p.AccountID != acc.Account.ID() || p.ClientID != acc.Credential.ClientID || domain.JoinScopes(p.Scopes) != "transaction:read" {
			t.Fatalf("request %d: principal %+v, want the account's and only the scope it holds", i, p)
		}
	}
	if c, a := w.repo.Calls("GetCredential"), w.repo.Calls("GetAccount"); c != 1 || a != 1 {
		t.Fatalf("5 requests read the credential %d times and the account %d times, want once each", c, a)
	}

	w.clock.Advance(authCacheTTL)
	if _, err := one.authenticate.Execute(ctx, raw); err != nil {
		t.Fatal(err)
	}
	if c := w.repo.Calls("GetCredential"); c != 2 {
		t.Fatalf("after the TTL the credential was read %d times in all, want a second read", c)
	}
}

func TestAuthCacheRevocationActsAtOnceHereAndWithinTheTTLElsewhere(t *testing.T) {
	ctx := context.Background()
	w := newAuthWorld(t)
	here, there := newAuthInstance(w, authCacheTTL), newAuthInstance(w, authCacheTTL)
	acc := w.newAccount(t)
	raw := w.tokenFor(acc.Account.ID(), acc.Credential.ClientID, domain.ScopeTransactionRead)
	for _, in := range []authInstance{here, there} {
		if _, err := in.authenticate.Execute(ctx, raw); err != nil {
			t.Fatal(err)
		}
	}

	if err := here.revoke.Execute(ctx, domain.Principal{AccountID: acc.Account.ID()}, acc.Credential.ClientID); err != nil {
		t.Fatal(err)
	}
	if _, err := here.authenticate.Execute(ctx, raw); !errors.Is(err, ports.ErrInvalidToken) {
		t.Fatalf("the revoking instance: %v, want ports.ErrInvalidToken at once", err)
	}
	w.clock.Advance(authCacheTTL - time.Millisecond)
	if _, err := there.authenticate.Execute(ctx, raw); err != nil {
		t.Fatalf("another instance within the TTL: %v, want its remembered answer", err)
	}
	w.clock.Advance(time.Millisecond)
	if _, err := there.authenticate.Execute(ctx, raw); !errors.Is(err, ports.ErrInvalidToken) {
		t.Fatalf("another instance once the TTL passed: %v, want ports.ErrInvalidToken", err)
	}
}

func TestAuthCacheDisablingActsAtOnceHereAndWithinTheTTLElsewhere(t *testing.T) {
	ctx := context.Background()
	w := newAuthWorld(t)
	here, there := newAuthInstance(w, authCacheTTL), newAuthInstance(w, authCacheTTL)
	acc := w.newAccount(t)
	// A second credential of the same account: disabling forgets every credential of it.
	second, err := application.NewCreateCredential(w.repo, w.ids, w.clock, w.hasher).Execute(ctx, domain.Principal{AccountID: acc.Account.ID()})
	if err != nil {
		t.Fatal(err)
	}
	tokens := []string{
		w.tokenFor(acc.Account.ID(), acc.Credential.ClientID, domain.ScopeTransactionRead),
		w.tokenFor(acc.Account.ID(), second.ClientID, domain.ScopeTransactionRead),
	}
	for _, in := range []authInstance{here, there} {
		for _, raw := range tokens {
			if _, err := in.authenticate.Execute(ctx, raw); err != nil {
				t.Fatal(err)
			}
		}
	}

	if err := here.disable.Execute(ctx, acc.Account.ID()); err != nil {
		t.Fatal(err)
	}
	for _, raw := range tokens {
		if _, err := here.authenticate.Execute(ctx, raw); !errors.Is(err, domain.ErrAccountDisabled) {
			t.Fatalf("the disabling instance: %v, want domain.ErrAccountDisabled at once", err)
		}
	}
	if _, err := there.authenticate.Execute(ctx, tokens[1]); err != nil {
		t.Fatalf("another instance within the TTL: %v, want its remembered answer", err)
	}
	w.clock.Advance(authCacheTTL)
	for _, raw := range tokens {
		if _, err := there.authenticate.Execute(ctx, raw); !errors.Is(err, domain.ErrAccountDisabled) {
			t.Fatalf("another instance once the TTL passed: %v, want domain.ErrAccountDisabled", err)
		}
	}
}

func TestAuthCacheRemembersOnlyCompleteAnswers(t *testing.T) {
	ctx := context.Background()

	t.Run("a store failure is read again on the next request", func(t *testing.T) {
		w := newAuthWorld(t)
		in := newAuthInstance(w, time.Hour)
		acc := w.newAccount(t)
		raw := w.tokenFor(acc.Account.ID(), acc.Credential.ClientID)
		w.repo.FailAll(ports.ErrUnavailable)
		if _, err := in.authenticate.Execute(ctx, raw); !errors.Is(err, ports.ErrUnavailable) {
			t.Fatalf("= %v", err)
		}
		w.repo.Clear()
		if _, err := in.authenticate.Execute(ctx, raw); err != nil {
			t.Fatalf("after the store came back: %v", err)
		}
	})

	t.Run("an unknown credential is read again, so that one created meanwhile works", func(t *testing.T) {
		w := newAuthWorld(t)
		in := newAuthInstance(w, time.Hour)
		acc := w.newAccount(t)
		raw := w.tokenFor(acc.Account.ID(), "not-yet", domain.ScopeTransactionRead)
		if _, err := in.authenticate.Execute(ctx, raw); !errors.Is(err, ports.ErrInvalidToken) {
			t.Fatalf("= %v", err)
		}
		if err := w.repo.CreateCredential(ctx, domain.Credential{ClientID: "not-yet", AccountID: acc.Account.ID(), SecretHash: []byte("h"), CreatedAt: authStart}); err != nil {
			t.Fatal(err)
		}
		if _, err := in.authenticate.Execute(ctx, raw); err != nil {
			t.Fatalf("after the credential was created: %v", err)
		}
		if in.cache.Len() != 1 {
			t.Fatalf("the cache holds %d entries, want the one complete answer", in.cache.Len())
		}
	})

	t.Run("the claims are judged on every request, cached or not", func(t *testing.T) {
		w := newAuthWorld(t)
		in := newAuthInstance(w, time.Hour)
		a, b := w.newAccount(t), w.newAccount(t)
		if _, err := in.authenticate.Execute(ctx, w.tokenFor(a.Account.ID(), a.Credential.ClientID)); err != nil {
			t.Fatal(err)
		}
		if _, err := in.authenticate.Execute(ctx, w.tokenFor(b.Account.ID(), a.Credential.ClientID)); !errors.Is(err, ports.ErrInvalidToken) {
			t.Fatalf("a token naming another account than its cached credential's: %v, want ports.ErrInvalidToken", err)
		}
	})
}

func TestAuthCacheOffReadsTheStoreEveryTime(t *testing.T) {
	ctx := context.Background()
	w := newAuthWorld(t)
	in := newAuthInstance(w, 0)
	if in.cache != nil {
		t.Fatal("a TTL of 0 must turn the cache off")
	}
	acc := w.newAccount(t)
	raw := w.tokenFor(acc.Account.ID(), acc.Credential.ClientID)
	w.repo.ResetCalls()
	for range 3 {
		if _, err := in.authenticate.Execute(ctx, raw); err != nil {
			t.Fatal(err)
		}
	}
	if c := w.repo.Calls("GetCredential"); c != 3 {
		t.Fatalf("3 requests read the credential %d times, want 3", c)
	}
}

func TestAuthCacheStaysWithinItsSize(t *testing.T) {
	ctx := context.Background()
	w := newAuthWorld(t)
	cache := application.NewAuthCache(time.Hour, w.clock, 8)
	authenticate := application.NewCachedAuthenticate(w.verifier, w.repo, cache)
	for i := range 40 {
		acc := w.newAccount(t)
		if _, err := authenticate.Execute(ctx, w.tokenFor(acc.Account.ID(), acc.Credential.ClientID)); err != nil {
			t.Fatal(err)
		}
		if n := cache.Len(); n > 8 {
			t.Fatalf("after %d credentials the cache holds %d entries, more than its 8", i+1, n)
		}
	}
}

// A read that began before a revocation must not put the old answer back after the revocation
// forgot it: the store is made to answer the credential's read only once the revocation is
// done.
func TestAuthCacheNeverStoresAReadOlderThanARevocation(t *testing.T) {
	ctx := context.Background()
	w := newAuthWorld(t)
	in := newAuthInstance(w, time.Hour)
	acc := w.newAccount(t)
	raw := w.tokenFor(acc.Account.ID(), acc.Credential.ClientID)

	slow := &authSlowReads{AccountRepository: w.repo, reading: make(chan struct{}), release: make(chan struct{})}
	racing := application.NewCachedAuthenticate(w.verifier, slow, in.cache)
	var wg sync.WaitGroup
	var raceErr error
	wg.Go(func() { _, raceErr = racing.Execute(ctx, raw) })
	<-slow.reading // the read has the credential as it was, not yet revoked
	if err := in.revoke.Execute(ctx, domain.Principal{AccountID: acc.Account.ID()}, acc.Credential.ClientID); err != nil {
		t.Fatal(err)
	}
	close(slow.release)
	wg.Wait()
	if raceErr != nil {
		t.Fatalf("the request that read before the revocation: %v (it may pass: it began first)", raceErr)
	}
	if _, err := in.authenticate.Execute(ctx, raw); !errors.Is(err, ports.ErrInvalidToken) {
		t.Fatalf("after the revocation: %v, want ports.ErrInvalidToken (the older read was cached)", err)
	}
}

// authSlowReads holds GetAccount (which follows the credential's read) until released.
type authSlowReads struct {
	ports.AccountRepository
	reading, release chan struct{}
}

func (r *authSlowReads) GetAccount(ctx context.Context, id string) (*domain.Account, error) {
	close(r.reading)
	<-r.release
	return r.AccountRepository.GetAccount(ctx, id)
}
