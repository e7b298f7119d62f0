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

// TestOutbox states the behaviour every ports.Outbox must have. The events come from
// transactions and withdrawals stored through the same store. newStore returns an empty store
// for each subtest (see Stores).
func TestOutbox(t *testing.T, newStore func(t *testing.T) Stores) {
	t.Helper()
	runStoreTests(t, newStore, []storeTest{
		{"a claim leases due deliveries, oldest due first, up to its limit", outboxClaimLeasesDueDeliveriesOldest},
		{"a claim leaves the deliveries of the accounts it skips for later, and takes the others", outboxClaimLeavesDeliveriesAccountsSkips},
		{"a delivery is claimed only once it is due", outboxDeliveryClaimedOnlyOnceDue},
		{"a held delivery is not claimed by anyone else", outboxHeldDeliveryNotClaimedAnyone},
		{"concurrent claims never hand one delivery to two owners", outboxConcurrentClaimsNeverHandDelivery},
		{"an expired lease is claimable again and its former owner can no longer record", outboxExpiredLeaseClaimableAgainFormer},
		{"recording needs the lease: anyone else changes nothing and gets a version conflict", outboxRecordingNeedsLeaseAnyoneElse},
		{"a delivered event keeps its attempt and is never claimed again", outboxDeliveredEventKeepsAttemptNever},
		{"a failed event is kept with its attempts and never claimed again", outboxFailedEventKeptAttemptsNever},
		{"a retry is claimable at its next attempt time, with the attempts so far", outboxRetryClaimableNextAttemptTime},
		{"release gives back every lease of its owner and only those", outboxReleaseGivesBackLeaseOwner},
		{"deliveries list a resource's events oldest first, each with the resource as it was", outboxDeliveriesListResourceEventsOldest},
		{"deliveries of an unknown resource or of another account's are empty", outboxDeliveriesUnknownResourceAnotherAccount},
	})
}

func outboxClaimLeasesDueDeliveriesOldest(t *testing.T, newStore func(t *testing.T) Stores) {
	t.Parallel()
	s, ctx := newStore(t), context.Background()
	events := storeEvents(t, s, domain.NewID(), 5)
	slices.Reverse(events) // stored newest first: the order of storage must not matter
	events = sortedByDue(events)
	now := events[4].CreatedAt

	first, err := s.Outbox.Claim(ctx, "dispatcher-a", now, time.Minute, 3, nil)
	if err != nil {
		t.Fatalf("Claim: %v", err)
	}
	if want := eventIDs(events[:3]); !slices.Equal(deliveryIDs(first), want) {
		t.Errorf("first claim = %v, want the three oldest %v", deliveryIDs(first), want)
	}
	for i, d := range first {
		assertDeliveryOf(t, d, events[i])
		if d.Status != ports.DeliveryPending || len(d.Attempts) != 0 || !d.NextAttemptAt.Equal(events[i].CreatedAt) {
			t.Errorf("claimed delivery = %s, %d attempts, next %v; want pending, none, %v", d.Status, len(d.Attempts), d.NextAttemptAt, events[i].CreatedAt)
		}
	}
	rest, err := s.Outbox.Claim(ctx, "dispatcher-b", now, time.Minute, 10, nil)
	if want := eventIDs(events[3:]); err != nil || !slices.Equal(deliveryIDs(rest), want) {
		t.Errorf("second claim = %v, %v; want the other two %v", deliveryIDs(rest), err, want)
	}
}

func outboxClaimLeavesDeliveriesAccountsSkips(t *testing.T, newStore func(t *testing.T) Stores) {
	t.Parallel()
	s, ctx := newStore(t), context.Background()
	busy, other := domain.NewID(), domain.NewID()
	busyEvents := sortedByDue(storeEvents(t, s, busy, 4))
	otherEvents := sortedByDue(storeEvents(t, s, other, 2))
	now := latestDue(append(slices.Clone(busyEvents), otherEvents...))

	got, err := s.Outbox.Claim(ctx, "dispatcher-a", now, time.Minute, 3, []string{busy, "an-account-with-nothing-due"})
	if want := eventIDs(otherEvents); err != nil || !slices.Equal(deliveryIDs(got), want) {
		t.Fatalf("Claim skipping %s = %v, %v; want only the other account's %v", busy, deliveryIDs(got), err, want)
	}
	got, err = s.Outbox.Claim(ctx, "dispatcher-a", now, time.Minute, 10, nil)
	if want := eventIDs(busyEvents); err != nil || !slices.Equal(deliveryIDs(got), want) {
		t.Errorf("Claim skipping nobody = %v, %v; want the skipped account's, oldest first, %v", deliveryIDs(got), err, want)
	}
}

