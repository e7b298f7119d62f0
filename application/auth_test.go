package application_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pixgate/pixgate/adapters/system"
	"github.com/pixgate/pixgate/application"
	"github.com/pixgate/pixgate/domain"
	"github.com/pixgate/pixgate/ports"
	"github.com/pixgate/pixgate/ports/porttest"
)

var authStart = time.Date(2031, 8, 9, 10, 11, 12, 0, time.UTC)

// authWorld wires the authentication use cases to fakes.
type authWorld struct {
	clock    *fakeClock
	ids      *fakeIDs
	repo     *porttest.Accounts
	issuer   *fakeIssuer
	verifier *fakeVerifier
	hasher   *system.ClientSecrets

	issue         *application.IssueToken
	authenticate  *application.Authenticate
	createAccount *application.CreateAccount
	createCred    *application.CreateCredential
	revokeCred    *application.RevokeCredential
	disable       *application.DisableAccount
}

func newAuthWorld(t testing.TB) *authWorld {
	t.Helper()
	w := &authWorld{clock: &fakeClock{now: authStart}, ids: &fakeIDs{}, repo: newAccounts(), verifier: &fakeVerifier{tokens: map[string]ports.TokenClaims{}}}
	w.issuer = &fakeIssuer{clock: w.clock}
	h, err := system.NewClientSecrets([]byte("0123456789abcdef0123456789abcdef"))
	if err != nil {
		t.Fatal(err)
	}
	w.hasher = h
	w.issue = application.NewIssueToken(w.repo, w.issuer, h, time.Hour)
	w.authenticate = application.NewAuthenticate(w.verifier, w.repo)
	w.createAccount = application.NewCreateAccount(w.repo, w.ids, w.clock, h)
	w.createCred = application.NewCreateCredential(w.repo, w.ids, w.clock, h)
	w.revokeCred = application.NewRevokeCredential(w.repo, w.clock)
	w.disable = application.NewDisableAccount(w.repo)
	return w
}

func (w *authWorld) newAccount(t testing.TB, scopes ...domain.Scope) application.CreatedAccount {
	t.Helper()
	created, err := w.createAccount.Execute(context.Background(), "Loja Exemplo", scopes)
	if err != nil {
		t.Fatalf("CreateAccount: %v", err)
	}
	return created
}

// tokenFor registers a token the fake verifier accepts, as jwtauth would issue it.
func (w *authWorld) tokenFor(accountID, clientID string, scopes ...domain.Scope) string {
	raw := fmt.Sprintf("raw-%d", len(w.verifier.tokens))
	w.verifier.tokens[raw] = ports.TokenClaims{AccountID: accountID, ClientID: clientID, Scopes: scopes, ExpiresAt: authStart.Add(time.Hour)}
	return raw
}

func TestIssueTokenGrantsATokenForTheRightSecret(t *testing.T) {
	w := newAuthWorld(t)
	acc := w.newAccount(t, domain.ScopeTransactionRead, domain.ScopeWithdrawalRead)

	grant, err := w.issue.Execute(context.Background(), acc.Credential.ClientID, acc.Credential.Secret, nil)
	if err != nil {
		t.Fatalf("IssueToken: %v", err)
	}
	if grant.AccessToken == "" || grant.Lifetime != time.Hour || !grant.ExpiresAt.Equal(authStart.Add(time.Hour)) {
		t.Errorf("grant = %+v", grant)
	}
	if domain.JoinScopes(grant.Scopes) != "transaction:read,withdrawal:read" {
		t.Errorf("scopes = %v", grant.Scopes)
	}
	issued := w.issuer.Issued()
	if len(issued) != 1 || issued[0].AccountID != acc.Account.ID() || issued[0].ClientID != acc.Credential.ClientID {
		t.Errorf("issued for %+v", issued)
	}
}

