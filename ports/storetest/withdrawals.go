package storetest

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/pixgate/pixgate/domain"
	"github.com/pixgate/pixgate/ports"
)

// TestWithdrawals states the behaviour every ports.WithdrawalRepository must have, balances
// included, with the transactions and the outbox of the same store. newStore returns an empty
// store for each subtest (see Stores).
func TestWithdrawals(t *testing.T, newStore func(t *testing.T) Stores) {
	t.Helper()
	runStoreTests(t, newStore, []storeTest{
		{"a created withdrawal reads back exactly as it was stored", wdCreatedWithdrawalReadsBackExactly},
		{"a new withdrawal's events are stored with it", wdNewWithdrawalEventsStored},
		{"an unknown withdrawal is not found", wdUnknownWithdrawalNotFound},
		{"another account's withdrawal is not found and not changed", wdAnotherAccountWithdrawalNotFound},
		{"a second withdrawal with an existing id is a duplicate, even in another account", wdSecondWithdrawalExistingIdDuplicate},
		{"a withdrawal with an idempotency key the account used is a duplicate, whatever the balance", wdWithdrawalIdempotencyKeyAccountUsed},
		{"two accounts may use the same idempotency key", wdTwoAccountsMayUseSame},
		{"the balance check sees the account's balance without the new withdrawal", wdBalanceCheckSeesAccountBalance},
		{"a withdrawal the balance does not cover is refused and stores nothing", wdWithdrawalBalanceDoesNotCover},
		{"concurrent reservations never overdraw", wdConcurrentReservationsNeverOverdraw},
		{"an update stores what fn did with the events it raised, and adds one to the version", wdUpdateStoresFnDidEvents},
		{"a failed update returns fn's error and leaves nothing behind", wdFailedUpdateReturnsFnError},
		{"of concurrent completions of one withdrawal exactly one wins", wdConcurrentCompletionsWithdrawalExactlyWins},
		{"withdrawals handed in and out are never shared with the store", wdWithdrawalsHandedOutNeverShared},
		{"listByAccount pages in creation order, reading a page number or size below 1 as 1", wdListByAccountPagesCreationOrderReading},
		{"find returns a withdrawal whatever its account", wdFindReturnsWithdrawalWhateverAccount},
		{"a payout's due time and claims read back as they were stored", wdPayoutDispatchReadsBack},
		{"listPayoutsDue lists the payouts due at or before until, the earliest first, none that is done", wdListPayoutsDueListsDuePayouts},
		{"of concurrent claims of one payout exactly one wins", wdConcurrentClaimsOnePayoutOneWins},
		{"a cancel and a claim of one payout racing: exactly one of them happens", wdCancelRacingClaimOneHappens},
	})
}

func wdCreatedWithdrawalReadsBackExactly(t *testing.T, newStore func(t *testing.T) Stores) {
	t.Parallel()
	s, ctx := newStore(t), context.Background()
	w := richWithdrawal(t, domain.NewID())
	fund(t, s, w.AccountID(), w.Total())
	want := domain.UnmarshalWithdrawalFromDatabase(w.Record())
	if err := s.Withdrawals.Create(ctx, w); err != nil {
		t.Fatalf("Create: %v", err)
	}
	if w.Version() != 1 || len(w.Events()) != 0 {
		t.Errorf("after Create: version %d, %d events; want 1, 0", w.Version(), len(w.Events()))
	}
	got, err := s.Withdrawals.Get(ctx, w.AccountID(), w.ID())
	if err != nil {
		t.Fatalf("Get: %v", err)
	}
	assertSameWithdrawal(t, got, want)
	if got.Version() != 1 {
		t.Errorf("stored version %d, want 1", got.Version())
	}
	if got, err = s.Withdrawals.GetByIdempotencyKey(ctx, w.AccountID(), w.Idempotency().Key); err != nil {
		t.Fatalf("GetByIdempotencyKey: %v", err)
	}
	assertSameWithdrawal(t, got, want)
}