func outboxDeliveryClaimedOnlyOnceDue(t *testing.T, newStore func(t *testing.T) Stores) {
	t.Parallel()
	s, ctx := newStore(t), context.Background()
	e := storeEvents(t, s, domain.NewID(), 1)[0]
	got, err := s.Outbox.Claim(ctx, "dispatcher-a", e.CreatedAt.Add(-time.Millisecond), time.Minute, 10, nil)
	if err != nil || len(got) != 0 {
		t.Errorf("Claim before it is due = %v, %v; want nothing", deliveryIDs(got), err)
	}
	got, err = s.Outbox.Claim(ctx, "dispatcher-a", e.CreatedAt, time.Minute, 10, nil)
	if err != nil || !slices.Equal(deliveryIDs(got), []string{e.ID}) {
		t.Errorf("Claim when due = %v, %v; want %s", deliveryIDs(got), err, e.ID)
	}
}

func outboxHeldDeliveryNotClaimedAnyone(t *testing.T, newStore func(t *testing.T) Stores) {
	t.Parallel()
	s, ctx := newStore(t), context.Background()
	events := storeEvents(t, s, domain.NewID(), 2)
	now := latestDue(events)
	if got, err := s.Outbox.Claim(ctx, "dispatcher-a", now, time.Minute, 10, nil); err != nil || len(got) != 2 {
		t.Fatalf("Claim = %v, %v; want both", deliveryIDs(got), err)
	}
	for _, owner := range []string{"dispatcher-b", "dispatcher-a"} {
		got, err := s.Outbox.Claim(ctx, owner, now.Add(59*time.Second), time.Minute, 10, nil)
		if err != nil || len(got) != 0 {
			t.Errorf("Claim by %s during the lease = %v, %v; want nothing", owner, deliveryIDs(got), err)
		}
	}
}

func outboxConcurrentClaimsNeverHandDelivery(t *testing.T, newStore func(t *testing.T) Stores) {
	t.Parallel()
	s, ctx := newStore(t), context.Background()
	events := storeEvents(t, s, domain.NewID(), 12)
	now := latestDue(events)
	claimed := make([][]ports.Delivery, 8)
	errs := concurrently(len(claimed), func(i int) error {
		var err error
		claimed[i], err = s.Outbox.Claim(ctx, "dispatcher-"+string(rune('a'+i)), now, time.Minute, 3, nil)
		return err
	})
	seen := map[string]int{}
	for i, err := range errs {
		if err != nil {
			t.Errorf("Claim: %v", err)
		}
		for _, d := range claimed[i] {
			if prev, ok := seen[d.Event.ID]; ok {
				t.Errorf("event %s claimed by dispatcher %d and dispatcher %d", d.Event.ID, prev, i)
			}
			seen[d.Event.ID] = i
		}
	}
}

func outboxExpiredLeaseClaimableAgainFormer(t *testing.T, newStore func(t *testing.T) Stores) {
	t.Parallel()
	s, ctx := newStore(t), context.Background()
	e := storeEvents(t, s, domain.NewID(), 1)[0]
	now := e.CreatedAt
	mustClaim(t, s, "dispatcher-a", now, time.Minute, e.ID)
	mustClaim(t, s, "dispatcher-b", now.Add(2*time.Minute), time.Minute, e.ID)

	attempt := ports.Attempt{At: now.Add(2 * time.Minute), StatusCode: 200, Duration: 80 * time.Millisecond}
	err := s.Outbox.RecordAttempt(ctx, e.ID, "dispatcher-a", attempt, ports.DeliveryDelivered, attempt.At)
	if !errors.Is(err, ports.ErrVersionConflict) {
		t.Errorf("RecordAttempt by the former owner: %v, want ErrVersionConflict", err)
	}
	if err := s.Outbox.RecordAttempt(ctx, e.ID, "dispatcher-b", attempt, ports.DeliveryDelivered, attempt.At); err != nil {
		t.Errorf("RecordAttempt by the new owner: %v", err)
	}
}

