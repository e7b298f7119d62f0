package domain_test

import (
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pixgate/pixgate/domain"
)

func TestParseScope(t *testing.T) {
	for _, s := range domain.AllScopes() {
		t.Run(string(s)+" parses as itself", func(t *testing.T) {
			if got, err := domain.ParseScope(string(s)); err != nil || got != s {
				t.Fatalf("ParseScope(%q) = %q, %v", s, got, err)
			}
		})
	}
	for _, in := range []string{"", "transaction:delete", "Transaction:Read", "transaction:read ", "transaction", "*"} {
		t.Run(strconvQuote(in)+" is refused", func(t *testing.T) {
			if got, err := domain.ParseScope(in); err == nil {
				t.Fatalf("ParseScope(%q) = %q", in, got)
			}
		})
	}
}

func TestParseScopes(t *testing.T) {
	for _, c := range []struct {
		name string
		in   string
		want []domain.Scope
	}{
		{"one scope is read", "transaction:read", []domain.Scope{domain.ScopeTransactionRead}},
		{"scopes keep the order given", "withdrawal:write,transaction:read",
			[]domain.Scope{domain.ScopeWithdrawalWrite, domain.ScopeTransactionRead}},
		{"spaces around scopes are ignored", " transaction:read , transaction:write ",
			[]domain.Scope{domain.ScopeTransactionRead, domain.ScopeTransactionWrite}},
		{"a repeated scope is kept once", "transaction:read,transaction:read,withdrawal:read",
			[]domain.Scope{domain.ScopeTransactionRead, domain.ScopeWithdrawalRead}},
		{"every scope is read", "transaction:read,transaction:write,withdrawal:read,withdrawal:write,balance:read,account:admin", domain.AllScopes()},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := domain.ParseScopes(c.in)
			if err != nil || !slices.Equal(got, c.want) {
				t.Fatalf("ParseScopes(%q) = %v, %v; want %v", c.in, got, err, c.want)
			}
		})
	}
	for _, c := range []struct{ name, in string }{
		{"an empty list is refused", ""},
		{"a trailing comma is refused", "transaction:read,"},
		{"an empty item is refused", "transaction:read,,withdrawal:read"},
		{"an unknown scope is refused", "transaction:read,admin"},
		{"a space-separated list is refused", "transaction:read withdrawal:read"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got, err := domain.ParseScopes(c.in); err == nil {
				t.Fatalf("ParseScopes(%q) = %v", c.in, got)
			}
		})
	}
}

func TestJoinScopes(t *testing.T) {
	if got := domain.JoinScopes(domain.AllScopes()); got != "transaction:read,transaction:write,withdrawal:read,withdrawal:write,balance:read,account:admin" {
		t.Fatalf("JoinScopes(AllScopes()) = %q", got)
	}
	if got := domain.JoinScopes(nil); got != "" {
		t.Fatalf("JoinScopes(nil) = %q", got)
	}
	t.Run("joined scopes parse back to themselves", func(t *testing.T) {
		all := domain.AllScopes()
		for mask := 1; mask < 1<<len(all); mask++ {
			var set []domain.Scope
			for i, s := range all {
				if mask&(1<<i) != 0 {
					set = append(set, s)
				}
			}
			back, err := domain.ParseScopes(domain.JoinScopes(set))
			if err != nil || !slices.Equal(back, set) {
				t.Fatalf("ParseScopes(JoinScopes(%v)) = %v, %v", set, back, err)
			}
		}
	})
}

func TestWebhookSecretsSigning(t *testing.T) {
	expires := base.Add(24 * time.Hour)
	rotated := domain.WebhookSecrets{Current: "whsec_new", Previous: "whsec_old", PreviousExpiresAt: &expires}
	for _, c := range []struct {
		name    string
		secrets domain.WebhookSecrets
		at      time.Time
		want    []string
	}{
		{"a secret without a rotation signs alone", domain.WebhookSecrets{Current: "whsec_a"}, base, []string{"whsec_a"}},
		{"both secrets sign during the overlap", rotated, base, []string{"whsec_new", "whsec_old"}},
		{"both secrets sign a nanosecond before the overlap ends", rotated, expires.Add(-time.Nanosecond), []string{"whsec_new", "whsec_old"}},
		{"the new secret signs alone when the overlap ends", rotated, expires, []string{"whsec_new"}},
		{"the new secret signs alone after the overlap", rotated, expires.Add(time.Hour), []string{"whsec_new"}},
		{"a previous secret without an expiry does not sign", domain.WebhookSecrets{Current: "whsec_a", Previous: "whsec_b"}, base, []string{"whsec_a"}},
		{"an expiry without a previous secret adds nothing", domain.WebhookSecrets{Current: "whsec_a", PreviousExpiresAt: &expires}, base, []string{"whsec_a"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := c.secrets.Signing(c.at); !slices.Equal(got, c.want) {
				t.Fatalf("Signing(%v) = %v, want %v", c.at, got, c.want)
			}
		})
	}
}