func wdNewWithdrawalEventsStored(t *testing.T, newStore func(t *testing.T) Stores) {
	t.Parallel()
	s, ctx := newStore(t), context.Background()
	w := buildWithdrawal(t, wdSpec{account: domain.NewID(), status: domain.WdProcessing, webhook: "https://shop.example.com/hooks"})
	raised := w.Events()
	fund(t, s, w.AccountID(), w.Total())
	if err := s.Withdrawals.Create(ctx, w); err != nil {
		t.Fatalf("Create: %v", err)
	}
	ds, err := s.Outbox.Deliveries(ctx, w.AccountID(), domain.ResourceWithdrawal, w.ID())
	if err != nil || len(ds) != 1 || len(raised) != 1 {
		t.Fatalf("Deliveries = %v, %v; want the one event raised", eventTypes(ds), err)
	}
	assertDeliveryOf(t, ds[0], raised[0])
	if ds[0].Status != ports.DeliveryPending || !ds[0].NextAttemptAt.Equal(raised[0].CreatedAt) {
		t.Errorf("delivery = %s due %v, want pending due %v", ds[0].Status, ds[0].NextAttemptAt, raised[0].CreatedAt)
	}
}

func wdUnknownWithdrawalNotFound(t *testing.T, newStore func(t *testing.T) Stores) {
	t.Parallel()
	s, ctx := newStore(t), context.Background()
	account := domain.NewID()
	fundedWithdrawal(t, s, wdSpec{account: account, idemKey: "known"})
	id := domain.NewID()
	if _, err := s.Withdrawals.Get(ctx, account, id); !errors.Is(err, domain.ErrNotFound) {
		t.Errorf("Get: %v, want ErrNotFound", err)
	}
	if _, err := s.Withdrawals.GetByIdempotencyKey(ctx, account, "unknown"); !errors.Is(err, domain.ErrNotFound) {
		t.Errorf("GetByIdempotencyKey: %v, want ErrNotFound", err)
	}
	called := false
	_, err := s.Withdrawals.Update(ctx, account, id, func(*domain.Withdrawal) error { called = true; return nil })
	if !errors.Is(err, domain.ErrNotFound) || called {
		t.Errorf("Update: %v (fn called: %v), want ErrNotFound without calling fn", err, called)
	}
}

func wdAnotherAccountWithdrawalNotFound(t *testing.T, newStore func(t *testing.T) Stores) {
	t.Parallel()
	s, ctx := newStore(t), context.Background()
	owner, other := domain.NewID(), domain.NewID()
	w := fundedWithdrawal(t, s, wdSpec{account: owner, idemKey: "payout-1"})
	fundedWithdrawal(t, s, wdSpec{account: other})
	if _, err := s.Withdrawals.Get(ctx, other, w.ID()); !errors.Is(err, domain.ErrNotFound) {
		t.Errorf("Get: %v, want ErrNotFound", err)
	}
	if _, err := s.Withdrawals.GetByIdempotencyKey(ctx, other, "payout-1"); !errors.Is(err, domain.ErrNotFound) {
		t.Errorf("GetByIdempotencyKey: %v, want ErrNotFound", err)
	}
	called := false
	_, err := s.Withdrawals.Update(ctx, other, w.ID(), func(w *domain.Withdrawal) error {
		called = true
		return w.Cancel(minutes(1))
	})
	if !errors.Is(err, domain.ErrNotFound) || called {
		t.Errorf("Update: %v (fn called: %v), want ErrNotFound without calling fn", err, called)
	}
	if got, err := s.Withdrawals.Get(ctx, owner, w.ID()); err != nil || got.Status() != domain.WdPending || got.Version() != 1 {
		t.Errorf("the owner's withdrawal = %v, %v; want it untouched", got, err)
	}
}

func wdSecondWithdrawalExistingIdDuplicate(t *testing.T, newStore func(t *testing.T) Stores) {
	t.Parallel()
	s, ctx := newStore(t), context.Background()
	first := fundedWithdrawal(t, s, wdSpec{account: domain.NewID(), amount: 100})
	for _, account := range []string{first.AccountID(), domain.NewID()} {
		again := buildWithdrawal(t, wdSpec{account: account, id: first.ID(), amount: 200})
		if err := s.Withdrawals.Create(ctx, again); !errors.Is(err, ports.ErrDuplicate) {
			t.Errorf("Create in account %s: %v, want ErrDuplicate", account, err)
		}
	}
	got, err := s.Withdrawals.Get(ctx, first.AccountID(), first.ID())
	if err != nil || got.Amount() != 100 {
		t.Errorf("Get = %v, %v; want the first withdrawal unchanged", got, err)
	}
}