func TestIssueTokenRefusesEveryBadCredentialAlike(t *testing.T) {
	w := newAuthWorld(t)
	ctx := context.Background()
	good := w.newAccount(t)
	revoked := w.newAccount(t)
	if err := w.revokeCred.Execute(ctx, domain.Principal{AccountID: revoked.Account.ID()}, revoked.Credential.ClientID); err != nil {
		t.Fatal(err)
	}
	disabled := w.newAccount(t)
	if err := w.disable.Execute(ctx, disabled.Account.ID()); err != nil {
		t.Fatal(err)
	}

	cases := []struct{ name, clientID, secret string }{
		{"an unknown client", "no-such-client", good.Credential.Secret},
		{"a wrong secret", good.Credential.ClientID, good.Credential.Secret + "x"},
		{"an empty secret", good.Credential.ClientID, ""},
		{"another credential's secret", good.Credential.ClientID, revoked.Credential.Secret},
		{"a revoked credential with its right secret", revoked.Credential.ClientID, revoked.Credential.Secret},
		{"a disabled account's credential with its right secret", disabled.Credential.ClientID, disabled.Credential.Secret},
	}
	var messages []string
	for _, tc := range cases {
		t.Run(tc.name+" answers invalid credentials", func(t *testing.T) {
			_, err := w.issue.Execute(ctx, tc.clientID, tc.secret, nil)
			if !errors.Is(err, ports.ErrInvalidCredentials) {
				t.Fatalf("IssueToken = %v, want ports.ErrInvalidCredentials", err)
			}
			messages = append(messages, err.Error())
		})
	}
	if len(slices.Compact(messages)) != 1 {
		t.Errorf("the refusals differ: %q", messages)
	}
	if n := len(w.issuer.Issued()); n != 0 {
		t.Errorf("%d tokens issued for bad credentials", n)
	}
}

func TestIssueTokenDoesTheSameWorkForUnknownClientAndWrongSecret(t *testing.T) {
	w := newAuthWorld(t)
	ctx := context.Background()
	acc := w.newAccount(t)

	w.repo.ResetCalls()
	_, _ = w.issue.Execute(ctx, "no-such-client", "whatever-secret", nil)
	unknownCalls := fmt.Sprint(w.repo.Counts())
	w.repo.ResetCalls()
	_, _ = w.issue.Execute(ctx, acc.Credential.ClientID, "whatever-secret", nil)
	wrongCalls := fmt.Sprint(w.repo.Counts())
	if unknownCalls != wrongCalls {
		t.Errorf("store calls differ: unknown client %s, wrong secret %s", unknownCalls, wrongCalls)
	}

}

// BenchmarkIssueTokenRefusal shows that an unknown client and a wrong secret cost the same: the
// dominant cost of both is one keyed hash (without the dummy comparison the unknown client
// would answer several times faster). Compare the two sub-benchmarks' ns/op; timing stays out
// of the unit tests, where a loaded machine would make it flaky.
func BenchmarkIssueTokenRefusal(b *testing.B) {
	w := newAuthWorld(b)
	ctx := context.Background()
	acc := w.newAccount(b)
	for _, c := range []struct{ name, clientID string }{
		{"unknown client", "no-such-client"},
		{"wrong secret", acc.Credential.ClientID},
	} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				_, _ = w.issue.Execute(ctx, c.clientID, "whatever-secret-of-some-length-0123456789", nil)
			}
		})
	}
}

func TestIssueTokenPassesStoreFailuresOn(t *testing.T) {
	w := newAuthWorld(t)
	acc := w.newAccount(t)
	w.repo.FailAll(ports.ErrUnavailable)
	_, err := w.issue.Execute(context.Background(), acc.Credential.ClientID, acc.Credential.Secret, nil)
	if !errors.Is(err, ports.ErrUnavailable) || errors.Is(err, ports.ErrInvalidCredentials) {
		t.Fatalf("IssueToken with the store down = %v, want ports.ErrUnavailable", err)
	}
}