func TestNewAccount(t *testing.T) {
	scopes := []domain.Scope{domain.ScopeTransactionRead, domain.ScopeWithdrawalWrite}
	for _, c := range []struct {
		name, id, accName string
		scopes            []domain.Scope
		secret            string
		ok                bool
	}{
		{"a valid account is accepted", "acc-1", "Loja Exemplo", scopes, "whsec_a", true},
		{"a name of 150 characters is accepted", "acc-1", strings.Repeat("ã", 150), scopes, "whsec_a", true},
		{"a name of 151 characters is refused", "acc-1", strings.Repeat("ã", 151), scopes, "whsec_a", false},
		{"an empty id is refused", "", "Loja", scopes, "whsec_a", false},
		{"an empty name is refused", "acc-1", "", scopes, "whsec_a", false},
		{"a blank name is refused", "acc-1", "   ", scopes, "whsec_a", false},
		{"no scopes are refused", "acc-1", "Loja", nil, "whsec_a", false},
		{"an empty webhook secret is refused", "acc-1", "Loja", scopes, "", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			a, err := domain.NewAccount(c.id, c.accName, c.scopes, c.secret, base)
			if c.ok != (err == nil) || c.ok != (a != nil) {
				t.Fatalf("NewAccount = %v, %v; want ok %v", a, err, c.ok)
			}
		})
	}

	t.Run("a new account is active with its scopes and secret", func(t *testing.T) {
		in := slices.Clone(scopes)
		a, err := domain.NewAccount("acc-1", "  Loja Exemplo  ", in, "whsec_a", base.In(saoPaulo))
		if err != nil {
			t.Fatal(err)
		}
		if a.ID() != "acc-1" || a.Name() != "Loja Exemplo" || a.Status() != domain.AccountActive || !a.Active() {
			t.Fatalf("%s %q %s", a.ID(), a.Name(), a.Status())
		}
		if !a.CreatedAt().Equal(base) || a.CreatedAt().Location() != time.UTC {
			t.Fatalf("CreatedAt() = %v", a.CreatedAt())
		}
		if a.Webhook() != (domain.WebhookSecrets{Current: "whsec_a"}) {
			t.Fatalf("Webhook() = %+v", a.Webhook())
		}
		if !a.HasScope(domain.ScopeTransactionRead) || !a.HasScope(domain.ScopeWithdrawalWrite) ||
			a.HasScope(domain.ScopeTransactionWrite) || a.HasScope(domain.ScopeWithdrawalRead) {
			t.Fatalf("Scopes() = %v", a.Scopes())
		}
		in[0] = domain.ScopeWithdrawalRead
		got := a.Scopes()
		got[1] = domain.ScopeTransactionWrite
		if !slices.Equal(a.Scopes(), scopes) {
			t.Fatalf("the account shares its scopes with the caller: %v", a.Scopes())
		}
	})
}

func TestAccountDisable(t *testing.T) {
	a, err := domain.NewAccount("acc-1", "Loja", domain.AllScopes(), "whsec_a", base)
	if err != nil {
		t.Fatal(err)
	}
	a.Disable()
	if a.Active() || a.Status() != domain.AccountDisabled {
		t.Fatalf("after Disable: active %v status %s", a.Active(), a.Status())
	}
	a.Disable()
	if a.Status() != domain.AccountDisabled {
		t.Fatal("disabling twice changed the status")
	}
}

func TestAccountRotateWebhookSecret(t *testing.T) {
	a, err := domain.NewAccount("acc-1", "Loja", domain.AllScopes(), "whsec_one", base)
	if err != nil {
		t.Fatal(err)
	}
	at := base.Add(time.Hour).In(saoPaulo)
	a.RotateWebhookSecret("whsec_two", at, 24*time.Hour)
	w := a.Webhook()
	if w.Current != "whsec_two" || w.Previous != "whsec_one" || w.PreviousExpiresAt == nil ||
		!w.PreviousExpiresAt.Equal(at.Add(24*time.Hour)) || w.PreviousExpiresAt.Location() != time.UTC {
		t.Fatalf("after rotation: %+v", w)
	}
	if got := w.Signing(at.Add(23 * time.Hour)); !slices.Equal(got, []string{"whsec_two", "whsec_one"}) {
		t.Fatalf("Signing during the overlap = %v", got)
	}
	if got := w.Signing(at.Add(24 * time.Hour)); !slices.Equal(got, []string{"whsec_two"}) {
		t.Fatalf("Signing after the overlap = %v", got)
	}

	t.Run("a second rotation keeps only the secret it replaces", func(t *testing.T) {
		a.RotateWebhookSecret("whsec_three", at.Add(time.Minute), 24*time.Hour)
		w := a.Webhook()
		if w.Current != "whsec_three" || w.Previous != "whsec_two" {
			t.Fatalf("after a second rotation: %+v", w)
		}
		if got := w.Signing(at.Add(2 * time.Minute)); slices.Contains(got, "whsec_one") {
			t.Fatalf("the secret rotated out twice still signs: %v", got)
		}
	})
}