func wdWithdrawalIdempotencyKeyAccountUsed(t *testing.T, newStore func(t *testing.T) Stores) {
	t.Parallel()
	s, ctx := newStore(t), context.Background()
	account := domain.NewID()
	fund(t, s, account, 1000)
	first := buildWithdrawal(t, wdSpec{account: account, amount: 1000, idemKey: "payout-7"})
	if err := s.Withdrawals.Create(ctx, first); err != nil {
		t.Fatalf("Create: %v", err)
	}
	// The first withdrawal used all the money: a repeated request must still learn that
	// its withdrawal exists, not that the balance is short.
	again := buildWithdrawal(t, wdSpec{account: account, amount: 1000, idemKey: "payout-7"})
	if err := s.Withdrawals.Create(ctx, again); !errors.Is(err, ports.ErrDuplicate) {
		t.Fatalf("Create: %v, want ErrDuplicate", err)
	}
	got, err := s.Withdrawals.GetByIdempotencyKey(ctx, account, "payout-7")
	if err != nil || got.ID() != first.ID() {
		t.Errorf("GetByIdempotencyKey = %v, %v; want the first withdrawal", got, err)
	}
	if _, err := s.Withdrawals.Get(ctx, account, again.ID()); !errors.Is(err, domain.ErrNotFound) {
		t.Errorf("Get(the refused one): %v, want ErrNotFound", err)
	}
}

func wdTwoAccountsMayUseSame(t *testing.T, newStore func(t *testing.T) Stores) {
	t.Parallel()
	s, ctx := newStore(t), context.Background()
	a := fundedWithdrawal(t, s, wdSpec{account: domain.NewID(), idemKey: "shared"})
	b := fundedWithdrawal(t, s, wdSpec{account: domain.NewID(), idemKey: "shared"})
	for _, w := range []*domain.Withdrawal{a, b} {
		got, err := s.Withdrawals.GetByIdempotencyKey(ctx, w.AccountID(), "shared")
		if err != nil || got.ID() != w.ID() {
			t.Errorf("GetByIdempotencyKey(%s) = %v, %v; want %s", w.AccountID(), got, err, w.ID())
		}
	}
}

func wdBalanceCheckSeesAccountBalance(t *testing.T, newStore func(t *testing.T) Stores) {
	t.Parallel()
	s, ctx := newStore(t), context.Background()
	account := domain.NewID()
	createTransaction(t, s, txSpec{account: account, amount: 10000, fee: 100, status: domain.TxPaid})
	createTransaction(t, s, txSpec{account: account, amount: 700})
	createTransaction(t, s, txSpec{account: domain.NewID(), amount: 5000, status: domain.TxPaid}) // another account's money
	createWithdrawal(t, s, wdSpec{account: account, amount: 1000, fee: 10})
	// 10000 - 100 - 1010 = 8890 left: one cent more is refused, exactly that is accepted.
	over := buildWithdrawal(t, wdSpec{account: account, amount: 8881, fee: 10})
	if err := s.Withdrawals.Create(ctx, over); !errors.Is(err, domain.ErrInsufficientBalance) {
		t.Fatalf("Create(8891 with the fee): %v, want ErrInsufficientBalance", err)
	}
	w := buildWithdrawal(t, wdSpec{account: account, amount: 8880, fee: 10})
	if err := s.Withdrawals.Create(ctx, w); err != nil {
		t.Fatalf("Create(8890 with the fee): %v", err)
	}
	if got, err := s.Ledger.Balance(ctx, account); err != nil || got != (domain.Balance{Pending: 700}) {
		t.Errorf("Balance = %+v, %v; want nothing available and 700 pending", got, err)
	}
}

func wdWithdrawalBalanceDoesNotCover(t *testing.T, newStore func(t *testing.T) Stores) {
	t.Parallel()
	s, ctx := newStore(t), context.Background()
	account := domain.NewID()
	fund(t, s, account, 1000)
	w := buildWithdrawal(t, wdSpec{account: account, amount: 1001, idemKey: "too-much", webhook: "https://shop.example.com/hooks", status: domain.WdProcessing})
	if err := s.Withdrawals.Create(ctx, w); !errors.Is(err, domain.ErrInsufficientBalance) {
		t.Fatalf("Create: %v, want ErrInsufficientBalance", err)
	}
	if _, err := s.Withdrawals.Get(ctx, account, w.ID()); !errors.Is(err, domain.ErrNotFound) {
		t.Errorf("Get: %v, want ErrNotFound", err)
	}
	if _, err := s.Withdrawals.GetByIdempotencyKey(ctx, account, "too-much"); !errors.Is(err, domain.ErrNotFound) {
		t.Errorf("GetByIdempotencyKey: %v, want ErrNotFound", err)
	}
	if ds, err := s.Outbox.Deliveries(ctx, account, domain.ResourceWithdrawal, w.ID()); err != nil || len(ds) != 0 {
		t.Errorf("Deliveries = %v, %v; want none", eventTypes(ds), err)
	}
	if got, err := s.Ledger.Balance(ctx, account); err != nil || got != (domain.Balance{Available: 1000}) {
		t.Errorf("Balance = %+v, %v; want 1000 available", got, err)
	}
}