func outboxRecordingNeedsLeaseAnyoneElse(t *testing.T, newStore func(t *testing.T) Stores) {
	t.Parallel()
	s, ctx := newStore(t), context.Background()
	events := storeEvents(t, s, domain.NewID(), 2)
	held, free := events[0], events[1]
	mustClaim(t, s, "dispatcher-a", held.CreatedAt, time.Minute, held.ID)
	attempt := ports.Attempt{At: latestDue(events), StatusCode: 500, Duration: time.Second}

	for _, c := range []struct{ eventID, owner, what string }{
		{held.ID, "dispatcher-b", "another owner"},
		{free.ID, "dispatcher-a", "a delivery nobody claimed"},
		{domain.NewID(), "dispatcher-a", "an unknown event"},
	} {
		err := s.Outbox.RecordAttempt(ctx, c.eventID, c.owner, attempt, ports.DeliveryFailed, attempt.At)
		if !errors.Is(err, ports.ErrVersionConflict) {
			t.Errorf("RecordAttempt on %s: %v, want ErrVersionConflict", c.what, err)
		}
	}
	for _, e := range events {
		d := deliveryOf(t, s, e)
		if d.Status != ports.DeliveryPending || len(d.Attempts) != 0 {
			t.Errorf("delivery %s = %s with %d attempts, want pending with none", e.ID, d.Status, len(d.Attempts))
		}
	}
	if err := s.Outbox.RecordAttempt(ctx, held.ID, "dispatcher-a", attempt, ports.DeliveryFailed, attempt.At); err != nil {
		t.Errorf("RecordAttempt by the owner: %v", err)
	}
}

func outboxDeliveredEventKeepsAttemptNever(t *testing.T, newStore func(t *testing.T) Stores) {
	t.Parallel()
	s, ctx := newStore(t), context.Background()
	e := storeEvents(t, s, domain.NewID(), 1)[0]
	mustClaim(t, s, "dispatcher-a", e.CreatedAt, time.Minute, e.ID)
	attempt := ports.Attempt{At: e.CreatedAt.Add(time.Second), StatusCode: 204, Duration: 120 * time.Millisecond}
	if err := s.Outbox.RecordAttempt(ctx, e.ID, "dispatcher-a", attempt, ports.DeliveryDelivered, attempt.At); err != nil {
		t.Fatalf("RecordAttempt: %v", err)
	}
	d := deliveryOf(t, s, e)
	if d.Status != ports.DeliveryDelivered || len(d.Attempts) != 1 || !sameAttempt(d.Attempts[0], attempt) {
		t.Errorf("delivery = %s %+v, want delivered with %+v", d.Status, d.Attempts, attempt)
	}
	if got, err := s.Outbox.Claim(ctx, "dispatcher-b", e.CreatedAt.Add(48*time.Hour), time.Minute, 10, nil); err != nil || len(got) != 0 {
		t.Errorf("Claim = %v, %v; want nothing", deliveryIDs(got), err)
	}
}

func outboxFailedEventKeptAttemptsNever(t *testing.T, newStore func(t *testing.T) Stores) {
	t.Parallel()
	s, ctx := newStore(t), context.Background()
	e := storeEvents(t, s, domain.NewID(), 1)[0]
	mustClaim(t, s, "dispatcher-a", e.CreatedAt, time.Minute, e.ID)
	attempt := ports.Attempt{At: e.CreatedAt, StatusCode: 410, Duration: 30 * time.Millisecond}
	if err := s.Outbox.RecordAttempt(ctx, e.ID, "dispatcher-a", attempt, ports.DeliveryFailed, e.CreatedAt); err != nil {
		t.Fatalf("RecordAttempt: %v", err)
	}
	if d := deliveryOf(t, s, e); d.Status != ports.DeliveryFailed || len(d.Attempts) != 1 {
		t.Errorf("delivery = %s with %d attempts, want failed with 1", d.Status, len(d.Attempts))
	}
	if got, err := s.Outbox.Claim(ctx, "dispatcher-b", e.CreatedAt.Add(48*time.Hour), time.Minute, 10, nil); err != nil || len(got) != 0 {
		t.Errorf("Claim = %v, %v; want nothing", deliveryIDs(got), err)
	}
}