func TestIssueUpstreamToken(t *testing.T) {
	w := newAuthWorld(t)
	ctx := context.Background()
	acc := w.newAccount(t, domain.ScopeTransactionRead, domain.ScopeTransactionWrite)
	unknownLocally := "upstream-only"
	ex := &fakeExchanger{
		secrets: map[string]string{acc.Credential.ClientID: "upstream-secret", unknownLocally: "upstream-secret"},
		scopes:  []domain.Scope{domain.ScopeTransactionRead, domain.ScopeWithdrawalWrite},
		clock:   w.clock,
	}
	uc := application.NewIssueUpstreamToken(w.repo, ex)

	t.Run("accepted credentials of a known client get the upstream token", func(t *testing.T) {
		grant, err := uc.Execute(ctx, acc.Credential.ClientID, "upstream-secret", nil)
		if err != nil {
			t.Fatal(err)
		}
		if grant.AccessToken != "upstream-"+acc.Credential.ClientID || grant.Lifetime != 5*time.Minute || !grant.ExpiresAt.Equal(authStart.Add(5*time.Minute)) {
			t.Errorf("grant = %+v", grant)
		}
		if domain.JoinScopes(grant.Scopes) != "transaction:read" {
			t.Errorf("scopes = %v, want only those the account holds", grant.Scopes)
		}
	})
	t.Run("credentials the upstream refuses are invalid", func(t *testing.T) {
		if _, err := uc.Execute(ctx, acc.Credential.ClientID, "wrong", nil); !errors.Is(err, ports.ErrInvalidCredentials) {
			t.Fatalf("= %v", err)
		}
	})
	t.Run("a client the upstream knows but pixgate does not is invalid", func(t *testing.T) {
		if _, err := uc.Execute(ctx, unknownLocally, "upstream-secret", nil); !errors.Is(err, ports.ErrInvalidCredentials) {
			t.Fatalf("= %v", err)
		}
	})
	t.Run("an upstream that cannot answer is unavailable", func(t *testing.T) {
		ex.down = true
		defer func() { ex.down = false }()
		if _, err := uc.Execute(ctx, acc.Credential.ClientID, "upstream-secret", nil); !errors.Is(err, ports.ErrUpstreamUnavailable) {
			t.Fatalf("= %v", err)
		}
	})
	t.Run("a disabled account is invalid", func(t *testing.T) {
		if err := w.disable.Execute(ctx, acc.Account.ID()); err != nil {
			t.Fatal(err)
		}
		if _, err := uc.Execute(ctx, acc.Credential.ClientID, "upstream-secret", nil); !errors.Is(err, ports.ErrInvalidCredentials) {
			t.Fatalf("= %v", err)
		}
	})
}

func TestAuthenticate(t *testing.T) {
	ctx := context.Background()

	t.Run("a valid token of an active account gives its principal", func(t *testing.T) {
		w := newAuthWorld(t)
		acc := w.newAccount(t, domain.ScopeTransactionRead, domain.ScopeTransactionWrite)
		raw := w.tokenFor(acc.Account.ID(), acc.Credential.ClientID, domain.ScopeTransactionRead, domain.ScopeTransactionWrite)
		p, err := w.authenticate.Execute(ctx, raw)
		if err != nil {
			t.Fatal(err)
		}
		if p.AccountID != acc.Account.ID() || p.ClientID != acc.Credential.ClientID || domain.JoinScopes(p.Scopes) != "transaction:read,transaction:write" {
			t.Fatalf("principal = %+v", p)
		}
	})

	t.Run("a token the verifier refuses is an invalid token", func(t *testing.T) {
		w := newAuthWorld(t)
		if _, err := w.authenticate.Execute(ctx, "forged"); !errors.Is(err, ports.ErrInvalidToken) {
			t.Fatalf("= %v", err)
		}
	})

	t.Run("a token of a revoked credential stops working at once", func(t *testing.T) {
		w := newAuthWorld(t)
		acc := w.newAccount(t)
		raw := w.tokenFor(acc.Account.ID(), acc.Credential.ClientID, domain.ScopeTransactionRead)
		if _, err := w.authenticate.Execute(ctx, raw); err != nil {
			t.Fatal(err)
		}
		if err := w.revokeCred.Execute(ctx, domain.Principal{AccountID: acc.Account.ID()}, acc.Credential.ClientID); err != nil {
			t.Fatal(err)
		}
		if _, err := w.authenticate.Execute(ctx, raw); !errors.Is(err, ports.ErrInvalidToken) {
			t.Fatalf("= %v, want ports.ErrInvalidToken", err)
		}
	})

	t.Run("a token of a disabled account is forbidden, not invalid", func(t *testing.T) {
		w := newAuthWorld(t)
		acc := w.newAccount(t)
		raw := w.tokenFor(acc.Account.ID(), acc.Credential.ClientID, domain.ScopeTransactionRead)
		if err := w.disable.Execute(ctx, acc.Account.ID()); err != nil {
			t.Fatal(err)
		}
		_, err := w.authenticate.Execute(ctx, raw)
		if !errors.Is(err, domain.ErrAccountDisabled) || errors.Is(err, ports.ErrInvalidToken) {
			t.Fatalf("= %v, want domain.ErrAccountDisabled", err)
		}
	})

	t.Run("a token naming another account than its credential's is invalid", func(t *testing.T) {
		w := newAuthWorld(t)
		a, b := w.newAccount(t), w.newAccount(t)
		raw := w.tokenFor(b.Account.ID(), a.Credential.ClientID, domain.ScopeTransactionRead)
		if _, err := w.authenticate.Execute(ctx, raw); !errors.Is(err, ports.ErrInvalidToken) {
			t.Fatalf("= %v", err)
		}
	})

	t.Run("a token of an unknown credential is invalid", func(t *testing.T) {
		w := newAuthWorld(t)
		acc := w.newAccount(t)
		raw := w.tokenFor(acc.Account.ID(), "gone", domain.ScopeTransactionRead)
		if _, err := w.authenticate.Execute(ctx, raw); !errors.Is(err, ports.ErrInvalidToken) {
			t.Fatalf("= %v", err)
		}
	})

	t.Run("an upstream token finds its account through its credential", func(t *testing.T) {
		w := newAuthWorld(t)
		acc := w.newAccount(t, domain.ScopeWithdrawalRead)
		raw := w.tokenFor("", acc.Credential.ClientID, domain.ScopeWithdrawalRead, domain.ScopeTransactionWrite)
		p, err := w.authenticate.Execute(ctx, raw)
		if err != nil {
			t.Fatal(err)
		}
		if p.AccountID != acc.Account.ID() || domain.JoinScopes(p.Scopes) != "withdrawal:read" {
			t.Fatalf("principal = %+v, want the account's id and only the scopes it holds", p)
		}
	})

	t.Run("a store that cannot answer is passed on, not taken for an invalid token", func(t *testing.T) {
		w := newAuthWorld(t)
		acc := w.newAccount(t)
		raw := w.tokenFor(acc.Account.ID(), acc.Credential.ClientID)
		w.repo.FailAll(ports.ErrUnavailable)
		_, err := w.authenticate.Execute(ctx, raw)
		if !errors.Is(err, ports.ErrUnavailable) || errors.Is(err, ports.ErrInvalidToken) {
			t.Fatalf("= %v", err)
		}
	})
}