func wdConcurrentReservationsNeverOverdraw(t *testing.T, newStore func(t *testing.T) Stores) {
	t.Parallel()
	s, ctx := newStore(t), context.Background()
	account := domain.NewID()
	fund(t, s, account, 1000)
	const n = 20
	ws := make([]*domain.Withdrawal, n)
	for i := range ws {
		ws[i] = buildWithdrawal(t, wdSpec{account: account, amount: 90, fee: 10})
	}
	errs := concurrently(n, func(i int) error { return s.Withdrawals.Create(ctx, ws[i]) })
	accepted := 0
	for _, err := range errs {
		switch {
		case err == nil:
			accepted++
		case !errors.Is(err, domain.ErrInsufficientBalance):
			t.Errorf("Create: %v, want nil or ErrInsufficientBalance", err)
		}
	}
	if accepted != 10 {
		t.Errorf("%d reservations of 100 accepted on 1000, want 10", accepted)
	}
	if got, err := s.Ledger.Balance(ctx, account); err != nil || got != (domain.Balance{}) {
		t.Errorf("Balance = %+v, %v; want zero", got, err)
	}
}

func wdUpdateStoresFnDidEvents(t *testing.T, newStore func(t *testing.T) Stores) {
	t.Parallel()
	s, ctx := newStore(t), context.Background()
	w := fundedWithdrawal(t, s, wdSpec{account: domain.NewID(), webhook: "https://shop.example.com/hooks"})
	want := domain.UnmarshalWithdrawalFromDatabase(w.Record())
	if err := want.StartProcessing(minutes(1)); err != nil {
		t.Fatal(err)
	}
	var raised []domain.Event
	updated, err := s.Withdrawals.Update(ctx, w.AccountID(), w.ID(), func(w *domain.Withdrawal) error {
		err := w.StartProcessing(minutes(1))
		raised = w.Events()
		return err
	})
	if err != nil {
		t.Fatalf("Update: %v", err)
	}
	assertSameWithdrawal(t, updated, want)
	got, err := s.Withdrawals.Get(ctx, w.AccountID(), w.ID())
	if err != nil {
		t.Fatalf("Get: %v", err)
	}
	assertSameWithdrawal(t, got, want)
	if updated.Version() != 2 || got.Version() != 2 {
		t.Errorf("versions: returned %d, stored %d; want 2", updated.Version(), got.Version())
	}
	ds, err := s.Outbox.Deliveries(ctx, w.AccountID(), domain.ResourceWithdrawal, w.ID())
	if err != nil || len(ds) != 1 || len(raised) != 1 {
		t.Fatalf("Deliveries = %v, %v; want the one event raised", eventTypes(ds), err)
	}
	assertDeliveryOf(t, ds[0], raised[0])
	if updated, err = s.Withdrawals.Update(ctx, w.AccountID(), w.ID(), func(w *domain.Withdrawal) error {
		return w.Complete("E1", minutes(2))
	}); err != nil || updated.Version() != 3 || updated.Status() != domain.WdProcessed {
		t.Errorf("second Update = %v, %v; want PROCESSED v3", updated, err)
	}
}

