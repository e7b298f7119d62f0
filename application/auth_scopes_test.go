package application_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/pixgate/pixgate/application"
	"github.com/pixgate/pixgate/domain"
	"github.com/pixgate/pixgate/ports"
)

func TestIssueTokenCarriesTheRequestedScopes(t *testing.T) {
	w := newAuthWorld(t)
	ctx := context.Background()
	acc := w.newAccount(t, domain.ScopeBalanceRead, domain.ScopeTransactionRead, domain.ScopeAccountAdmin)
	id, secret := acc.Credential.ClientID, acc.Credential.Secret

	for _, c := range []struct {
		name      string
		requested []domain.Scope
		want      []domain.Scope
		err       error
	}{
		{"no scope asked for: every scope of the account, in canonical order", nil,
			[]domain.Scope{domain.ScopeTransactionRead, domain.ScopeBalanceRead, domain.ScopeAccountAdmin}, nil},
		{"a narrower set: exactly that set", []domain.Scope{domain.ScopeBalanceRead},
			[]domain.Scope{domain.ScopeBalanceRead}, nil},
		{"a scope the account does not hold: invalid scope, no token",
			[]domain.Scope{domain.ScopeBalanceRead, domain.ScopeWithdrawalWrite}, nil, ports.ErrInvalidScope},
	} {
		t.Run(c.name, func(t *testing.T) {
			before := len(w.issuer.Issued())
			grant, err := w.issue.Execute(ctx, id, secret, c.requested)
			if !errors.Is(err, c.err) || (c.err == nil && !slices.Equal(grant.Scopes, c.want)) {
				t.Fatalf("= %v, %v; want %v, %v", grant.Scopes, err, c.want, c.err)
			}
			issued := w.issuer.Issued()
			if c.err != nil {
				if len(issued) != before {
					t.Fatal("a token was signed for a refused request")
				}
				return
			}
			if got := issued[len(issued)-1].Scopes; !slices.Equal(got, c.want) {
				t.Fatalf("the signed token carries %v, want %v", got, c.want)
			}
		})
	}

	t.Run("a wrong secret asking for a scope the account lacks learns only that the client is invalid", func(t *testing.T) {
		_, err := w.issue.Execute(ctx, id, "wrong-secret", []domain.Scope{domain.ScopeWithdrawalWrite})
		if !errors.Is(err, ports.ErrInvalidCredentials) {
			t.Fatalf("= %v, want ErrInvalidCredentials", err)
		}
	})
}

func TestIssueTokenRecordsTheLastUseAtMostOnceAMinute(t *testing.T) {
	w := newAuthWorld(t)
	ctx := context.Background()
	acc := w.newAccount(t)
	id, secret := acc.Credential.ClientID, acc.Credential.Secret
	lastUsed := func() *time.Time {
		c, err := w.repo.GetCredential(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		return c.LastUsedAt
	}
	if lastUsed() != nil {
		t.Fatal("a new credential is already used")
	}
	w.repo.ResetCalls()
	for range 5 {
		if _, err := w.issue.Execute(ctx, id, secret, nil); err != nil {
			t.Fatal(err)
		}
		w.clock.Advance(10 * time.Second)
	}
	if got := lastUsed(); got == nil || !got.Equal(authStart) {
		t.Fatalf("lastUsedAt = %v, want the first token's time %v", got, authStart)
	}
	if n := w.repo.Calls("RecordCredentialUse"); n != 1 {
		t.Fatalf("5 tokens in 50 s made %d writes, want 1", n)
	}
	w.clock.Advance(10 * time.Second) // a minute after the first
	if _, err := w.issue.Execute(ctx, id, secret, nil); err != nil {
		t.Fatal(err)
	}
	if got := lastUsed(); got == nil || !got.Equal(authStart.Add(time.Minute)) {
		t.Fatalf("lastUsedAt = %v, want %v", got, authStart.Add(time.Minute))
	}
	if _, err := w.issue.Execute(ctx, id, "wrong", nil); !errors.Is(err, ports.ErrInvalidCredentials) {
		t.Fatal(err)
	}
	if n := w.repo.Calls("RecordCredentialUse"); n != 2 {
		t.Fatalf("%d writes, want 2: a refused request records nothing", n)
	}
}

func TestListCredentialsShowsTheAccountsOwnNewestFirstWithoutSecrets(t *testing.T) {
	w := newAuthWorld(t)
	ctx := context.Background()
	acc, other := w.newAccount(t), w.newAccount(t)
	p := domain.Principal{AccountID: acc.Account.ID()}
	w.clock.Advance(time.Second)
	second, err := w.createCred.Execute(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.revokeCred.Execute(ctx, p, acc.Credential.ClientID); err != nil {
		t.Fatal(err)
	}
	list, err := application.NewListCredentials(w.repo).Execute(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 || list[0].ClientID != second.ClientID || list[1].ClientID != acc.Credential.ClientID {
		t.Fatalf("list = %v, want the second credential, then the first", list)
	}
	if !list[1].Revoked() || list[0].Revoked() {
		t.Fatalf("revocations = %v, %v; want only the first revoked", list[0].RevokedAt, list[1].RevokedAt)
	}
	for _, c := range list {
		if c.SecretHash != nil || c.AccountID != acc.Account.ID() || c.ClientID == other.Credential.ClientID {
			t.Fatalf("credential %+v leaks a hash or another account", c)
		}
	}
}

func TestCreateCredentialStopsAtTheCap(t *testing.T) {
	w := newAuthWorld(t)
	ctx := context.Background()
	acc := w.newAccount(t)
	p := domain.Principal{AccountID: acc.Account.ID()}
	for range domain.MaxActiveCredentials - 1 {
		if _, err := w.createCred.Execute(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := w.createCred.Execute(ctx, p); !errors.Is(err, domain.ErrCredentialLimit) {
		t.Fatalf("the 11th credential: %v, want domain.ErrCredentialLimit", err)
	}
}

func TestIssueUpstreamTokenPassesTheRequestedScopesOn(t *testing.T) {
	w := newAuthWorld(t)
	ctx := context.Background()
	acc := w.newAccount(t, domain.ScopeTransactionRead)
	ex := &fakeExchanger{secrets: map[string]string{acc.Credential.ClientID: "upstream-secret"},
		scopes: []domain.Scope{domain.ScopeTransactionRead}, clock: w.clock}
	uc := application.NewIssueUpstreamToken(w.repo, ex)
	asked := []domain.Scope{domain.ScopeTransactionRead}
	if _, err := uc.Execute(ctx, acc.Credential.ClientID, "upstream-secret", asked); err != nil || !slices.Equal(ex.asked, asked) {
		t.Fatalf("= %v; the upstream was asked for %v, want %v", err, ex.asked, asked)
	}
	if _, err := uc.Execute(ctx, acc.Credential.ClientID, "upstream-secret", []domain.Scope{domain.ScopeAccountAdmin}); !errors.Is(err, ports.ErrInvalidScope) {
		t.Fatalf("a scope the account lacks: %v, want ErrInvalidScope", err)
	}
	c, _ := w.repo.GetCredential(ctx, acc.Credential.ClientID)
	if c.LastUsedAt == nil || !c.LastUsedAt.Equal(authStart) {
		t.Fatalf("lastUsedAt = %v, want the exchange's time %v", c.LastUsedAt, authStart)
	}
}