var base64URL43 = regexp.MustCompile(`^[A-Za-z0-9_-]{43}$`)

func TestCreateCredential(t *testing.T) {
	w := newAuthWorld(t)
	ctx := context.Background()
	acc := w.newAccount(t)
	p := domain.Principal{AccountID: acc.Account.ID(), ClientID: acc.Credential.ClientID}

	cred, err := w.createCred.Execute(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	if !base64URL43.MatchString(cred.Secret) {
		t.Errorf("secret %q is not 32 bytes of base64url without padding", cred.Secret)
	}
	if raw, err := base64.RawURLEncoding.DecodeString(cred.Secret); err != nil || len(raw) != 32 {
		t.Errorf("secret decodes to %d bytes, %v", len(raw), err)
	}
	if cred.ClientID == "" || cred.ClientID == acc.Credential.ClientID || !cred.CreatedAt.Equal(authStart) {
		t.Errorf("credential = %s created %v", cred.ClientID, cred.CreatedAt)
	}
	if strings.Contains(fmt.Sprintf("%v %+v %#v %s", cred, cred, cred, cred), cred.Secret) {
		t.Error("printing a new credential shows its secret")
	}
	stored, err := w.repo.GetCredential(ctx, cred.ClientID)
	if err != nil {
		t.Fatal(err)
	}
	if stored.AccountID != acc.Account.ID() || !bytes.Equal(stored.SecretHash, w.hasher.Hash(cred.Secret)) || bytes.Contains(stored.SecretHash, []byte(cred.Secret)) {
		t.Error("the store does not hold the secret's keyed hash only")
	}
	if _, err := w.issue.Execute(ctx, cred.ClientID, cred.Secret, nil); err != nil {
		t.Errorf("the new credential obtains no token: %v", err)
	}
	if _, err := w.issue.Execute(ctx, acc.Credential.ClientID, acc.Credential.Secret, nil); err != nil {
		t.Errorf("the first credential stopped working: %v", err)
	}
}

func TestRevokeCredential(t *testing.T) {
	w := newAuthWorld(t)
	ctx := context.Background()
	a, b := w.newAccount(t), w.newAccount(t)

	err := w.revokeCred.Execute(ctx, domain.Principal{AccountID: b.Account.ID()}, a.Credential.ClientID)
	if !errors.Is(err, domain.ErrNotFound) {
		t.Fatalf("revoking another account's credential = %v, want domain.ErrNotFound", err)
	}
	if err := w.revokeCred.Execute(ctx, domain.Principal{AccountID: a.Account.ID()}, "unknown"); !errors.Is(err, domain.ErrNotFound) {
		t.Fatalf("revoking an unknown credential = %v, want domain.ErrNotFound", err)
	}
	if _, err := w.issue.Execute(ctx, a.Credential.ClientID, a.Credential.Secret, nil); err != nil {
		t.Fatalf("a's credential was touched: %v", err)
	}
	if err := w.revokeCred.Execute(ctx, domain.Principal{AccountID: a.Account.ID()}, a.Credential.ClientID); err != nil {
		t.Fatal(err)
	}
	stored, _ := w.repo.GetCredential(ctx, a.Credential.ClientID)
	if stored.RevokedAt == nil || !stored.RevokedAt.Equal(authStart) {
		t.Errorf("revoked at %v, want %v", stored.RevokedAt, authStart)
	}
}

var webhookSecretFormat = regexp.MustCompile(`^whsec_[A-Za-z0-9+/]{43}=$`)

func TestCreateAccount(t *testing.T) {
	w := newAuthWorld(t)
	ctx := context.Background()

	t.Run("without scopes the account gets every scope and a working first credential", func(t *testing.T) {
		created, err := w.createAccount.Execute(ctx, "  Loja  ", nil)
		if err != nil {
			t.Fatal(err)
		}
		a := created.Account
		if a.Name() != "Loja" || !a.Active() || domain.JoinScopes(a.Scopes()) != domain.JoinScopes(domain.AllScopes()) {
			t.Errorf("account = %q %s %v", a.Name(), a.Status(), a.Scopes())
		}
		if !webhookSecretFormat.MatchString(a.Webhook().Current) {
			t.Errorf("webhook secret %q is not whsec_ and base64 of 32 bytes", a.Webhook().Current)
		}
		if !base64URL43.MatchString(created.Credential.Secret) {
			t.Errorf("secret %q", created.Credential.Secret)
		}
		if _, err := w.issue.Execute(ctx, created.Credential.ClientID, created.Credential.Secret, nil); err != nil {
			t.Errorf("first credential obtains no token: %v", err)
		}
	})

	t.Run("two accounts never share a secret", func(t *testing.T) {
		x, y := w.newAccount(t), w.newAccount(t)
		if x.Credential.Secret == y.Credential.Secret || x.Account.Webhook().Current == y.Account.Webhook().Current {
			t.Error("secrets repeat")
		}
	})

	t.Run("an empty name is refused and stores nothing", func(t *testing.T) {
		before, err := w.repo.ListAccounts(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.createAccount.Execute(ctx, "   ", nil); err == nil {
			t.Fatal("accepted")
		}
		if after, err := w.repo.ListAccounts(ctx); err != nil || len(after) != len(before) {
			t.Error("an account was stored")
		}
	})
}

func TestListAccountsShowsCredentialsWithoutHashes(t *testing.T) {
	w := newAuthWorld(t)
	ctx := context.Background()
	a := w.newAccount(t)
	w.clock.Advance(time.Minute)
	b := w.newAccount(t)
	if _, err := w.createCred.Execute(ctx, domain.Principal{AccountID: b.Account.ID()}); err != nil {
		t.Fatal(err)
	}
	list, err := application.NewListAccounts(w.repo).Execute(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 || list[0].Account.ID() != a.Account.ID() || len(list[0].Credentials) != 1 || len(list[1].Credentials) != 2 {
		t.Fatalf("listing = %+v", list)
	}
	for _, l := range list {
		for _, c := range l.Credentials {
			if c.SecretHash != nil {
				t.Errorf("credential %s listed with its hash", c.ClientID)
			}
		}
	}
}

func TestDisableAccount(t *testing.T) {
	w := newAuthWorld(t)
	ctx := context.Background()
	acc := w.newAccount(t)
	if err := w.disable.Execute(ctx, acc.Account.ID()); err != nil {
		t.Fatal(err)
	}
	got, _ := w.repo.GetAccount(ctx, acc.Account.ID())
	if got.Active() {
		t.Error("still active")
	}
	if err := w.disable.Execute(ctx, "missing"); !errors.Is(err, domain.ErrNotFound) {
		t.Errorf("disabling an unknown account = %v, want domain.ErrNotFound", err)
	}
}

func TestWebhookSecretRotation(t *testing.T) {
	w := newAuthWorld(t)
	ctx := context.Background()
	acc := w.newAccount(t)
	p := domain.Principal{AccountID: acc.Account.ID()}
	get := application.NewGetWebhookSecret(w.repo, w.clock)
	rotate := application.NewRotateWebhookSecret(w.repo, w.clock, w.hasher)

	first, err := get.Execute(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	if first.Current != acc.Account.Webhook().Current || first.Previous != "" || first.PreviousExpiresAt != nil {
		t.Fatalf("before rotation: %+v", first)
	}

	w.clock.Advance(time.Hour)
	rotated, err := rotate.Execute(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	if !webhookSecretFormat.MatchString(rotated.Current) || rotated.Current == first.Current || rotated.Previous != first.Current {
		t.Fatalf("after rotation: %+v", rotated)
	}
	wantUntil := authStart.Add(time.Hour + application.WebhookOverlap)
	if rotated.PreviousExpiresAt == nil || !rotated.PreviousExpiresAt.Equal(wantUntil) {
		t.Fatalf("previous expires at %v, want %v", rotated.PreviousExpiresAt, wantUntil)
	}
	if signing := rotated.Signing(authStart.Add(2 * time.Hour)); len(signing) != 2 {
		t.Errorf("during the overlap %d secrets sign, want 2", len(signing))
	}
	if signing := rotated.Signing(wantUntil); len(signing) != 1 {
		t.Errorf("after the overlap %d secrets sign, want 1", len(signing))
	}
	stored, _ := get.Execute(ctx, p)
	if stored.Current != rotated.Current || stored.Previous != rotated.Previous {
		t.Errorf("stored %+v, answered %+v", stored, rotated)
	}
	w.clock.Advance(application.WebhookOverlap)
	after, err := get.Execute(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	if after.Current != rotated.Current || after.Previous != "" || after.PreviousExpiresAt != nil {
		t.Errorf("after the overlap: %+v, want the previous secret gone", after)
	}
	if _, err := get.Execute(ctx, domain.Principal{AccountID: "missing"}); !errors.Is(err, domain.ErrNotFound) {
		t.Errorf("unknown account = %v", err)
	}
	if _, err := rotate.Execute(ctx, domain.Principal{AccountID: "missing"}); !errors.Is(err, domain.ErrNotFound) {
		t.Errorf("unknown account = %v", err)
	}
}

func TestConstructorsRefuseNilPorts(t *testing.T) {
	w := newAuthWorld(t)
	for name, build := range map[string]func(){
		"IssueToken without issuer":       func() { application.NewIssueToken(w.repo, nil, w.hasher, time.Hour) },
		"IssueToken without hasher":       func() { application.NewIssueToken(w.repo, w.issuer, nil, time.Hour) },
		"IssueToken with a zero lifetime": func() { application.NewIssueToken(w.repo, w.issuer, w.hasher, 0) },
		"IssueUpstreamToken without exchanger": func() {
			application.NewIssueUpstreamToken(w.repo, nil)
		},
		"Authenticate without verifier":     func() { application.NewAuthenticate(nil, w.repo) },
		"Authenticate without repository":   func() { application.NewAuthenticate(w.verifier, nil) },
		"CreateCredential without ids":      func() { application.NewCreateCredential(w.repo, nil, w.clock, w.hasher) },
		"CreateAccount without hasher":      func() { application.NewCreateAccount(w.repo, w.ids, w.clock, nil) },
		"SeedAccounts without clock":        func() { application.NewSeedAccounts(w.repo, w.ids, nil, w.hasher) },
		"RevokeCredential without clock":    func() { application.NewRevokeCredential(w.repo, nil) },
		"ListAccounts without repository":   func() { application.NewListAccounts(nil) },
		"DisableAccount without repository": func() { application.NewDisableAccount(nil) },
		"GetWebhookSecret without clock": func() {
			application.NewGetWebhookSecret(w.repo, nil)
		},
		"RotateWebhookSecret without clock": func() { application.NewRotateWebhookSecret(w.repo, nil, w.hasher) },
	} {
		t.Run(name+" panics", func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Fatal("no panic")
				}
			}()
			build()
		})
	}
}
