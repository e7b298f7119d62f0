package storetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pixgate/pixgate/domain"
	"github.com/pixgate/pixgate/ports"
)

// TestAccounts states the behaviour every ports.AccountRepository must have. newRepo returns a
// repository to test; the suite keeps its data unique (ids carry the test's name and a counter),
// so newRepo may hand out the same store every time, and subtests run in parallel.
//
// An adapter's test file runs it in a few lines:
//
//	func TestAccounts(t *testing.T) {
//		storetest.TestAccounts(t, func(t *testing.T) ports.AccountRepository { return memory.NewAccounts() })
//	}
func TestAccounts(t *testing.T, newRepo func(t *testing.T) ports.AccountRepository) {
	t.Helper()
	ids := &accountIDs{prefix: fmt.Sprintf("st-%d", time.Now().UnixNano())}
	for _, c := range []struct {
		name string
		run  func(*testing.T, func(t *testing.T) ports.AccountRepository, *accountIDs)
	}{
		{"a created account reads back as it was stored", accountCreatedAccountReadsBackStored},
		{"an unknown account is not found", accountUnknownAccountNotFound},
		{"creating an account twice answers ErrDuplicate and keeps the first", accountCreatingAccountTwiceAnswersErrDuplicate},
		{"listing returns every created account oldest first", accountListingReturnsCreatedAccountOldest},
		{"an update stores what the function left", accountUpdateStoresFunctionLeft},
		{"an account is created at version 0 and each stored update adds one", accountAccountCreatedVersion0Stored},
		{"a failed update leaves nothing behind and returns the function's error", accountFailedUpdateLeavesNothingBehind},
		{"updating an unknown account is not found and does not call the function", accountUpdatingUnknownAccountNotFound},
		{"changing a fetched account changes nothing stored", accountChangingFetchedAccountChangesNothing},
		{"concurrent updates of one account are all applied", accountConcurrentUpdatesAccountAllApplied},
		{"a created credential reads back as it was stored", accountCreatedCredentialReadsBackStored},
		{"an unknown credential is not found", accountUnknownCredentialNotFound},
		{"a credential for an unknown account is not found", accountCredentialUnknownAccountNotFound},
		{"a client id is unique across accounts", accountClientIdUniqueAcrossAccounts},
		{"listing credentials shows only the account's own, oldest first, revoked included", accountListingCredentialsShowsOnlyAccount},
		{"revoking a credential records when, once", accountRevokingCredentialRecordsWhenOnce},
		{"another account's credential cannot be revoked and answers not found", accountAnotherAccountCredentialCannotRevoked},
		{"changing a fetched credential changes nothing stored", accountChangingFetchedCredentialChangesNothing},
		{"an account holds at most MaxActiveCredentials active credentials; revoking one makes room", accountAccountHoldsMostMaxActiveCredentialsActive},
		{"concurrent creations never take an account over the cap", accountConcurrentCreationsNeverTakeAccount},
		{"recording a use moves lastUsedAt forward, never back", accountRecordingUseMovesLastUsedAtForward},
	} {
		t.Run(c.name, func(t *testing.T) { c.run(t, newRepo, ids) })
	}
}

func accountCreatedAccountReadsBackStored(t *testing.T, newRepo func(t *testing.T) ports.AccountRepository, ids *accountIDs) {
	t.Parallel()
	repo, ctx := newRepo(t), context.Background()
	a := ids.account(t, "Loja Um")
	if err := repo.CreateAccount(ctx, a); err != nil {
		t.Fatalf("CreateAccount: %v", err)
	}
	got, err := repo.GetAccount(ctx, a.ID())
	if err != nil {
		t.Fatalf("GetAccount: %v", err)
	}
	assertSameAccount(t, got, a)
}

func accountUnknownAccountNotFound(t *testing.T, newRepo func(t *testing.T) ports.AccountRepository, ids *accountIDs) {
	t.Parallel()
	repo := newRepo(t)
	_, err := repo.GetAccount(context.Background(), ids.next("missing"))
	if !errors.Is(err, domain.ErrNotFound) {
		t.Fatalf("GetAccount(unknown) = %v, want domain.ErrNotFound", err)
	}
}