func wdFailedUpdateReturnsFnError(t *testing.T, newStore func(t *testing.T) Stores) {
	t.Parallel()
	s, ctx := newStore(t), context.Background()
	account := domain.NewID()
	fund(t, s, account, 1000)
	w := createWithdrawal(t, s, wdSpec{account: account, amount: 300, status: domain.WdProcessing, webhook: "https://shop.example.com/hooks"})
	before, _ := s.Withdrawals.Get(ctx, account, w.ID())
	_, err := s.Withdrawals.Update(ctx, account, w.ID(), func(w *domain.Withdrawal) error {
		if err := w.Fail("boom", minutes(2)); err != nil {
			return err
		}
		return errRefused
	})
	if !errors.Is(err, errRefused) {
		t.Fatalf("Update: %v, want the error fn returned", err)
	}
	got, err := s.Withdrawals.Get(ctx, account, w.ID())
	if err != nil {
		t.Fatalf("Get: %v", err)
	}
	assertSameWithdrawal(t, got, before)
	if got.Version() != before.Version() {
		t.Errorf("version %d, want %d", got.Version(), before.Version())
	}
	if ds, err := s.Outbox.Deliveries(ctx, account, domain.ResourceWithdrawal, w.ID()); err != nil || len(ds) != 1 {
		t.Errorf("Deliveries = %v, %v; want only the processing event", eventTypes(ds), err)
	}
	if b, err := s.Ledger.Balance(ctx, account); err != nil || b.Available != 700 {
		t.Errorf("Balance = %+v, %v; want 700 available, the withdrawal still holding its money", b, err)
	}
}

func wdConcurrentCompletionsWithdrawalExactlyWins(t *testing.T, newStore func(t *testing.T) Stores) {
	t.Parallel()
	s, ctx := newStore(t), context.Background()
	w := fundedWithdrawal(t, s, wdSpec{account: domain.NewID(), status: domain.WdProcessing, webhook: "https://shop.example.com/hooks"})
	const n = 20
	errs := concurrently(n, func(i int) error {
		_, err := s.Withdrawals.Update(ctx, w.AccountID(), w.ID(), func(w *domain.Withdrawal) error {
			if i%2 == 0 {
				return w.Complete("E1", minutes(2))
			}
			return w.Reject("refused", minutes(2))
		})
		return err
	})
	wins := 0
	for _, err := range errs {
		switch {
		case err == nil:
			wins++
		case !errors.Is(err, domain.ErrInvalidTransition):
			t.Errorf("Update: %v, want nil or ErrInvalidTransition", err)
		}
	}
	if wins != 1 {
		t.Fatalf("%d transitions won, want exactly 1", wins)
	}
	got, err := s.Withdrawals.Get(ctx, w.AccountID(), w.ID())
	if err != nil || got.Version() != 2 || len(got.History()) != 3 {
		t.Errorf("stored = %v, %v; want version 2 with 3 history entries", got, err)
	}
	if ds, err := s.Outbox.Deliveries(ctx, w.AccountID(), domain.ResourceWithdrawal, w.ID()); err != nil || len(ds) != 2 {
		t.Errorf("Deliveries = %v, %v; want processing and one outcome", eventTypes(ds), err)
	}
}

func wdWithdrawalsHandedOutNeverShared(t *testing.T, newStore func(t *testing.T) Stores) {
	t.Parallel()
	s, ctx := newStore(t), context.Background()
	w := richWithdrawal(t, domain.NewID())
	fund(t, s, w.AccountID(), w.Total())
	want := domain.UnmarshalWithdrawalFromDatabase(copyWithdrawalRecord(w.Record()))
	if err := s.Withdrawals.Create(ctx, w); err != nil {
		t.Fatalf("Create: %v", err)
	}
	scribbleWithdrawal(w)
	got, err := s.Withdrawals.Get(ctx, w.AccountID(), w.ID())
	if err != nil {
		t.Fatalf("Get: %v", err)
	}
	scribbleWithdrawal(got)
	if got, err = s.Withdrawals.Get(ctx, w.AccountID(), w.ID()); err != nil {
		t.Fatalf("Get: %v", err)
	}
	assertSameWithdrawal(t, got, want)
}