func TestUnmarshalAccountFromDatabase(t *testing.T) {
	exp := base.Add(time.Hour)
	secrets := domain.WebhookSecrets{Current: "whsec_b", Previous: "whsec_a", PreviousExpiresAt: &exp}
	a := domain.UnmarshalAccountFromDatabase(domain.AccountRecord{ID: "acc-9", Name: "Loja", Status: domain.AccountDisabled,
		Scopes: []domain.Scope{domain.ScopeTransactionRead}, Webhook: secrets, CreatedAt: base.In(saoPaulo), Version: 4})
	if a.ID() != "acc-9" || a.Name() != "Loja" || a.Active() || !reflect.DeepEqual(a.Webhook(), secrets) ||
		!slices.Equal(a.Scopes(), []domain.Scope{domain.ScopeTransactionRead}) || a.CreatedAt().Location() != time.UTC ||
		!a.CreatedAt().Equal(base) || a.Version() != 4 {
		t.Fatalf("rebuilt account %+v", a)
	}
}

func TestCredentialAndPrincipal(t *testing.T) {
	if (domain.Credential{}).Revoked() {
		t.Fatal("a credential without RevokedAt is revoked")
	}
	if !(domain.Credential{RevokedAt: &base}).Revoked() {
		t.Fatal("a credential with RevokedAt is not revoked")
	}
	p := domain.Principal{AccountID: "acc-1", ClientID: "cli-1", Scopes: []domain.Scope{domain.ScopeWithdrawalRead}}
	if !p.HasScope(domain.ScopeWithdrawalRead) || p.HasScope(domain.ScopeWithdrawalWrite) {
		t.Fatalf("Principal.HasScope with %v", p.Scopes)
	}
}

func TestUpgradeLegacyScopes(t *testing.T) {
	const (
		tr    = domain.ScopeTransactionRead
		ww    = domain.ScopeWithdrawalWrite
		bal   = domain.ScopeBalanceRead
		admin = domain.ScopeAccountAdmin
	)
	for _, c := range []struct {
		name     string
		revision int
		in, want []domain.Scope
	}{
		{"a reader of transactions read the balance before: it keeps reading it, and keeps managing itself",
			domain.ScopesOriginal, []domain.Scope{tr}, []domain.Scope{tr, bal, admin}},
		{"an account without transaction:read never read the balance and does not start to",
			domain.ScopesOriginal, []domain.Scope{ww}, []domain.Scope{ww, admin}},
		{"an account stored with balance:read keeps its scopes and gets account:admin, which every token had",
			domain.ScopesWithBalance, []domain.Scope{ww}, []domain.Scope{ww, admin}},
		{"an account stored under the current revision is left as it is, account:admin or not",
			domain.ScopesCurrent, []domain.Scope{tr, bal}, []domain.Scope{tr, bal}},
		{"an account holding the scopes already gets no repeats",
			domain.ScopesOriginal, []domain.Scope{tr, bal, admin}, []domain.Scope{tr, bal, admin}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := domain.UpgradeLegacyScopes(c.in, c.revision); !slices.Equal(got, c.want) {
				t.Fatalf("UpgradeLegacyScopes(%v, %d) = %v, want %v", c.in, c.revision, got, c.want)
			}
		})
	}
}

func TestParseRequestedScopes(t *testing.T) {
	for _, c := range []struct {
		name string
		in   string
		want []domain.Scope
		ok   bool
	}{
		{"space-separated scopes, as RFC 6749 writes them", "transaction:read balance:read",
			[]domain.Scope{domain.ScopeTransactionRead, domain.ScopeBalanceRead}, true},
		{"comma-separated scopes, as pixgate's token response writes them", "balance:read,transaction:read",
			[]domain.Scope{domain.ScopeBalanceRead, domain.ScopeTransactionRead}, true},
		{"mixed separators and repeats", " account:admin, account:admin  balance:read ",
			[]domain.Scope{domain.ScopeAccountAdmin, domain.ScopeBalanceRead}, true},
		{"an unknown scope is refused", "transaction:read admin", nil, false},
		{"a scope in the wrong case is unknown", "Transaction:Read", nil, false},
		{"an empty parameter asks for nothing and is refused", " , ", nil, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := domain.ParseRequestedScopes(c.in)
			if (err == nil) != c.ok || !slices.Equal(got, c.want) {
				t.Fatalf("ParseRequestedScopes(%q) = %v, %v; want %v (ok %v)", c.in, got, err, c.want, c.ok)
			}
		})
	}
}

func TestCredentialUseIsStale(t *testing.T) {
	now := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
	recent, old := now.Add(-59*time.Second), now.Add(-time.Minute)
	if !(domain.Credential{}).UseIsStale(now) {
		t.Error("a credential never used should record its first use")
	}
	if (domain.Credential{LastUsedAt: &recent}).UseIsStale(now) {
		t.Error("a use recorded 59 s ago should not be written again")
	}
	if !(domain.Credential{LastUsedAt: &old}).UseIsStale(now) {
		t.Error("a use recorded a minute ago should be written again")
	}
}
