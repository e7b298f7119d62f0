package application_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/pixgate/pixgate/application"
	"github.com/pixgate/pixgate/domain"
	"github.com/pixgate/pixgate/ports"
)

const (
	seedSecretA = "demo-secret-AAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
	seedSecretB = "ci-secret-BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB"
)

func TestParseSeedClients(t *testing.T) {
	t.Run("an entry without scopes gets every scope", func(t *testing.T) {
		got, err := application.ParseSeedClients("Demo:demo-client:" + seedSecretA)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 1 || got[0].Name != "Demo" || got[0].ClientID != "demo-client" || got[0].Secret != seedSecretA ||
			domain.JoinScopes(got[0].Scopes) != domain.JoinScopes(domain.AllScopes()) {
			t.Fatalf("parsed %#v", got)
		}
	})

	t.Run("scopes are everything after the third colon, colons included", func(t *testing.T) {
		got, err := application.ParseSeedClients(" Demo:demo:" + seedSecretA + ":transaction:read, withdrawal:write ; CI Suite:ci.client_1:" + seedSecretB + "; ")
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 2 {
			t.Fatalf("parsed %d entries", len(got))
		}
		if domain.JoinScopes(got[0].Scopes) != "transaction:read,withdrawal:write" || got[1].Name != "CI Suite" || got[1].Secret != seedSecretB {
			t.Fatalf("parsed %v and %v", got[0], got[1])
		}
	})

	t.Run("an empty specification seeds nothing", func(t *testing.T) {
		got, err := application.ParseSeedClients("  ")
		if err != nil || len(got) != 0 {
			t.Fatalf("= %v, %v", got, err)
		}
	})

	t.Run("printing a parsed client never shows its secret", func(t *testing.T) {
		got, err := application.ParseSeedClients("Demo:demo:" + seedSecretA)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range []string{fmt.Sprint(got), fmt.Sprintf("%+v", got), fmt.Sprintf("%#v", got), fmt.Sprintf("%v", got[0])} {
			if strings.Contains(s, seedSecretA) {
				t.Fatalf("printed %s", s)
			}
		}
	})

	bad := []struct {
		name     string
		spec     string
		index    int
		clientID string // "" when the error must not name one
		secrets  []string
	}{
		{"an entry with two fields is refused by position only", "Demo:" + seedSecretA, 1, "", []string{seedSecretA}},
		{"a secret shorter than 32 characters is refused", "Demo:demo:short-secret-31-characters-xx", 1, "", []string{"short-secret-31-characters-xx"}},
		{"a missing client id is refused", "Demo::" + seedSecretA, 1, "", []string{seedSecretA}},
		{"a secret placed as client id is not echoed", "Demo:" + seedSecretA + ":transaction:read", 1, "", []string{seedSecretA}},
		{"a secret with a colon is refused without echoing either half", "Demo:demo:first-half-of-the-secret-0123456789:second-half", 1, "demo", []string{"first-half", "second-half"}},
		{"an unknown scope is refused by position", "Demo:demo:" + seedSecretA + ":transaction:read,superuser", 1, "demo", []string{seedSecretA, "superuser"}},
		{"an empty scope list is refused", "Demo:demo:" + seedSecretA + ":", 1, "demo", []string{seedSecretA}},
		{"an empty name is refused", ":demo:" + seedSecretA, 1, "demo", []string{seedSecretA}},
		{"a client id with a space is refused", "Demo:de mo:" + seedSecretA, 1, "", []string{seedSecretA}},
		{"the second of two entries with one client id is refused", "A:same:" + seedSecretA + ";B:same:" + seedSecretB, 2, "same", []string{seedSecretA, seedSecretB}},
		{"a bad entry is named by its position in the list", "A:a:" + seedSecretA + ";;B:b:tiny", 3, "", []string{seedSecretA, "tiny"}},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			_, err := application.ParseSeedClients(tc.spec)
			var entryErr *application.SeedEntryError
			if !errors.As(err, &entryErr) {
				t.Fatalf("= %v, want a *SeedEntryError", err)
			}
			if entryErr.Index != tc.index || entryErr.ClientID != tc.clientID {
				t.Errorf("names entry %d client %q, want %d %q", entryErr.Index, entryErr.ClientID, tc.index, tc.clientID)
			}
			for _, s := range tc.secrets {
				if strings.Contains(err.Error(), s) {
					t.Errorf("error %q contains %q", err, s)
				}
			}
			if !strings.Contains(err.Error(), fmt.Sprintf("entry %d", tc.index)) {
				t.Errorf("error %q does not name entry %d", err, tc.index)
			}
		})
	}
}

