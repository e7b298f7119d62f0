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

// The devolution outbox keeps its state in the records that ask for devolutions: a refund in
// its transaction (domain.Refund.Dispatch), a late payment in its payment claim
// (ports.PaymentClaim.Devolution). These cases run in TestTransactions, TestLedger and
// TestInstances.

func txDevolutionDispatchReadsBackAndListsDue(t *testing.T, newStore func(t *testing.T) Stores) {
	t.Parallel()
	s, ctx := newStore(t), context.Background()
	account := domain.NewID()
	// A refund requested at createdAt+3s is due then.
	second := createTransaction(t, s, txSpec{account: account, createdAt: minutes(2), status: domain.TxProcessingRefund})
	first := createTransaction(t, s, txSpec{account: domain.NewID(), createdAt: minutes(1), status: domain.TxProcessingRefund})
	createTransaction(t, s, txSpec{account: account, createdAt: minutes(5), status: domain.TxProcessingRefund}) // due too late
	createTransaction(t, s, txSpec{account: account, createdAt: minutes(0), status: domain.TxRefunded})         // done
	createTransaction(t, s, txSpec{account: account, createdAt: minutes(0), status: domain.TxPaid})             // none
	until := minutes(3)
	got, err := s.Transactions.ListDevolutionsDue(ctx, until, 10)
	if want := []string{first.ID(), second.ID()}; err != nil || !slices.Equal(transactionIDs(got), want) {
		t.Fatalf("ListDevolutionsDue = %v, %v; want %v", transactionIDs(got), err, want)
	}
	if got, err = s.Transactions.ListDevolutionsDue(ctx, until, 1); err != nil || !slices.Equal(transactionIDs(got), []string{first.ID()}) {
		t.Errorf("ListDevolutionsDue(limit 1) = %v, %v; want the earliest", transactionIDs(got), err)
	}
	if got, err = s.Transactions.ListDevolutionsDue(ctx, until, 0); err != nil || len(got) != 0 {
		t.Errorf("ListDevolutionsDue(limit 0) = %v, %v; want none", transactionIDs(got), err)
	}
	// A claim moves the devolution past until, and reads back as stored.
	claimed, err := s.Transactions.Update(ctx, first.AccountID(), first.ID(), func(tx *domain.Transaction) error {
		_, _, err := tx.ClaimDevolution(until, minutes(10))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	back, err := s.Transactions.Get(ctx, first.AccountID(), first.ID())
	if err != nil {
		t.Fatal(err)
	}
	r, _ := back.RefundInProgress()
	if r.Dispatch.Claims != 1 || r.Dispatch.Due == nil || !r.Dispatch.Due.Equal(minutes(10)) {
		t.Errorf("a claimed devolution read back %d claims due %v; want 1 due %v", r.Dispatch.Claims, r.Dispatch.Due, minutes(10))
	}
	assertSameTransaction(t, back, claimed)
	// A refund that completes takes its devolution out for good.
	if _, err := s.Transactions.Update(ctx, account, second.ID(), func(tx *domain.Transaction) error {
		r, _ := tx.RefundInProgress()
		return tx.ConfirmRefund(r.ID, "D00000000202611221111abcdefghijk", until)
	}); err != nil {
		t.Fatal(err)
	}
	if got, err = s.Transactions.ListDevolutionsDue(ctx, minutes(20), 10); err != nil || len(got) != 2 || slices.Contains(transactionIDs(got), second.ID()) {
		t.Errorf("after a claim and a completion, ListDevolutionsDue(later) = %v, %v; want the claimed one and the late one", transactionIDs(got), err)
	}
}

func txConcurrentClaimsOneDevolutionOneWins(t *testing.T, newStore func(t *testing.T) Stores) {
	t.Parallel()
	s := newStore(t)
	tx := createTransaction(t, s, txSpec{account: domain.NewID(), status: domain.TxProcessingRefund})
	if wins := claimDevolutionConcurrently(t, []ports.TransactionRepository{s.Transactions}, tx, 8); wins != 1 {
		t.Fatalf("%d claims won, want exactly 1", wins)
	}
}

// claimDevolutionConcurrently races n claims of the devolution of tx's refund through the
// repositories in turn and tells how many won; every loser must find it not due, or give up
// having written nothing.
func claimDevolutionConcurrently(t *testing.T, repos []ports.TransactionRepository, tx *domain.Transaction, n int) int {
	t.Helper()
	now := tx.UpdatedAt().Add(time.Second)
	errs := concurrently(n, func(i int) error {
		_, err := repos[i%len(repos)].Update(context.Background(), tx.AccountID(), tx.ID(), func(tx *domain.Transaction) error {
			_, _, err := tx.ClaimDevolution(now, now.Add(time.Minute))
			return err
		})
		return err
	})
	wins := claimWins(t, errs, domain.ErrDevolutionNotDue)
	got, err := repos[0].Get(context.Background(), tx.AccountID(), tx.ID())
	if err != nil {
		t.Fatal(err)
	}
	if r, _ := got.RefundInProgress(); r.Dispatch.Claims != wins {
		t.Errorf("stored %d claims after %d won", r.Dispatch.Claims, wins)
	}
	return wins
}

func ledgerLateDevolutionRecordedWithMarking(t *testing.T, newStore func(t *testing.T) Stores) {
	t.Parallel()
	s, ctx := newStore(t), context.Background()
	claim := func(suffix string, at time.Time) string {
		e2e := "E00000000202611221111" + suffix + domain.NewID()[:9]
		if _, err := s.Ledger.ClaimPayment(ctx, ports.PaymentClaim{EndToEndID: e2e, TransactionID: domain.NewID(), AccountID: "acc", Amount: 100, CreatedAt: at}); err != nil {
			t.Fatal(err)
		}
		return e2e
	}
	second, first, later, paid := claim("b", minutes(1)), claim("a", minutes(1)), claim("c", minutes(1)), claim("d", minutes(1))
	for e2e, due := range map[string]time.Time{first: minutes(1), second: minutes(2), later: minutes(5)} {
		if err := s.Ledger.MarkLate(ctx, e2e, due); err != nil {
			t.Fatalf("MarkLate: %v", err)
		}
	}
	// Marking again changes nothing: the devolution was recorded by the first.
	if err := s.Ledger.MarkLate(ctx, first, minutes(9)); err != nil {
		t.Fatalf("MarkLate again: %v", err)
	}
	if err := s.Ledger.MarkLate(ctx, "E00000000202611221111nosuchpaymnt", minutes(1)); !errors.Is(err, domain.ErrNotFound) {
		t.Errorf("MarkLate(unknown) = %v; want ErrNotFound", err)
	}
	got, err := s.Ledger.LateDevolutionsDue(ctx, minutes(3), 10)
	if want := []string{first, second}; err != nil || !slices.Equal(claimIDs(got), want) {
		t.Fatalf("LateDevolutionsDue = %v, %v; want %v", claimIDs(got), err, want)
	}
	if d := got[0].Devolution; d.Due == nil || !d.Due.Equal(minutes(1)) || d.Claims != 0 || !got[0].Late {
		t.Errorf("the first late claim reads back %+v; want late, due %v, no claim", got[0], minutes(1))
	}
	if got, err = s.Ledger.LateDevolutionsDue(ctx, minutes(3), 1); err != nil || !slices.Equal(claimIDs(got), []string{first}) {
		t.Errorf("LateDevolutionsDue(limit 1) = %v, %v; want the earliest", claimIDs(got), err)
	}
	// An update stores the devolution fn leaves, and nothing else; a failing fn stores nothing.
	stored, err := s.Ledger.UpdateLateDevolution(ctx, first, func(c *ports.PaymentClaim) error {
		_, err := c.Devolution.Claim(minutes(3), minutes(10))
		c.Amount, c.TransactionID = 1, "changed"
		return err
	})
	if err != nil || stored.Devolution.Claims != 1 || !stored.Devolution.Due.Equal(minutes(10)) || stored.Amount != 100 {
		t.Fatalf("UpdateLateDevolution = %+v, %v; want one claim due %v, the rest as it was", stored, err, minutes(10))
	}
	boom := errors.New("boom")
	if _, err := s.Ledger.UpdateLateDevolution(ctx, second, func(c *ports.PaymentClaim) error {
		c.Devolution.Done()
		return boom
	}); !errors.Is(err, boom) {
		t.Errorf("a failing update answered %v; want fn's error", err)
	}
	if _, err := s.Ledger.UpdateLateDevolution(ctx, "E00000000202611221111nosuchpaymnt", func(*ports.PaymentClaim) error { return nil }); !errors.Is(err, domain.ErrNotFound) {
		t.Errorf("UpdateLateDevolution(unknown) = %v; want ErrNotFound", err)
	}
	if _, err := s.Ledger.UpdateLateDevolution(ctx, later, func(c *ports.PaymentClaim) error {
		c.Devolution.Done()
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if got, err = s.Ledger.LateDevolutionsDue(ctx, minutes(20), 10); err != nil || !slices.Equal(claimIDs(got), []string{second, first}) {
		t.Errorf("after a claim, a failed update and a done one, LateDevolutionsDue(later) = %v, %v; want %v", claimIDs(got), err, []string{second, first})
	}
	late, err := s.Ledger.LatePayments(ctx)
	if err != nil || len(late) != 3 || slices.Contains(claimIDs(late), paid) {
		t.Errorf("LatePayments = %v, %v; want the three late claims", claimIDs(late), err)
	}
}

func ledgerConcurrentClaimsOneLateDevolutionOneWins(t *testing.T, newStore func(t *testing.T) Stores) {
	t.Parallel()
	s := newStore(t)
	if wins := claimLateConcurrently(t, []ports.Ledger{s.Ledger}, 8); wins != 1 {
		t.Fatalf("%d claims won, want exactly 1", wins)
	}
}

// claimLateConcurrently records a late payment and races n claims of its devolution through
// the ledgers in turn; it tells how many won, and checks that the store counted as many.
func claimLateConcurrently(t *testing.T, ledgers []ports.Ledger, n int) int {
	t.Helper()
	ctx := context.Background()
	e2e := "E00000000202611221111" + domain.NewID()[:10]
	if _, err := ledgers[0].ClaimPayment(ctx, ports.PaymentClaim{EndToEndID: e2e, TransactionID: domain.NewID(), AccountID: "acc", Amount: 100, CreatedAt: epoch}); err != nil {
		t.Fatal(err)
	}
	if err := ledgers[len(ledgers)-1].MarkLate(ctx, e2e, epoch); err != nil {
		t.Fatal(err)
	}
	now := epoch.Add(time.Second)
	errs := concurrently(n, func(i int) error {
		_, err := ledgers[i%len(ledgers)].UpdateLateDevolution(ctx, e2e, func(c *ports.PaymentClaim) error {
			_, err := c.Devolution.Claim(now, now.Add(time.Minute))
			return err
		})
		return err
	})
	wins := claimWins(t, errs, domain.ErrDevolutionNotDue)
	// Read back through an update that changes nothing (other tests share the store).
	stop := errors.New("read only")
	var stored ports.PaymentClaim
	if _, err := ledgers[0].UpdateLateDevolution(ctx, e2e, func(c *ports.PaymentClaim) error {
		stored = *c
		return stop
	}); !errors.Is(err, stop) || stored.Devolution.Claims != wins {
		t.Errorf("after %d claims won, the claim reads back %+v (%v); want %d claims", wins, stored, err, wins)
	}
	return wins
}

func instDevolutionClaims(t *testing.T, newPair func(t *testing.T) (a, b Instance)) {
	t.Parallel()
	a, b := newPair(t)
	repos := []ports.TransactionRepository{a.Transactions, b.Transactions}
	ledgers := []ports.Ledger{a.Ledger, b.Ledger}
	account := domain.NewID()
	for round := range 6 {
		tx := createTransaction(t, a.Stores, txSpec{account: account, createdAt: minutes(round), status: domain.TxProcessingRefund})
		if wins := claimDevolutionConcurrently(t, repos, tx, 8); wins != 1 {
			t.Fatalf("round %d: %d claims of a refund's devolution won, want exactly 1", round, wins)
		}
		if wins := claimLateConcurrently(t, ledgers, 8); wins != 1 {
			t.Fatalf("round %d: %d claims of a late payment's devolution won, want exactly 1", round, wins)
		}
	}
}

func claimIDs(cs []ports.PaymentClaim) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.EndToEndID
	}
	return out
}