func outboxRetryClaimableNextAttemptTime(t *testing.T, newStore func(t *testing.T) Stores) {
	t.Parallel()
	s, ctx := newStore(t), context.Background()
	e := storeEvents(t, s, domain.NewID(), 1)[0]
	now := e.CreatedAt
	attempts := []ports.Attempt{
		{At: now, Error: "dial tcp: connection refused", Duration: 3 * time.Millisecond},
		{At: now.Add(5 * time.Second), StatusCode: 503, Duration: 250 * time.Millisecond},
	}
	for i, attempt := range attempts {
		mustClaim(t, s, "dispatcher-a", attempt.At, time.Minute, e.ID)
		next := attempt.At.Add(5 * time.Second)
		if err := s.Outbox.RecordAttempt(ctx, e.ID, "dispatcher-a", attempt, ports.DeliveryPending, next); err != nil {
			t.Fatalf("RecordAttempt %d: %v", i+1, err)
		}
		if got, err := s.Outbox.Claim(ctx, "dispatcher-b", next.Add(-time.Millisecond), time.Minute, 10, nil); err != nil || len(got) != 0 {
			t.Errorf("Claim before the retry is due = %v, %v; want nothing", deliveryIDs(got), err)
		}
	}
	got := mustClaim(t, s, "dispatcher-b", now.Add(10*time.Second), time.Minute, e.ID)
	d := got[0]
	if d.Status != ports.DeliveryPending || !d.NextAttemptAt.Equal(now.Add(10*time.Second)) || len(d.Attempts) != 2 ||
		!sameAttempt(d.Attempts[0], attempts[0]) || !sameAttempt(d.Attempts[1], attempts[1]) {
		t.Errorf("claimed delivery = %s next %v attempts %+v, want pending next %v attempts %+v",
			d.Status, d.NextAttemptAt, d.Attempts, now.Add(10*time.Second), attempts)
	}
}

func outboxReleaseGivesBackLeaseOwner(t *testing.T, newStore func(t *testing.T) Stores) {
	t.Parallel()
	s, ctx := newStore(t), context.Background()
	events := sortedByDue(storeEvents(t, s, domain.NewID(), 3))
	now := latestDue(events)
	mustClaim(t, s, "dispatcher-a", events[1].CreatedAt, time.Hour, events[0].ID, events[1].ID)
	mustClaim(t, s, "dispatcher-c", now, time.Hour, events[2].ID)
	if err := s.Outbox.Release(ctx, "dispatcher-a"); err != nil {
		t.Fatalf("Release: %v", err)
	}
	mustClaim(t, s, "dispatcher-b", now, time.Hour, events[0].ID, events[1].ID)
	attempt := ports.Attempt{At: now, StatusCode: 200}
	if err := s.Outbox.RecordAttempt(ctx, events[0].ID, "dispatcher-a", attempt, ports.DeliveryDelivered, now); !errors.Is(err, ports.ErrVersionConflict) {
		t.Errorf("RecordAttempt by the released owner: %v, want ErrVersionConflict", err)
	}
	if err := s.Outbox.RecordAttempt(ctx, events[2].ID, "dispatcher-c", attempt, ports.DeliveryDelivered, now); err != nil {
		t.Errorf("RecordAttempt by an owner not released: %v", err)
	}
	if err := s.Outbox.Release(ctx, "nobody"); err != nil {
		t.Errorf("Release of an owner holding nothing: %v", err)
	}
}

func outboxDeliveriesListResourceEventsOldest(t *testing.T, newStore func(t *testing.T) Stores) {
	t.Parallel()
	s, ctx := newStore(t), context.Background()
	w := fundedWithdrawal(t, s, wdSpec{account: domain.NewID(), webhook: "https://shop.example.com/hooks"})
	for i, step := range []func(*domain.Withdrawal) error{
		func(w *domain.Withdrawal) error { return w.StartProcessing(minutes(1)) },
		func(w *domain.Withdrawal) error { return w.Complete("E1", minutes(2)) },
		func(w *domain.Withdrawal) error { return w.Refund(minutes(3)) },
	} {
		if _, err := s.Withdrawals.Update(ctx, w.AccountID(), w.ID(), step); err != nil {
			t.Fatalf("Update %d: %v", i+1, err)
		}
	}
	ds, err := s.Outbox.Deliveries(ctx, w.AccountID(), domain.ResourceWithdrawal, w.ID())
	if err != nil {
		t.Fatalf("Deliveries: %v", err)
	}
	want := []domain.WithdrawalStatus{domain.WdProcessing, domain.WdProcessed, domain.WdRefunded}
	if len(ds) != len(want) {
		t.Fatalf("Deliveries = %v, want %d events", eventTypes(ds), len(want))
	}
	for i, d := range ds {
		if d.Event.Type != domain.EventType(domain.ResourceWithdrawal, string(want[i])) || d.Event.Withdrawal == nil ||
			d.Event.Withdrawal.Status() != want[i] || !d.Event.CreatedAt.Equal(minutes(i+1)) {
			t.Errorf("delivery %d = %s at %v, want %s at %v", i, d.Event.Type, d.Event.CreatedAt, want[i], minutes(i+1))
		}
	}
}