func TestSeedAccounts(t *testing.T) {
	ctx := context.Background()

	t.Run("missing clients are created and can obtain tokens", func(t *testing.T) {
		w := newAuthWorld(t)
		clients, err := application.ParseSeedClients("Demo:demo:" + seedSecretA + ":transaction:read;CI:ci:" + seedSecretB)
		if err != nil {
			t.Fatal(err)
		}
		res, err := application.NewSeedAccounts(w.repo, w.ids, w.clock, w.hasher).Execute(ctx, clients)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Join(res.Created, ",") != "demo,ci" || len(res.Existing) != 0 {
			t.Fatalf("result %+v", res)
		}
		grant, err := w.issue.Execute(ctx, "demo", seedSecretA, nil)
		if err != nil {
			t.Fatal(err)
		}
		if domain.JoinScopes(grant.Scopes) != "transaction:read" {
			t.Errorf("scopes = %v", grant.Scopes)
		}
		if _, err := w.issue.Execute(ctx, "ci", seedSecretB, nil); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("existing clients are left alone, even with another secret in the list", func(t *testing.T) {
		w := newAuthWorld(t)
		seed := application.NewSeedAccounts(w.repo, w.ids, w.clock, w.hasher)
		first, _ := application.ParseSeedClients("Demo:demo:" + seedSecretA)
		if _, err := seed.Execute(ctx, first); err != nil {
			t.Fatal(err)
		}
		changed, _ := application.ParseSeedClients("Renamed:demo:" + seedSecretB + ":withdrawal:read")
		res, err := seed.Execute(ctx, changed)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Created) != 0 || strings.Join(res.Existing, ",") != "demo" {
			t.Fatalf("result %+v", res)
		}
		if _, err := w.issue.Execute(ctx, "demo", seedSecretA, nil); err != nil {
			t.Errorf("the original secret stopped working: %v", err)
		}
		if _, err := w.issue.Execute(ctx, "demo", seedSecretB, nil); !errors.Is(err, ports.ErrInvalidCredentials) {
			t.Errorf("the listed secret replaced the stored one: %v", err)
		}
		if all, err := w.repo.ListAccounts(ctx); err != nil || len(all) != 1 {
			t.Errorf("%d accounts (%v), want 1", len(all), err)
		}
	})

	t.Run("a client seeded concurrently by another instance counts as existing", func(t *testing.T) {
		w := newAuthWorld(t)
		other, err := w.createAccount.Execute(ctx, "Other instance", nil)
		if err != nil {
			t.Fatal(err)
		}
		w.repo.Before("CreateCredential", 1, func() {
			c := domain.Credential{ClientID: "demo", AccountID: other.Account.ID(), SecretHash: w.hasher.Hash(seedSecretA), CreatedAt: w.clock.Now()}
			if err := w.repo.Repo.CreateCredential(ctx, c); err != nil {
				t.Errorf("staging the other instance's client: %v", err)
			}
		})
		clients, _ := application.ParseSeedClients("Demo:demo:" + seedSecretA)
		res, err := application.NewSeedAccounts(w.repo, w.ids, w.clock, w.hasher).Execute(ctx, clients)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Join(res.Existing, ",") != "demo" || len(res.Created) != 0 {
			t.Fatalf("result %+v", res)
		}
	})

	t.Run("a store that cannot answer stops the seeding without the secret in the error", func(t *testing.T) {
		w := newAuthWorld(t)
		w.repo.FailAll(ports.ErrUnavailable)
		clients, _ := application.ParseSeedClients("Demo:demo:" + seedSecretA)
		_, err := application.NewSeedAccounts(w.repo, w.ids, w.clock, w.hasher).Execute(ctx, clients)
		if !errors.Is(err, ports.ErrUnavailable) || strings.Contains(err.Error(), seedSecretA) {
			t.Fatalf("= %v", err)
		}
	})
}