func wdListByAccountPagesCreationOrderReading(t *testing.T, newStore func(t *testing.T) Stores) {
	t.Parallel()
	s, ctx := newStore(t), context.Background()
	account := domain.NewID()
	var ids []string
	for i := range 3 {
		ids = append(ids, fundedWithdrawal(t, s, wdSpec{account: account, createdAt: minutes(i)}).ID())
	}
	for _, c := range []struct {
		page ports.Page
		want []string
	}{
		{ports.Page{Number: 1, Size: 2}, ids[0:2]},
		{ports.Page{Number: 2, Size: 2}, ids[2:3]},
		{ports.Page{Number: 3, Size: 2}, nil},
		{ports.Page{Number: 0, Size: 2}, ids[0:2]},
		{ports.Page{Number: -1, Size: 2}, ids[0:2]},
		{ports.Page{Number: 2, Size: 0}, ids[1:2]},
	} {
		got, err := s.Withdrawals.ListByAccount(ctx, account, c.page)
		if err != nil || !slices.Equal(withdrawalIDs(got), c.want) {
			t.Errorf("ListByAccount(page %+v) = %v, %v; want %v", c.page, withdrawalIDs(got), err, c.want)
		}
	}
	if got, err := s.Withdrawals.ListByAccount(ctx, domain.NewID(), ports.Page{Number: 1, Size: 2}); err != nil || len(got) != 0 {
		t.Errorf("ListByAccount of an account without withdrawals = %v, %v; want none", withdrawalIDs(got), err)
	}
}

func wdFindReturnsWithdrawalWhateverAccount(t *testing.T, newStore func(t *testing.T) Stores) {
	t.Parallel()
	s, ctx := newStore(t), context.Background()
	w := richWithdrawal(t, domain.NewID())
	fund(t, s, w.AccountID(), w.Total())
	want := domain.UnmarshalWithdrawalFromDatabase(w.Record())
	if err := s.Withdrawals.Create(ctx, w); err != nil {
		t.Fatal(err)
	}
	got, err := s.Withdrawals.Find(ctx, w.ID())
	if err != nil {
		t.Fatalf("Find: %v", err)
	}
	assertSameWithdrawal(t, got, want)
	if _, err := s.Withdrawals.Find(ctx, domain.NewID()); !errors.Is(err, domain.ErrNotFound) {
		t.Errorf("Find(unknown) = %v, want ErrNotFound", err)
	}
}

func wdPayoutDispatchReadsBack(t *testing.T, newStore func(t *testing.T) Stores) {
	t.Parallel()
	s, ctx := newStore(t), context.Background()
	w := fundedWithdrawal(t, s, wdSpec{account: domain.NewID(), createdAt: minutes(1).Add(123 * time.Millisecond)})
	if got, err := s.Withdrawals.Get(ctx, w.AccountID(), w.ID()); err != nil || got.PayoutDue() == nil ||
		!got.PayoutDue().Equal(w.CreatedAt()) || got.PayoutClaims() != 0 {
		t.Fatalf("a new withdrawal read back due %v with %v claims (%v); want due at its creation, unclaimed",
			dueOf(got), claimsOf(got), err)
	}
	until := minutes(2).Add(456 * time.Millisecond)
	claimed, err := s.Withdrawals.Update(ctx, w.AccountID(), w.ID(), func(w *domain.Withdrawal) error {
		_, err := w.ClaimPayout(minutes(2), until)
		return err
	})
	if err != nil {
		t.Fatalf("Update(claim): %v", err)
	}
	got, err := s.Withdrawals.Get(ctx, w.AccountID(), w.ID())
	if err != nil {
		t.Fatal(err)
	}
	assertSameWithdrawal(t, got, claimed)
	if !got.PayoutDue().Equal(until) || got.PayoutClaims() != 1 {
		t.Errorf("claimed payout read back due %v with %d claims; want %v, 1", dueOf(got), got.PayoutClaims(), until)
	}
	done, err := s.Withdrawals.Update(ctx, w.AccountID(), w.ID(), func(w *domain.Withdrawal) error {
		return w.RefusePayout("chave_invalida", minutes(3))
	})
	if err != nil {
		t.Fatalf("Update(refuse): %v", err)
	}
	if got, err = s.Withdrawals.Get(ctx, w.AccountID(), w.ID()); err != nil || got.PayoutDue() != nil || got.PayoutClaims() != 1 {
		t.Fatalf("a refused payout read back due %v with %v claims (%v); want nothing due, 1 claim", dueOf(got), claimsOf(got), err)
	}
	assertSameWithdrawal(t, got, done)
}