func accountCreatingAccountTwiceAnswersErrDuplicate(t *testing.T, newRepo func(t *testing.T) ports.AccountRepository, ids *accountIDs) {
	t.Parallel()
	repo, ctx := newRepo(t), context.Background()
	a := ids.account(t, "Primeira")
	mustCreateAccount(t, repo, a)
	again, err := domain.NewAccount(a.ID(), "Segunda", []domain.Scope{domain.ScopeTransactionRead}, "whsec_other", a.CreatedAt())
	if err != nil {
		t.Fatal(err)
	}
	if err := repo.CreateAccount(ctx, again); !errors.Is(err, ports.ErrDuplicate) {
		t.Fatalf("second CreateAccount = %v, want ports.ErrDuplicate", err)
	}
	got, err := repo.GetAccount(ctx, a.ID())
	if err != nil {
		t.Fatal(err)
	}
	assertSameAccount(t, got, a)
}

func accountListingReturnsCreatedAccountOldest(t *testing.T, newRepo func(t *testing.T) ports.AccountRepository, ids *accountIDs) {
	t.Parallel()
	repo, ctx := newRepo(t), context.Background()
	base := time.Date(2031, 1, 1, 0, 0, 0, 0, time.UTC)
	var created []*domain.Account
	for i := range 3 {
		a, err := domain.NewAccount(ids.next("list"), fmt.Sprintf("Loja %d", i), domain.AllScopes(), "whsec_x", base.Add(time.Duration(2-i)*time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		mustCreateAccount(t, repo, a)
		created = append(created, a)
	}
	list, err := repo.ListAccounts(ctx)
	if err != nil {
		t.Fatalf("ListAccounts: %v", err)
	}
	// The store may hold other tests' accounts; ours must all be there, in order.
	var order []string
	for _, a := range list {
		for _, c := range created {
			if a.ID() == c.ID() {
				order = append(order, a.ID())
				assertSameAccount(t, a, c)
			}
		}
	}
	want := []string{created[2].ID(), created[1].ID(), created[0].ID()}
	if strings.Join(order, ",") != strings.Join(want, ",") {
		t.Fatalf("listed order %v, want %v", order, want)
	}
	for i := 1; i < len(list); i++ {
		if list[i].CreatedAt().Before(list[i-1].CreatedAt()) {
			t.Fatalf("list is not oldest first at %d", i)
		}
	}
}

func accountUpdateStoresFunctionLeft(t *testing.T, newRepo func(t *testing.T) ports.AccountRepository, ids *accountIDs) {
	t.Parallel()
	repo, ctx := newRepo(t), context.Background()
	a := ids.account(t, "Loja")
	mustCreateAccount(t, repo, a)
	now := time.Date(2031, 2, 3, 4, 5, 6, 0, time.UTC)
	err := repo.UpdateAccount(ctx, a.ID(), func(acc *domain.Account) error {
		acc.RotateWebhookSecret("whsec_next", now, 24*time.Hour)
		acc.Disable()
		return nil
	})
	if err != nil {
		t.Fatalf("UpdateAccount: %v", err)
	}
	got, err := repo.GetAccount(ctx, a.ID())
	if err != nil {
		t.Fatal(err)
	}
	if got.Active() || got.Status() != domain.AccountDisabled {
		t.Errorf("status = %s, want disabled", got.Status())
	}
	w := got.Webhook()
	if w.Current != "whsec_next" || w.Previous != a.Webhook().Current {
		t.Errorf("webhook secrets = %q / %q, want whsec_next / %q", w.Current, w.Previous, a.Webhook().Current)
	}
	if w.PreviousExpiresAt == nil || !w.PreviousExpiresAt.Equal(now.Add(24*time.Hour)) {
		t.Errorf("previous expires at %v, want %v", w.PreviousExpiresAt, now.Add(24*time.Hour))
	}
}

func accountAccountCreatedVersion0Stored(t *testing.T, newRepo func(t *testing.T) ports.AccountRepository, ids *accountIDs) {
	t.Parallel()
	repo, ctx := newRepo(t), context.Background()
	a := ids.account(t, "Loja")
	mustCreateAccount(t, repo, a)
	for want := int64(0); want < 3; want++ {
		got, err := repo.GetAccount(ctx, a.ID())
		if err != nil {
			t.Fatalf("GetAccount: %v", err)
		}
		if got.Version() != want {
			t.Fatalf("GetAccount = version %d, want %d", got.Version(), want)
		}
		if err := repo.UpdateAccount(ctx, a.ID(), func(acc *domain.Account) error {
			if acc.Version() != want {
				return fmt.Errorf("fn saw version %d, want %d", acc.Version(), want)
			}
			return nil
		}); err != nil {
			t.Fatalf("UpdateAccount: %v", err)
		}
	}
	if err := repo.UpdateAccount(ctx, a.ID(), func(*domain.Account) error { return errRefused }); !errors.Is(err, errRefused) {
		t.Fatalf("UpdateAccount = %v, want the function's error", err)
	}
	if got, err := repo.GetAccount(ctx, a.ID()); err != nil {
		t.Fatalf("GetAccount: %v", err)
	} else if got.Version() != 3 {
		t.Fatalf("after a failed update: version %d, want 3", got.Version())
	}
}

func accountFailedUpdateLeavesNothingBehind(t *testing.T, newRepo func(t *testing.T) ports.AccountRepository, ids *accountIDs) {
	t.Parallel()
	repo, ctx := newRepo(t), context.Background()
	a := ids.account(t, "Loja")
	mustCreateAccount(t, repo, a)
	boom := errors.New("boom")
	err := repo.UpdateAccount(ctx, a.ID(), func(acc *domain.Account) error {
		acc.Disable()
		acc.RotateWebhookSecret("whsec_lost", time.Now(), time.Hour)
		return fmt.Errorf("refusing: %w", boom)
	})
	if !errors.Is(err, boom) {
		t.Fatalf("UpdateAccount = %v, want the function's error", err)
	}
	got, err := repo.GetAccount(ctx, a.ID())
	if err != nil {
		t.Fatal(err)
	}
	assertSameAccount(t, got, a)
}

func accountUpdatingUnknownAccountNotFound(t *testing.T, newRepo func(t *testing.T) ports.AccountRepository, ids *accountIDs) {
	t.Parallel()
	repo := newRepo(t)
	called := false
	err := repo.UpdateAccount(context.Background(), ids.next("missing"), func(*domain.Account) error {
		called = true
		return nil
	})
	if !errors.Is(err, domain.ErrNotFound) {
		t.Fatalf("UpdateAccount(unknown) = %v, want domain.ErrNotFound", err)
	}
	if called {
		t.Fatal("the function was called for an unknown account")
	}
}

func accountChangingFetchedAccountChangesNothing(t *testing.T, newRepo func(t *testing.T) ports.AccountRepository, ids *accountIDs) {
	t.Parallel()
	repo, ctx := newRepo(t), context.Background()
	a := ids.account(t, "Loja")
	mustCreateAccount(t, repo, a)
	a.Disable() // the caller's copy, after creation
	got, err := repo.GetAccount(ctx, a.ID())
	if err != nil {
		t.Fatal(err)
	}
	if !got.Active() {
		t.Fatal("disabling the created value reached the store")
	}
	got.Disable()
	again, err := repo.GetAccount(ctx, a.ID())
	if err != nil {
		t.Fatal(err)
	}
	if !again.Active() {
		t.Fatal("disabling a fetched value reached the store")
	}
}

func accountConcurrentUpdatesAccountAllApplied(t *testing.T, newRepo func(t *testing.T) ports.AccountRepository, ids *accountIDs) {
	t.Parallel()
	repo, ctx := newRepo(t), context.Background()
	a := ids.account(t, "Loja")
	mustCreateAccount(t, repo, a)
	const writers = 20
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for range writers {
		wg.Go(func() {
			// Each update appends one "+" to whatever the current secret is: a lost update
			// shows as a missing "+".
			errs <- repo.UpdateAccount(ctx, a.ID(), func(acc *domain.Account) error {
				acc.RotateWebhookSecret(acc.Webhook().Current+"+", time.Now(), time.Hour)
				return nil
			})
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("UpdateAccount: %v", err)
		}
	}
	got, err := repo.GetAccount(ctx, a.ID())
	if err != nil {
		t.Fatal(err)
	}
	want := a.Webhook().Current + strings.Repeat("+", writers)
	if got.Webhook().Current != want {
		t.Fatalf("after %d concurrent updates the secret is %q, want %q", writers, got.Webhook().Current, want)
	}
}

func accountCreatedCredentialReadsBackStored(t *testing.T, newRepo func(t *testing.T) ports.AccountRepository, ids *accountIDs) {
	t.Parallel()
	repo, ctx := newRepo(t), context.Background()
	a := ids.account(t, "Loja")
	mustCreateAccount(t, repo, a)
	c := ids.credential(a.ID())
	if err := repo.CreateCredential(ctx, c); err != nil {
		t.Fatalf("CreateCredential: %v", err)
	}
	got, err := repo.GetCredential(ctx, c.ClientID)
	if err != nil {
		t.Fatalf("GetCredential: %v", err)
	}
	assertSameCredential(t, got, c)
	if got.Revoked() {
		t.Fatal("a new credential reads back revoked")
	}
}

func accountUnknownCredentialNotFound(t *testing.T, newRepo func(t *testing.T) ports.AccountRepository, ids *accountIDs) {
	t.Parallel()
	repo := newRepo(t)
	_, err := repo.GetCredential(context.Background(), ids.next("missing"))
	if !errors.Is(err, domain.ErrNotFound) {
		t.Fatalf("GetCredential(unknown) = %v, want domain.ErrNotFound", err)
	}
}

func accountCredentialUnknownAccountNotFound(t *testing.T, newRepo func(t *testing.T) ports.AccountRepository, ids *accountIDs) {
	t.Parallel()
	repo, ctx := newRepo(t), context.Background()
	c := ids.credential(ids.next("missing"))
	if err := repo.CreateCredential(ctx, c); !errors.Is(err, domain.ErrNotFound) {
		t.Fatalf("CreateCredential(unknown account) = %v, want domain.ErrNotFound", err)
	}
	if _, err := repo.GetCredential(ctx, c.ClientID); !errors.Is(err, domain.ErrNotFound) {
		t.Fatalf("the refused credential was stored: %v", err)
	}
}

func accountClientIdUniqueAcrossAccounts(t *testing.T, newRepo func(t *testing.T) ports.AccountRepository, ids *accountIDs) {
	t.Parallel()
	repo, ctx := newRepo(t), context.Background()
	a, b := ids.account(t, "A"), ids.account(t, "B")
	mustCreateAccount(t, repo, a)
	mustCreateAccount(t, repo, b)
	c := ids.credential(a.ID())
	mustCreateCredential(t, repo, c)
	dup := c
	dup.AccountID = b.ID()
	dup.SecretHash = []byte("another hash")
	if err := repo.CreateCredential(ctx, dup); !errors.Is(err, ports.ErrDuplicate) {
		t.Fatalf("CreateCredential(same client id) = %v, want ports.ErrDuplicate", err)
	}
	got, err := repo.GetCredential(ctx, c.ClientID)
	if err != nil {
		t.Fatal(err)
	}
	assertSameCredential(t, got, c)
}

func accountListingCredentialsShowsOnlyAccount(t *testing.T, newRepo func(t *testing.T) ports.AccountRepository, ids *accountIDs) {
	t.Parallel()
	repo, ctx := newRepo(t), context.Background()
	a, b := ids.account(t, "A"), ids.account(t, "B")
	mustCreateAccount(t, repo, a)
	mustCreateAccount(t, repo, b)
	base := time.Date(2031, 5, 1, 0, 0, 0, 0, time.UTC)
	late, early := ids.credential(a.ID()), ids.credential(a.ID())
	late.CreatedAt, early.CreatedAt = base.Add(time.Minute), base
	other := ids.credential(b.ID())
	mustCreateCredential(t, repo, late)
	mustCreateCredential(t, repo, early)
	mustCreateCredential(t, repo, other)
	if err := repo.RevokeCredential(ctx, a.ID(), early.ClientID, base.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	list, err := repo.ListCredentials(ctx, a.ID())
	if err != nil {
		t.Fatalf("ListCredentials: %v", err)
	}
	if len(list) != 2 || list[0].ClientID != early.ClientID || list[1].ClientID != late.ClientID {
		t.Fatalf("ListCredentials = %v, want [%s %s]", credentialClientIDs(list), early.ClientID, late.ClientID)
	}
	if !list[0].Revoked() || list[1].Revoked() {
		t.Fatalf("revocation flags = %v, %v; want true, false", list[0].Revoked(), list[1].Revoked())
	}
	empty, err := repo.ListCredentials(ctx, ids.next("missing"))
	if err != nil || len(empty) != 0 {
		t.Fatalf("ListCredentials(unknown account) = %v, %v; want empty, nil", credentialClientIDs(empty), err)
	}
}

func accountRevokingCredentialRecordsWhenOnce(t *testing.T, newRepo func(t *testing.T) ports.AccountRepository, ids *accountIDs) {
	t.Parallel()
	repo, ctx := newRepo(t), context.Background()
	a := ids.account(t, "Loja")
	mustCreateAccount(t, repo, a)
	c := ids.credential(a.ID())
	mustCreateCredential(t, repo, c)
	at := time.Date(2031, 6, 7, 8, 9, 10, 0, time.UTC)
	if err := repo.RevokeCredential(ctx, a.ID(), c.ClientID, at); err != nil {
		t.Fatalf("RevokeCredential: %v", err)
	}
	if err := repo.RevokeCredential(ctx, a.ID(), c.ClientID, at.Add(time.Hour)); err != nil {
		t.Fatalf("second RevokeCredential: %v", err)
	}
	got, err := repo.GetCredential(ctx, c.ClientID)
	if err != nil {
		t.Fatal(err)
	}
	if !got.Revoked() || !got.RevokedAt.Equal(at) {
		t.Fatalf("RevokedAt = %v, want %v", got.RevokedAt, at)
	}
}

func accountAnotherAccountCredentialCannotRevoked(t *testing.T, newRepo func(t *testing.T) ports.AccountRepository, ids *accountIDs) {
	t.Parallel()
	repo, ctx := newRepo(t), context.Background()
	a, b := ids.account(t, "A"), ids.account(t, "B")
	mustCreateAccount(t, repo, a)
	mustCreateAccount(t, repo, b)
	c := ids.credential(a.ID())
	mustCreateCredential(t, repo, c)
	if err := repo.RevokeCredential(ctx, b.ID(), c.ClientID, time.Now()); !errors.Is(err, domain.ErrNotFound) {
		t.Fatalf("RevokeCredential(other account) = %v, want domain.ErrNotFound", err)
	}
	if err := repo.RevokeCredential(ctx, a.ID(), ids.next("missing"), time.Now()); !errors.Is(err, domain.ErrNotFound) {
		t.Fatalf("RevokeCredential(unknown client) = %v, want domain.ErrNotFound", err)
	}
	got, err := repo.GetCredential(ctx, c.ClientID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Revoked() {
		t.Fatal("another account revoked the credential")
	}
}

func accountChangingFetchedCredentialChangesNothing(t *testing.T, newRepo func(t *testing.T) ports.AccountRepository, ids *accountIDs) {
	t.Parallel()
	repo, ctx := newRepo(t), context.Background()
	a := ids.account(t, "Loja")
	mustCreateAccount(t, repo, a)
	c := ids.credential(a.ID())
	want := c
	want.SecretHash = bytes.Clone(c.SecretHash)
	mustCreateCredential(t, repo, c)
	c.SecretHash[0] ^= 0xff
	got, err := repo.GetCredential(ctx, c.ClientID)
	if err != nil {
		t.Fatal(err)
	}
	got.SecretHash[1] ^= 0xff
	again, err := repo.GetCredential(ctx, c.ClientID)
	if err != nil {
		t.Fatal(err)
	}
	assertSameCredential(t, again, want)
}

func accountAccountHoldsMostMaxActiveCredentialsActive(t *testing.T, newRepo func(t *testing.T) ports.AccountRepository, ids *accountIDs) {
	t.Parallel()
	repo, ctx := newRepo(t), context.Background()
	a := ids.account(t, "Cheia")
	mustCreateAccount(t, repo, a)
	var made []domain.Credential
	for range domain.MaxActiveCredentials {
		c := ids.credential(a.ID())
		mustCreateCredential(t, repo, c)
		made = append(made, c)
	}
	extra := ids.credential(a.ID())
	if err := repo.CreateCredential(ctx, extra); !errors.Is(err, domain.ErrCredentialLimit) {
		t.Fatalf("CreateCredential(one over the cap) = %v, want domain.ErrCredentialLimit", err)
	}
	if _, err := repo.GetCredential(ctx, extra.ClientID); !errors.Is(err, domain.ErrNotFound) {
		t.Fatalf("the refused credential was stored: %v", err)
	}
	// Another account is not concerned.
	b := ids.account(t, "Vizinha")
	mustCreateAccount(t, repo, b)
	mustCreateCredential(t, repo, ids.credential(b.ID()))

	if err := repo.RevokeCredential(ctx, a.ID(), made[3].ClientID, time.Now()); err != nil {
		t.Fatal(err)
	}
	mustCreateCredential(t, repo, extra)
	if err := repo.CreateCredential(ctx, ids.credential(a.ID())); !errors.Is(err, domain.ErrCredentialLimit) {
		t.Fatalf("CreateCredential(over the cap again) = %v, want domain.ErrCredentialLimit", err)
	}
}

func accountConcurrentCreationsNeverTakeAccount(t *testing.T, newRepo func(t *testing.T) ports.AccountRepository, ids *accountIDs) {
	t.Parallel()
	repo, ctx := newRepo(t), context.Background()
	a := ids.account(t, "Corrida")
	mustCreateAccount(t, repo, a)
	mustCreateCredential(t, repo, ids.credential(a.ID()))
	const writers = 3 * domain.MaxActiveCredentials
	errs := make([]error, writers)
	var wg sync.WaitGroup
	for i := range writers {
		c := ids.credential(a.ID())
		wg.Go(func() { errs[i] = repo.CreateCredential(ctx, c) })
	}
	wg.Wait()
	created := 0
	for _, err := range errs {
		switch {
		case err == nil:
			created++
		case !errors.Is(err, domain.ErrCredentialLimit):
			t.Errorf("CreateCredential = %v, want nil or domain.ErrCredentialLimit", err)
		}
	}
	list, err := repo.ListCredentials(ctx, a.ID())
	if err != nil {
		t.Fatal(err)
	}
	if created != domain.MaxActiveCredentials-1 || len(list) != domain.MaxActiveCredentials {
		t.Fatalf("%d of %d concurrent creations succeeded and %d credentials are stored; want %d and %d",
			created, writers, len(list), domain.MaxActiveCredentials-1, domain.MaxActiveCredentials)
	}
}

func accountRecordingUseMovesLastUsedAtForward(t *testing.T, newRepo func(t *testing.T) ports.AccountRepository, ids *accountIDs) {
	t.Parallel()
	repo, ctx := newRepo(t), context.Background()
	a := ids.account(t, "Uso")
	mustCreateAccount(t, repo, a)
	c := ids.credential(a.ID())
	mustCreateCredential(t, repo, c)
	if got, _ := repo.GetCredential(ctx, c.ClientID); got.LastUsedAt != nil {
		t.Fatalf("a new credential reads back used at %v", got.LastUsedAt)
	}
	later := c.CreatedAt.Add(2 * time.Minute)
	for _, at := range []time.Time{c.CreatedAt.Add(time.Minute), later, c.CreatedAt.Add(90 * time.Second)} {
		if err := repo.RecordCredentialUse(ctx, c.ClientID, at); err != nil {
			t.Fatalf("RecordCredentialUse(%v): %v", at, err)
		}
	}
	got, err := repo.GetCredential(ctx, c.ClientID)
	if err != nil || got.LastUsedAt == nil || !got.LastUsedAt.Equal(later) {
		t.Fatalf("lastUsedAt = %v, %v; want %v, the latest use", got.LastUsedAt, err, later)
	}
	list, _ := repo.ListCredentials(ctx, a.ID())
	if len(list) != 1 || list[0].LastUsedAt == nil || !list[0].LastUsedAt.Equal(later) {
		t.Fatalf("the list shows %+v, want lastUsedAt %v", list, later)
	}
	if err := repo.RecordCredentialUse(ctx, ids.next("missing"), later); !errors.Is(err, domain.ErrNotFound) {
		t.Fatalf("RecordCredentialUse(unknown) = %v, want domain.ErrNotFound", err)
	}
}

// accountIDs makes ids unique to one run of the suite, so that a shared store works.
type accountIDs struct {
	prefix string
	mu     sync.Mutex
	n      int
}

func (g *accountIDs) next(kind string) string {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.n++
	return fmt.Sprintf("%s-%s-%d", g.prefix, kind, g.n)
}

func (g *accountIDs) account(t *testing.T, name string) *domain.Account {
	t.Helper()
	// Millisecond precision: what every store keeps.
	now := time.Now().UTC().Truncate(time.Millisecond)
	a, err := domain.NewAccount(g.next("acc"), name, []domain.Scope{domain.ScopeTransactionRead, domain.ScopeWithdrawalWrite}, "whsec_"+g.next("wh"), now)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func (g *accountIDs) credential(accountID string) domain.Credential {
	id := g.next("client")
	return domain.Credential{
		ClientID:   id,
		AccountID:  accountID,
		SecretHash: []byte("hash-of-" + id + "-0123456789abcdef"),
		CreatedAt:  time.Now().UTC().Truncate(time.Millisecond),
	}
}

func mustCreateAccount(t *testing.T, repo ports.AccountRepository, a *domain.Account) {
	t.Helper()
	if err := repo.CreateAccount(context.Background(), a); err != nil {
		t.Fatalf("CreateAccount(%s): %v", a.ID(), err)
	}
}

func mustCreateCredential(t *testing.T, repo ports.AccountRepository, c domain.Credential) {
	t.Helper()
	if err := repo.CreateCredential(context.Background(), c); err != nil {
		t.Fatalf("CreateCredential(%s): %v", c.ClientID, err)
	}
}

func assertSameAccount(t *testing.T, got, want *domain.Account) {
	t.Helper()
	if got.ID() != want.ID() || got.Name() != want.Name() || got.Status() != want.Status() {
		t.Errorf("account = %s/%q/%s, want %s/%q/%s", got.ID(), got.Name(), got.Status(), want.ID(), want.Name(), want.Status())
	}
	if domain.JoinScopes(got.Scopes()) != domain.JoinScopes(want.Scopes()) {
		t.Errorf("scopes = %v, want %v", got.Scopes(), want.Scopes())
	}
	if !got.CreatedAt().Equal(want.CreatedAt()) {
		t.Errorf("createdAt = %v, want %v", got.CreatedAt(), want.CreatedAt())
	}
	gw, ww := got.Webhook(), want.Webhook()
	if gw.Current != ww.Current || gw.Previous != ww.Previous || (gw.PreviousExpiresAt == nil) != (ww.PreviousExpiresAt == nil) {
		t.Errorf("webhook = %+v, want %+v", gw, ww)
	}
}

func assertSameCredential(t *testing.T, got, want domain.Credential) {
	t.Helper()
	if got.ClientID != want.ClientID || got.AccountID != want.AccountID || !bytes.Equal(got.SecretHash, want.SecretHash) {
		t.Errorf("credential = %s/%s/%x, want %s/%s/%x", got.ClientID, got.AccountID, got.SecretHash, want.ClientID, want.AccountID, want.SecretHash)
	}
	if !got.CreatedAt.Equal(want.CreatedAt) {
		t.Errorf("createdAt = %v, want %v", got.CreatedAt, want.CreatedAt)
	}
	if (got.RevokedAt == nil) != (want.RevokedAt == nil) {
		t.Errorf("revokedAt = %v, want %v", got.RevokedAt, want.RevokedAt)
	}
}

func credentialClientIDs(cs []domain.Credential) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.ClientID
	}
	return out
}