func outboxDeliveriesUnknownResourceAnotherAccount(t *testing.T, newStore func(t *testing.T) Stores) {
	t.Parallel()
	s, ctx := newStore(t), context.Background()
	e := storeEvents(t, s, domain.NewID(), 1)[0]
	for _, c := range []struct {
		account string
		kind    domain.ResourceKind
		id      string
	}{
		{domain.NewID(), domain.ResourceTransaction, e.ResourceID},
		{e.AccountID, domain.ResourceWithdrawal, e.ResourceID},
		{e.AccountID, domain.ResourceTransaction, domain.NewID()},
	} {
		ds, err := s.Outbox.Deliveries(ctx, c.account, c.kind, c.id)
		if err != nil || len(ds) != 0 {
			t.Errorf("Deliveries(%s, %s, %s) = %v, %v; want none", c.account, c.kind, c.id, eventTypes(ds), err)
		}
	}
}

// storeEvents stores n transactions of the account, each with one event due a second after
// the previous one's, and returns the events in the order they were raised.
func storeEvents(t *testing.T, s Stores, account string, n int) []domain.Event {
	t.Helper()
	var out []domain.Event
	for i := range n {
		tx := buildTransaction(t, txSpec{account: account, createdAt: epoch.Add(time.Duration(i) * time.Second), webhook: "https://shop.example.com/hooks"})
		out = append(out, tx.Events()...)
		mustCreateTransaction(t, s, tx)
	}
	return out
}

func sortedByDue(events []domain.Event) []domain.Event {
	out := slices.Clone(events)
	slices.SortStableFunc(out, func(a, b domain.Event) int { return a.CreatedAt.Compare(b.CreatedAt) })
	return out
}

func latestDue(events []domain.Event) time.Time {
	return sortedByDue(events)[len(events)-1].CreatedAt
}

// mustClaim claims for owner and checks that it got exactly the events ids, in that order.
func mustClaim(t *testing.T, s Stores, owner string, now time.Time, lease time.Duration, ids ...string) []ports.Delivery {
	t.Helper()
	got, err := s.Outbox.Claim(context.Background(), owner, now, lease, 10, nil)
	if err != nil || !slices.Equal(deliveryIDs(got), ids) {
		t.Fatalf("Claim by %s at %v = %v, %v; want %v", owner, now, deliveryIDs(got), err, ids)
	}
	return got
}

// deliveryOf returns the stored delivery of e.
func deliveryOf(t *testing.T, s Stores, e domain.Event) ports.Delivery {
	t.Helper()
	ds, err := s.Outbox.Deliveries(context.Background(), e.AccountID, e.Kind, e.ResourceID)
	if err != nil {
		t.Fatalf("Deliveries: %v", err)
	}
	for _, d := range ds {
		if d.Event.ID == e.ID {
			return d
		}
	}
	t.Fatalf("no delivery of event %s", e.ID)
	return ports.Delivery{}
}

// sameAttempt compares attempts, their times as instants.
func sameAttempt(got, want ports.Attempt) bool {
	return got.At.Equal(want.At) && got.StatusCode == want.StatusCode && got.Error == want.Error && got.Duration == want.Duration
}

func eventIDs(events []domain.Event) []string {
	out := make([]string, len(events))
	for i, e := range events {
		out[i] = e.ID
	}
	return out
}

func deliveryIDs(ds []ports.Delivery) []string {
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = d.Event.ID
	}
	return out
}