func wdListPayoutsDueListsDuePayouts(t *testing.T, newStore func(t *testing.T) Stores) {
	t.Parallel()
	s, ctx := newStore(t), context.Background()
	account := domain.NewID()
	second := fundedWithdrawal(t, s, wdSpec{account: account, createdAt: minutes(2)})
	first := fundedWithdrawal(t, s, wdSpec{account: domain.NewID(), createdAt: minutes(1)})
	fundedWithdrawal(t, s, wdSpec{account: account, createdAt: minutes(4)}) // due too late
	for _, status := range []domain.WithdrawalStatus{domain.WdProcessed, domain.WdCanceled, domain.WdFailed, domain.WdRejected} {
		fundedWithdrawal(t, s, wdSpec{account: account, createdAt: minutes(0), status: status}) // done
	}
	// A payout in progress, whose next look is scheduled between the two.
	checked := fundedWithdrawal(t, s, wdSpec{account: account, createdAt: minutes(0), status: domain.WdProcessing})
	if _, err := s.Withdrawals.Update(ctx, account, checked.ID(), func(w *domain.Withdrawal) error {
		w.SchedulePayout(minutes(1).Add(time.Second))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	until := minutes(3)
	got, err := s.Withdrawals.ListPayoutsDue(ctx, until, 10)
	if want := []string{first.ID(), checked.ID(), second.ID()}; err != nil || !slices.Equal(withdrawalIDs(got), want) {
		t.Fatalf("ListPayoutsDue = %v, %v; want %v", withdrawalIDs(got), err, want)
	}
	if got, err = s.Withdrawals.ListPayoutsDue(ctx, until, 1); err != nil || !slices.Equal(withdrawalIDs(got), []string{first.ID()}) {
		t.Errorf("ListPayoutsDue(limit 1) = %v, %v; want the earliest", withdrawalIDs(got), err)
	}
	// A claim moves the payout past until; a cancel takes it out for good.
	if _, err := s.Withdrawals.Update(ctx, first.AccountID(), first.ID(), func(w *domain.Withdrawal) error {
		_, err := w.ClaimPayout(until, minutes(10))
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Withdrawals.Update(ctx, account, second.ID(), func(w *domain.Withdrawal) error {
		return w.Cancel(until)
	}); err != nil {
		t.Fatal(err)
	}
	if got, err = s.Withdrawals.ListPayoutsDue(ctx, until, 10); err != nil || !slices.Equal(withdrawalIDs(got), []string{checked.ID()}) {
		t.Errorf("after a claim and a cancel, ListPayoutsDue = %v, %v; want only the payout in progress", withdrawalIDs(got), err)
	}
	if got, err = s.Withdrawals.ListPayoutsDue(ctx, until, 0); err != nil || len(got) != 0 {
		t.Errorf("ListPayoutsDue(limit 0) = %v, %v; want none", withdrawalIDs(got), err)
	}
}

func wdConcurrentClaimsOnePayoutOneWins(t *testing.T, newStore func(t *testing.T) Stores) {
	t.Parallel()
	s := newStore(t)
	w := fundedWithdrawal(t, s, wdSpec{account: domain.NewID(), createdAt: minutes(0)})
	wins := claimConcurrently(t, []ports.WithdrawalRepository{s.Withdrawals}, w, 8)
	if wins != 1 {
		t.Fatalf("%d claims won, want exactly 1", wins)
	}
	got, err := s.Withdrawals.Get(context.Background(), w.AccountID(), w.ID())
	if err != nil || got.PayoutClaims() != 1 {
		t.Fatalf("stored %v claims (%v), want 1", claimsOf(got), err)
	}
}

// claimConcurrently races n claims of w's payout through the repositories in turn and tells
// how many won; every loser must find the payout not due, or give up having written nothing
// (ports.ErrVersionConflict, when it kept losing the race to write).
func claimConcurrently(t *testing.T, repos []ports.WithdrawalRepository, w *domain.Withdrawal, n int) int {
	t.Helper()
	now := w.CreatedAt().Add(time.Second)
	errs := concurrently(n, func(i int) error {
		_, err := repos[i%len(repos)].Update(context.Background(), w.AccountID(), w.ID(), func(w *domain.Withdrawal) error {
			_, err := w.ClaimPayout(now, now.Add(time.Minute))
			return err
		})
		return err
	})
	return claimWins(t, errs, domain.ErrPayoutNotDue)
}

func wdCancelRacingClaimOneHappens(t *testing.T, newStore func(t *testing.T) Stores) {
	t.Parallel()
	s := newStore(t)
	account := domain.NewID()
	for range 10 {
		w := fundedWithdrawal(t, s, wdSpec{account: account, createdAt: minutes(0)})
		cancelRacingClaim(t, []ports.WithdrawalRepository{s.Withdrawals}, w)
	}
}

// cancelRacingClaim races a cancel and a claim of w's payout, through the repositories in
// turn: exactly one of them must happen, and the stored withdrawal must show it.
func cancelRacingClaim(t *testing.T, repos []ports.WithdrawalRepository, w *domain.Withdrawal) {
	t.Helper()
	ctx := context.Background()
	now := w.CreatedAt().Add(time.Second)
	errs := concurrently(2, func(i int) error {
		_, err := repos[i%len(repos)].Update(ctx, w.AccountID(), w.ID(), func(w *domain.Withdrawal) error {
			if i == 0 {
				return w.Cancel(now)
			}
			_, err := w.ClaimPayout(now, now.Add(time.Minute))
			return err
		})
		return err
	})
	canceled, claimed := errs[0] == nil, errs[1] == nil
	got, err := repos[0].Get(ctx, w.AccountID(), w.ID())
	if err != nil {
		t.Fatal(err)
	}
	switch {
	case canceled == claimed:
		t.Fatalf("cancel: %v, claim: %v; want exactly one to happen", errs[0], errs[1])
	case canceled && (!errors.Is(errs[1], domain.ErrPayoutNotDue) || got.Status() != domain.WdCanceled || got.PayoutClaims() != 0):
		t.Fatalf("canceled, then the claim answered %v; stored %s with %d claims", errs[1], got.Status(), got.PayoutClaims())
	case claimed && (!errors.Is(errs[0], domain.ErrInvalidTransition) || got.Status() != domain.WdPending || got.PayoutClaims() != 1):
		t.Fatalf("claimed, then the cancel answered %v; stored %s with %d claims", errs[0], got.Status(), got.PayoutClaims())
	}
}

func dueOf(w *domain.Withdrawal) any {
	if w == nil {
		return "no withdrawal"
	}
	return w.PayoutDue()
}

func claimsOf(w *domain.Withdrawal) any {
	if w == nil {
		return "no withdrawal"
	}
	return w.PayoutClaims()
}

// richWithdrawal is a PROCESSED withdrawal with every field set.
func richWithdrawal(t *testing.T, account string) *domain.Withdrawal {
	t.Helper()
	key, err := domain.NewPixKey(domain.PixKeyCPF, cpf(21).Value())
	if err != nil {
		t.Fatal(err)
	}
	created := minutes(0).Add(456 * time.Millisecond)
	w, err := domain.NewWithdrawal(domain.NewID(), account, "SANDBOX", domain.Payout{
		Amount: 12345, Fee: 99, PixKey: key, ExternalCode: "PAYOUT-1", WebhookURL: "https://shop.example.com/hooks/payouts",
		Payer: &domain.AccountHolder{Type: domain.HolderPJ, Name: "Loja Exemplo LTDA", Document: cnpj(22),
			BankAccount: domain.BankAccount{Type: "TRAN", Digit: "0", ISPB: "00000000"}},
		Receiver: &domain.AccountHolder{Type: domain.HolderPF, Name: "José Pereira", Document: cpf(21),
			BankAccount: domain.BankAccount{Type: "CACC", Digit: "3", ISPB: "60701190"}, Pix: key},
	}, domain.Idempotency{Key: "payout-2026-0001", Fingerprint: "sha256:cd34"}, created)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.StartProcessing(created.Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	if err := w.Complete("E60701190202603021200s0000000001", created.Add(2500*time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	return w
}

func copyWithdrawalRecord(r domain.WithdrawalRecord) domain.WithdrawalRecord {
	r.Payout.Payer, r.Payout.Receiver = clonePtr(r.Payout.Payer), clonePtr(r.Payout.Receiver)
	r.AmountWithdrawn, r.ProcessedDate = clonePtr(r.AmountWithdrawn), clonePtr(r.ProcessedDate)
	return r
}

// scribbleWithdrawal changes everything a caller can reach through a withdrawal's getters.
func scribbleWithdrawal(w *domain.Withdrawal) {
	if p := w.Payout(); p.Receiver != nil {
		p.Receiver.Name = "changed"
		p.Payer.Name = "changed"
	}
	if a := w.AmountWithdrawn(); a != nil {
		*a = 1
	}
	if d := w.ProcessedDate(); d != nil {
		*d = time.Time{}
	}
}

func withdrawalIDs(ws []*domain.Withdrawal) []string {
	out := make([]string, len(ws))
	for i, w := range ws {
		out[i] = w.ID()
	}
	return out
}
