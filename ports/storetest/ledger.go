package storetest

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/pixgate/pixgate/domain"
	"github.com/pixgate/pixgate/ports"
)

// TestLedger is the conformance suite of ports.Ledger, run with the repositories of the same
// store: their status changes post the entries the ledger keeps. newStore returns an empty
// store for each subtest (see Stores).
func TestLedger(t *testing.T, newStore func(t *testing.T) Stores) {
	t.Helper()
	runStoreTests(t, newStore, []storeTest{
		{"the balance follows every status change", ledgerBalanceFollowsStatusChange},
		{"the balance counts the movements of every status", ledgerBalanceCountsMovementsStatus},
		{"an account with nothing stored has a zero balance", ledgerAccountNothingStoredZeroBalance},
		{"a refund the balance does not cover is refused and changes nothing", ledgerRefundBalanceDoesNotCover},
		{"a MED hold is taken in full, and while available is negative nothing else leaves", ledgerMEDHoldTakenFullWhile},
		{"concurrent withdrawals and refunds of one account never overdraw", ledgerConcurrentWithdrawalsRefundsAccountNever},
		{"the statement pages newest first by entry number, with filters", ledgerStatementPagesNewestFirstEntry},
		{"scan walks a ledger oldest first, and ledgers lists the ledgers with entries", ledgerScanWalksLedgerOldestFirst},
		{"post stores a posting once whatever the retries and tells the one call that stored it, late payments in the service's ledger", ledgerPostStoresPostingOnceWhatever},
		{"post records a journal's postings in one step, all or none", ledgerPostRecordsJournalWhole},
		{"a payment's end-to-end id is claimed once, by the first", ledgerPaymentEndEndIdClaimed},
		{"recover finds nothing to do on a store nothing interrupted", ledgerRecoverFindsNothingDoStore},
		{"random interleavings keep every ledger equal to what the histories imply", ledgerRandomInterleavingsKeepLedgerEqual},
		{"a payment and its fee are one step: withdrawals racing them never overdraw", ledgerPaymentFeeOneStep},
		{"a late payment's devolution is recorded by its first marking, updated alone, and listed while due", ledgerLateDevolutionRecordedWithMarking},
		{"of concurrent claims of one late payment's devolution exactly one wins", ledgerConcurrentClaimsOneLateDevolutionOneWins},
	})
}

func ledgerBalanceFollowsStatusChange(t *testing.T, newStore func(t *testing.T) Stores) {
	t.Parallel()
	s, ctx := newStore(t), context.Background()
	account := domain.NewID()
	tx := createTransaction(t, s, txSpec{account: account, amount: 2000, status: domain.TxPending})
	var w *domain.Withdrawal
	expect := func(step string, want domain.Balance) {
		t.Helper()
		if got, err := s.Ledger.Balance(ctx, account); err != nil || got != want {
			t.Errorf("after %s: Balance = %+v, %v; want %+v", step, got, err, want)
		}
	}
	updateTx := func(fn func(*domain.Transaction) error) {
		t.Helper()
		if _, err := s.Transactions.Update(ctx, account, tx.ID(), fn); err != nil {
			t.Fatalf("Update: %v", err)
		}
	}
	updateWd := func(fn func(*domain.Withdrawal) error) {
		t.Helper()
		if _, err := s.Withdrawals.Update(ctx, account, w.ID(), fn); err != nil {
			t.Fatalf("Update: %v", err)
		}
	}
	expect("create", domain.Balance{})
	updateTx(func(t *domain.Transaction) error { return t.AttachPix(pixFor(t), minutes(1)) })
	expect("the QR code", domain.Balance{Pending: 2000})
	updateTx(func(t *domain.Transaction) error {
		return t.Pay(domain.Payment{AmountPaid: 2000, Fee: 20, PaidAt: minutes(2)}, minutes(2))
	})
	expect("the payment and its fee", domain.Balance{Available: 1980})
	updateTx(func(t *domain.Transaction) error { return t.OpenDispute(minutes(3)) })
	expect("a dispute, held in full", domain.Balance{Available: -20, Blocked: 2000})
	updateTx(func(t *domain.Transaction) error { return t.RejectDispute(minutes(4)) })
	expect("the dispute's rejection", domain.Balance{Available: 1980})

	w = createWithdrawal(t, s, wdSpec{account: account, amount: 900, fee: 10})
	expect("a withdrawal", domain.Balance{Available: 1070})
	updateWd(func(w *domain.Withdrawal) error { return w.StartProcessing(minutes(5)) })
	expect("its processing", domain.Balance{Available: 1070})
	updateWd(func(w *domain.Withdrawal) error { return w.Complete("E1", minutes(6)) })
	expect("its completion", domain.Balance{Available: 1070})
	updateWd(func(w *domain.Withdrawal) error { return w.Refund(minutes(7)) })
	expect("its return", domain.Balance{Available: 1980})

	updateTx(func(t *domain.Transaction) error {
		return t.RequestRefund(domain.RefundRequest{ID: "R1", Amount: 1000}, minutes(8))
	})
	expect("a partial refund's request", domain.Balance{Available: 980, Blocked: 1000})
	updateTx(func(t *domain.Transaction) error { return t.FailRefund("R1", "no", minutes(9)) })
	expect("the refund's failure", domain.Balance{Available: 1980})
	updateTx(func(t *domain.Transaction) error {
		return t.RequestRefund(domain.RefundRequest{ID: "R2", Amount: 1980}, minutes(10))
	})
	updateTx(func(t *domain.Transaction) error { return t.ConfirmRefund("R2", "D2", minutes(11)) })
	expect("the refund", domain.Balance{})
}

func ledgerBalanceCountsMovementsStatus(t *testing.T, newStore func(t *testing.T) Stores) {
	t.Parallel()
	s, ctx := newStore(t), context.Background()
	account := domain.NewID()
	for _, spec := range []txSpec{
		{amount: 300, status: domain.TxPending},                        // nothing yet
		{amount: 700, status: domain.TxPixQRCodeGenerated},             // pending 700
		{amount: 10000, fee: 100, status: domain.TxPaid},               // available 9900
		{amount: 5000, status: domain.TxPaid},                          // available 5000
		{amount: 2000, fee: 20, status: domain.TxBlocked},              // available -20, blocked 2000
		{amount: 1000, fee: 10, status: domain.TxProcessingRefund},     // available -10, blocked 1000
		{amount: 400, status: domain.TxProcessingInfraction},           // blocked 400
		{amount: 3000, status: domain.TxRefunded},                      // nothing
		{amount: 600, status: domain.TxInfraction},                     // nothing
		{amount: 800, status: domain.TxFailed},                         // nothing
		{amount: 9000, paid: 9000, fee: 90, status: domain.TxRefunded}, // available -90: fees stay charged
	} {
		spec.account = account
		createTransaction(t, s, spec)
	}
	for _, spec := range []wdSpec{
		{amount: 1000, fee: 50, status: domain.WdPending},  // holds 1050
		{amount: 2000, status: domain.WdProcessing},        // holds 2000
		{amount: 500, fee: 5, status: domain.WdProcessed},  // holds 505
		{amount: 700, fee: 7, status: domain.WdCanceled},   // came back
		{amount: 800, status: domain.WdFailed},             // came back
		{amount: 900, status: domain.WdRejected},           // came back
		{amount: 1100, fee: 11, status: domain.WdRefunded}, // came back
	} {
		spec.account = account
		createWithdrawal(t, s, spec)
	}
	createTransaction(t, s, txSpec{account: domain.NewID(), amount: 50000, status: domain.TxPaid}) // another account

	want := domain.Balance{Available: 9900 + 5000 - 20 - 10 - 90 - 1050 - 2000 - 505, Blocked: 2000 + 1000 + 400, Pending: 700}
	if got, err := s.Ledger.Balance(ctx, account); err != nil || got != want {
		t.Errorf("Balance = %+v, %v; want %+v", got, err, want)
	}
	AssertLedgerMatchesHistories(t, s, account)
}

func ledgerAccountNothingStoredZeroBalance(t *testing.T, newStore func(t *testing.T) Stores) {
	t.Parallel()
	s, ctx := newStore(t), context.Background()
	fund(t, s, domain.NewID(), 1000)
	if got, err := s.Ledger.Balance(ctx, domain.NewID()); err != nil || got != (domain.Balance{}) {
		t.Errorf("Balance = %+v, %v; want zero", got, err)
	}
}

func ledgerRefundBalanceDoesNotCover(t *testing.T, newStore func(t *testing.T) Stores) {
	t.Parallel()
	s, ctx := newStore(t), context.Background()
	account := domain.NewID()
	tx := createTransaction(t, s, txSpec{account: account, amount: 1000, fee: 10, status: domain.TxPaid, webhook: "https://shop.example.com/hooks"})
	before, _ := s.Transactions.Get(ctx, account, tx.ID())
	beforeEvents, _ := s.Outbox.Deliveries(ctx, account, domain.ResourceTransaction, tx.ID())
	_, err := s.Transactions.Update(ctx, account, tx.ID(), func(t *domain.Transaction) error {
		return t.RequestRefund(domain.RefundRequest{ID: "R1"}, minutes(5)) // 1000 asked, 990 available
	})
	if !errors.Is(err, domain.ErrInsufficientBalance) {
		t.Fatalf("Update: %v, want ErrInsufficientBalance", err)
	}
	after, _ := s.Transactions.Get(ctx, account, tx.ID())
	assertSameTransaction(t, after, before)
	if ds, _ := s.Outbox.Deliveries(ctx, account, domain.ResourceTransaction, tx.ID()); len(ds) != len(beforeEvents) {
		t.Errorf("%d deliveries after the refusal, want %d", len(ds), len(beforeEvents))
	}
	if got, err := s.Ledger.Balance(ctx, account); err != nil || got != (domain.Balance{Available: 990}) {
		t.Errorf("Balance = %+v, %v; want 990 available", got, err)
	}
	if _, err := s.Transactions.Update(ctx, account, tx.ID(), func(t *domain.Transaction) error {
		return t.RequestRefund(domain.RefundRequest{ID: "R2", Amount: 990}, minutes(6))
	}); err != nil {
		t.Errorf("a refund of what is available: %v", err)
	}
}

func ledgerMEDHoldTakenFullWhile(t *testing.T, newStore func(t *testing.T) Stores) {
	t.Parallel()
	s, ctx := newStore(t), context.Background()
	account := domain.NewID()
	disputed := createTransaction(t, s, txSpec{account: account, amount: 1000, status: domain.TxPaid})
	other := createTransaction(t, s, txSpec{account: account, amount: 500, status: domain.TxPaid, createdAt: minutes(1)})
	createWithdrawal(t, s, wdSpec{account: account, amount: 1200})
	if _, err := s.Transactions.Update(ctx, account, disputed.ID(), func(t *domain.Transaction) error { return t.OpenDispute(minutes(5)) }); err != nil {
		t.Fatalf("OpenDispute: %v", err)
	}
	if got, _ := s.Ledger.Balance(ctx, account); got != (domain.Balance{Available: -700, Blocked: 1000}) {
		t.Errorf("Balance = %+v, want -700 available and 1000 blocked", got)
	}
	if err := s.Withdrawals.Create(ctx, buildWithdrawal(t, wdSpec{account: account, amount: 1})); !errors.Is(err, domain.ErrInsufficientBalance) {
		t.Errorf("a withdrawal of 1: %v, want ErrInsufficientBalance", err)
	}
	if _, err := s.Transactions.Update(ctx, account, other.ID(), func(t *domain.Transaction) error {
		return t.RequestRefund(domain.RefundRequest{ID: "R1", Amount: 1}, minutes(6))
	}); !errors.Is(err, domain.ErrInsufficientBalance) {
		t.Errorf("a refund of 1: %v, want ErrInsufficientBalance", err)
	}
	AssertLedgerMatchesHistories(t, s, account)
}

func ledgerConcurrentWithdrawalsRefundsAccountNever(t *testing.T, newStore func(t *testing.T) Stores) {
	t.Parallel()
	s, ctx := newStore(t), context.Background()
	account := domain.NewID()
	const n = 12
	txs := make([]*domain.Transaction, n)
	for i := range txs {
		txs[i] = createTransaction(t, s, txSpec{account: account, amount: 100, status: domain.TxPaid, createdAt: minutes(i)})
	}
	// 1200 available; 2n debits of 100 race for it.
	ws := make([]*domain.Withdrawal, n)
	for i := range ws {
		ws[i] = buildWithdrawal(t, wdSpec{account: account, amount: 90, fee: 10})
	}
	errs := concurrently(2*n, func(i int) error {
		if i < n {
			return s.Withdrawals.Create(ctx, ws[i])
		}
		_, err := s.Transactions.Update(ctx, account, txs[i-n].ID(), func(t *domain.Transaction) error {
			return t.RequestRefund(domain.RefundRequest{ID: fmt.Sprintf("R%d", i)}, minutes(60))
		})
		return err
	})
	accepted := 0
	for _, err := range errs {
		switch {
		case err == nil:
			accepted++
		case !errors.Is(err, domain.ErrInsufficientBalance) && !errors.Is(err, ports.ErrVersionConflict):
			t.Errorf("a debit: %v, want nil or ErrInsufficientBalance", err)
		}
	}
	if accepted > n {
		t.Errorf("%d debits of 100 accepted on 1200", accepted)
	}
	got, err := s.Ledger.Balance(ctx, account)
	if err != nil || got.Available < 0 || got.Available != domain.Cents(1200-100*accepted) {
		t.Errorf("Balance = %+v, %v; want %d available", got, err, 1200-100*accepted)
	}
	AssertLedgerMatchesHistories(t, s, account)
}

func ledgerStatementPagesNewestFirstEntry(t *testing.T, newStore func(t *testing.T) Stores) {
	t.Parallel()
	s, ctx := newStore(t), context.Background()
	account := domain.NewID()
	for i := range 5 {
		createTransaction(t, s, txSpec{account: account, amount: domain.Cents(1000 + i), fee: 10, status: domain.TxPaid, createdAt: minutes(10 * i)})
	}
	createTransaction(t, s, txSpec{account: domain.NewID(), amount: 777, status: domain.TxPaid})
	all, err := s.Ledger.Entries(ctx, ports.EntryFilter{AccountID: account}, 100)
	if err != nil || len(all) != 10 {
		t.Fatalf("Entries = %d, %v; want 10 (5 payments, 5 fees)", len(all), err)
	}
	for i, e := range all {
		if e.Seq != int64(10-i) || e.AccountID != account {
			t.Fatalf("entry %d is number %d of %s, want %d of %s", i, e.Seq, e.AccountID, 10-i, account)
		}
	}
	page1, _ := s.Ledger.Entries(ctx, ports.EntryFilter{AccountID: account}, 4)
	// An entry arriving between two pages is numbered above every page handed out.
	createTransaction(t, s, txSpec{account: account, amount: 5000, status: domain.TxPaid, createdAt: minutes(100)})
	page2, _ := s.Ledger.Entries(ctx, ports.EntryFilter{AccountID: account, Before: page1[len(page1)-1].Seq}, 4)
	page3, _ := s.Ledger.Entries(ctx, ports.EntryFilter{AccountID: account, Before: page2[len(page2)-1].Seq}, 4)
	var seqs []int64
	for _, e := range slices.Concat(page1, page2, page3) {
		seqs = append(seqs, e.Seq)
	}
	if want := []int64{10, 9, 8, 7, 6, 5, 4, 3, 2, 1}; !slices.Equal(seqs, want) {
		t.Errorf("pages = %v, want %v", seqs, want)
	}
	// Pages of three end inside a payment's journal (its fee is its second line): the next page
	// starts right below, with the payment.
	seqs = nil
	for before, n := int64(10), 0; before != 1 && n < 10; n++ {
		page, err := s.Ledger.Entries(ctx, ports.EntryFilter{AccountID: account, Before: before}, 3)
		if err != nil || len(page) == 0 {
			t.Fatalf("the page below %d = %v, %v", before, page, err)
		}
		for _, e := range page {
			seqs = append(seqs, e.Seq)
		}
		before = page[len(page)-1].Seq
	}
	if want := []int64{9, 8, 7, 6, 5, 4, 3, 2, 1}; !slices.Equal(seqs, want) {
		t.Errorf("pages of three below 10 = %v, want %v", seqs, want)
	}
	fees, _ := s.Ledger.Entries(ctx, ports.EntryFilter{AccountID: account, Types: []domain.MovementType{domain.MoveFee}}, 100)
	if len(fees) != 5 || fees[0].Type != domain.MoveFee || fees[0].Delta() != (domain.LedgerBalance{Available: -10}) {
		t.Errorf("fees = %+v, want 5 fee entries of -10", fees)
	}
	from, to := minutes(10), minutes(30).Add(5*time.Second)
	dated, _ := s.Ledger.Entries(ctx, ports.EntryFilter{AccountID: account, StartDate: &from, EndDate: &to}, 100)
	if len(dated) != 6 {
		t.Errorf("%d entries between minutes 10 and 30, want 6 (transactions 1 to 3)", len(dated))
	}
	for _, e := range dated {
		if e.CreatedAt.Before(from) || e.CreatedAt.After(to) {
			t.Errorf("entry at %v outside [%v, %v]", e.CreatedAt, from, to)
		}
	}
	if none, err := s.Ledger.Entries(ctx, ports.EntryFilter{AccountID: domain.NewID()}, 10); err != nil || len(none) != 0 {
		t.Errorf("an unknown account's statement = %d entries, %v; want none", len(none), err)
	}
}

func ledgerScanWalksLedgerOldestFirst(t *testing.T, newStore func(t *testing.T) Stores) {
	t.Parallel()
	s, ctx := newStore(t), context.Background()
	a, b := domain.NewID(), domain.NewID()
	fund(t, s, a, 100)
	fund(t, s, b, 200)
	fund(t, s, a, 300)
	var seen []domain.Cents
	if err := s.Ledger.Scan(ctx, a, func(e domain.Entry) error { seen = append(seen, e.BalanceAfter.Available); return nil }); err != nil {
		t.Fatalf("Scan: %v", err)
	}
	if !slices.Equal(seen, []domain.Cents{100, 400}) {
		t.Errorf("Scan saw balances %v, want [100 400]", seen)
	}
	stop := errors.New("stop")
	if err := s.Ledger.Scan(ctx, a, func(domain.Entry) error { return stop }); !errors.Is(err, stop) {
		t.Errorf("Scan returned %v, want fn's error", err)
	}
	ledgers, err := s.Ledger.Ledgers(ctx)
	if err != nil || !slices.Contains(ledgers, a) || !slices.Contains(ledgers, b) {
		t.Errorf("Ledgers = %v, %v; want both accounts", ledgers, err)
	}
}

func ledgerPostStoresPostingOnceWhatever(t *testing.T, newStore func(t *testing.T) Stores) {
	t.Parallel()
	s, ctx := newStore(t), context.Background()
	arrive, leave := domain.LatePaymentPostings("E0000000020261122111111aaaaaaaa", domain.NewID(), 1234)
	for i := range 3 {
		n, err := s.Ledger.Post(ctx, arrive)
		if err != nil {
			t.Fatalf("Post: %v", err)
		}
		want := 0 // stored already
		if i == 0 {
			want = 1
		}
		if n != want {
			t.Errorf("Post number %d of one posting answered %d stored, want %d", i+1, n, want)
		}
	}
	stored := make([]int, 4)
	errs := concurrently(4, func(i int) error {
		n, err := s.Ledger.Post(ctx, leave)
		stored[i] = n
		return err
	})
	for _, err := range errs {
		if err != nil {
			t.Errorf("Post: %v", err)
		}
	}
	if total := stored[0] + stored[1] + stored[2] + stored[3]; total != 1 {
		t.Errorf("four concurrent posts of one posting answered %v stored, want exactly one 1", stored)
	}
	var ids []string
	_ = s.Ledger.Scan(ctx, "", func(e domain.Entry) error { ids = append(ids, e.ID); return nil })
	if !slices.Equal(ids, []string{arrive.ID, leave.ID}) {
		t.Errorf("the service's ledger holds %v, want the arrival and the return once each", ids)
	}
}

func ledgerPostRecordsJournalWhole(t *testing.T, newStore func(t *testing.T) Stores) {
	t.Parallel()
	s, ctx := newStore(t), context.Background()
	account := domain.NewID()
	leg := func(id, journal string, debit, credit domain.LedgerAccount, amount domain.Cents, checked bool) domain.Posting {
		return domain.Posting{ID: id, Journal: journal, Type: domain.MoveOpeningBalance, AccountID: account,
			Resource: domain.ResourceAccount, ResourceID: account, Debit: debit, Credit: credit, Amount: amount, Checked: checked, At: minutes(1)}
	}
	in := leg(account+"/in", "", domain.LedgerClearing, domain.LedgerAvailable, 500, false)
	tooMuch := leg(account+"/out", in.ID, domain.LedgerAvailable, domain.LedgerBlocked, 501, true)
	if _, err := s.Ledger.Post(ctx, in, tooMuch); !errors.Is(err, domain.ErrInsufficientBalance) {
		t.Fatalf("Post of a journal whose debit its credit does not cover: %v, want ErrInsufficientBalance", err)
	}
	if es, err := s.Ledger.Entries(ctx, ports.EntryFilter{AccountID: account}, 10); err != nil || len(es) != 0 {
		t.Fatalf("after the refusal: %d entries, %v; want none (not even the credit)", len(es), err)
	}
	out := leg(account+"/out", in.ID, domain.LedgerAvailable, domain.LedgerBlocked, 500, true)
	for range 2 {
		if _, err := s.Ledger.Post(ctx, in, out); err != nil {
			t.Fatalf("Post of a journal its credit covers: %v", err)
		}
	}
	es, err := s.Ledger.Entries(ctx, ports.EntryFilter{AccountID: account}, 10)
	if err != nil || len(es) != 2 {
		t.Fatalf("Entries = %d, %v; want the two lines, once", len(es), err)
	}
	if es[1].ID != in.ID || es[1].Seq != 1 || es[1].Journal != "" || es[1].BalanceAfter != (domain.LedgerBalance{Available: 500}) ||
		es[0].ID != out.ID || es[0].Seq != 2 || es[0].Journal != in.ID || es[0].BalanceAfter != (domain.LedgerBalance{Blocked: 500}) ||
		!es[0].CreatedAt.Equal(es[1].CreatedAt) {
		t.Errorf("lines %+v, want the credit then the debit, numbered 1 and 2, in the credit's journal and dated alike", es)
	}
	blocked, err := s.Ledger.Entries(ctx, ports.EntryFilter{AccountID: account, Types: []domain.MovementType{domain.MoveOpeningBalance}, Before: 2}, 10)
	if err != nil || len(blocked) != 1 || blocked[0].ID != in.ID {
		t.Errorf("the page below line 2 = %+v, %v; want the journal's first line only", blocked, err)
	}
}

func ledgerPaymentEndEndIdClaimed(t *testing.T, newStore func(t *testing.T) Stores) {
	t.Parallel()
	s, ctx := newStore(t), context.Background()
	e2e := "E00000000202611221111" + domain.NewID()[:10]
	claims := make([]ports.PaymentClaim, 6)
	errs := concurrently(6, func(i int) error {
		c, err := s.Ledger.ClaimPayment(ctx, ports.PaymentClaim{EndToEndID: e2e, TransactionID: fmt.Sprint("tx-", i), AccountID: "acc", Amount: 100, CreatedAt: epoch})
		claims[i] = c
		return err
	})
	winners := map[string]bool{}
	for i, err := range errs {
		if err != nil {
			t.Fatalf("ClaimPayment: %v", err)
		}
		winners[claims[i].TransactionID] = true
	}
	if len(winners) != 1 {
		t.Errorf("claims answered %v, want one winner for all", winners)
	}
	if err := s.Ledger.MarkLate(ctx, e2e, epoch); err != nil {
		t.Fatalf("MarkLate: %v", err)
	}
	late, err := s.Ledger.LatePayments(ctx)
	if err != nil || len(late) != 1 || late[0].EndToEndID != e2e || !late[0].Late {
		t.Errorf("LatePayments = %+v, %v; want the claim marked late", late, err)
	}
	if again, err := s.Ledger.ClaimPayment(ctx, ports.PaymentClaim{EndToEndID: e2e, TransactionID: "other"}); err != nil || !again.Late {
		t.Errorf("ClaimPayment after MarkLate = %+v, %v; want the stored, late claim", again, err)
	}
}

func ledgerRecoverFindsNothingDoStore(t *testing.T, newStore func(t *testing.T) Stores) {
	t.Parallel()
	s, ctx := newStore(t), context.Background()
	fund(t, s, domain.NewID(), 100)
	if n, err := s.Ledger.Recover(ctx); err != nil || n != 0 {
		t.Errorf("Recover = %d, %v; want nothing", n, err)
	}
}

func ledgerRandomInterleavingsKeepLedgerEqual(t *testing.T, newStore func(t *testing.T) Stores) {
	t.Parallel()
	randomWalk(t, newStore(t), 1500)
}

func ledgerPaymentFeeOneStep(t *testing.T, newStore func(t *testing.T) Stores) {
	t.Parallel()
	raceFeesAndWithdrawals(t, []Stores{newStore(t)})
}

// AssertLedgerMatchesHistories checks the account's ledger in s: numbers dense from 1, every
// balance after following from the one before, the last equal to Balance, and exactly the
// entries its transactions' and withdrawals' histories imply (a checked posting with its void,
// and opening balances, being the only entries allowed without a status change). Adapter
// authors may call it from their own tests, after faults or migrations.
func AssertLedgerMatchesHistories(t *testing.T, s Stores, account string) {
	t.Helper()
	ctx := context.Background()
	var entries []domain.Entry
	if err := s.Ledger.Scan(ctx, account, func(e domain.Entry) error { entries = append(entries, e); return nil }); err != nil {
		t.Fatalf("Scan: %v", err)
	}
	var run domain.LedgerBalance
	stored := map[string]domain.Entry{}
	for i, e := range entries {
		d := e.Delta()
		run = domain.LedgerBalance{Available: run.Available + d.Available, Blocked: run.Blocked + d.Blocked}
		if e.Seq != int64(i+1) || e.BalanceAfter != run || e.Debit == e.Credit || e.Amount <= 0 {
			t.Fatalf("entry %d (%s): number %d, after %+v; want number %d, after %+v, two accounts, a positive amount", i, e.ID, e.Seq, e.BalanceAfter, i+1, run)
		}
		if _, dup := stored[e.ID]; dup {
			t.Fatalf("entry %s is stored twice", e.ID)
		}
		stored[e.ID] = e
	}
	if b, err := s.Ledger.Balance(ctx, account); err != nil || b.Available != run.Available || b.Blocked != run.Blocked {
		t.Errorf("Balance = %+v, %v; the entries add up to %+v", b, err, run)
	}
	var implied []domain.Posting
	for page := 1; ; page++ {
		res, err := s.Transactions.List(ctx, ports.TransactionFilter{AccountID: account}, ports.Page{Number: page, Size: 100})
		if err != nil {
			t.Fatalf("List: %v", err)
		}
		for _, tx := range res.Items {
			implied = append(implied, domain.ImpliedTransactionPostings(tx.Record())...)
		}
		if len(res.Items) < 100 {
			break
		}
	}
	for page := 1; ; page++ {
		ws, err := s.Withdrawals.ListByAccount(ctx, account, ports.Page{Number: page, Size: 100})
		if err != nil {
			t.Fatalf("ListByAccount: %v", err)
		}
		for _, w := range ws {
			implied = append(implied, domain.ImpliedWithdrawalPostings(w.Record())...)
		}
		if len(ws) < 100 {
			break
		}
	}
	for _, p := range implied {
		e, ok := stored[p.ID]
		if !ok {
			t.Errorf("entry %s (%s of %d) is missing", p.ID, p.Type, p.Amount)
			continue
		}
		if same, why := domain.SamePosting(e.Posting, p); !same {
			t.Errorf("entry %s: %s", p.ID, why)
		}
		delete(stored, p.ID)
	}
	for id, e := range stored {
		void, isVoid := stored[domain.VoidPostingID(id)]
		if isVoid && void.Amount == e.Amount {
			delete(stored, id) // a reservation the store gave back: allowed, in pairs
			delete(stored, void.ID)
		}
	}
	for id, e := range stored {
		if e.Type != domain.MoveOpeningBalance {
			t.Errorf("entry %s (%s of %d) has no status change behind it", id, e.Type, e.Amount)
		}
	}
}

// randomWalk drives steps random operations through the store, over a few accounts, and then
// checks every ledger against the histories, and that all ledger accounts, the merchants' and
// the service's, sum to zero.
func randomWalk(t *testing.T, s Stores, steps int) {
	t.Helper()
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 7))
	accounts := []string{domain.NewID(), domain.NewID(), domain.NewID()}
	type ref struct{ account, id string }
	var txs, wds []ref
	now := epoch
	txMoves, wdMoves := walkMoves(rng)
	expected := func(err error) bool {
		return err == nil || errors.Is(err, domain.ErrInvalidTransition) || errors.Is(err, domain.ErrNotExpired) ||
			errors.Is(err, domain.ErrInsufficientBalance) || errors.As(err, new(*domain.RefundAmountError))
	}
	var late []domain.Posting
	for step := range steps {
		now = now.Add(time.Second)
		account := accounts[rng.IntN(len(accounts))]
		switch op := rng.IntN(20); {
		case op < 5 || len(txs) == 0:
			tx := buildTransaction(t, txSpec{account: account, amount: domain.Cents(100 + rng.IntN(5000)), status: domain.TxPending, createdAt: now})
			mustCreateTransaction(t, s, tx)
			txs = append(txs, ref{account, tx.ID()})
		case op < 14:
			r := txs[rng.IntN(len(txs))]
			move := txMoves[rng.IntN(len(txMoves))]
			_, err := s.Transactions.Update(ctx, r.account, r.id, func(t *domain.Transaction) error { return move(t, now) })
			if !expected(err) {
				t.Fatalf("step %d: %v", step, err)
			}
		case op < 16:
			w := buildWithdrawal(t, wdSpec{account: account, amount: domain.Cents(1 + rng.IntN(3000)), fee: domain.Cents(rng.IntN(3)), createdAt: now})
			if err := s.Withdrawals.Create(ctx, w); err == nil {
				wds = append(wds, ref{account, w.ID()})
			} else if !expected(err) {
				t.Fatalf("step %d: %v", step, err)
			}
		case op < 19:
			if len(wds) == 0 {
				continue
			}
			r := wds[rng.IntN(len(wds))]
			move := wdMoves[rng.IntN(len(wdMoves))]
			_, err := s.Withdrawals.Update(ctx, r.account, r.id, func(w *domain.Withdrawal) error { return move(w, now) })
			if !expected(err) {
				t.Fatalf("step %d: %v", step, err)
			}
		default:
			r := txs[rng.IntN(len(txs))]
			arrive, leave := domain.LatePaymentPostings(fmt.Sprintf("E%031d", step), r.id, domain.Cents(1+rng.IntN(900)))
			late = append(late, arrive)
			if _, err := s.Ledger.Post(ctx, arrive); err != nil {
				t.Fatalf("step %d: Post: %v", step, err)
			}
			if rng.IntN(2) == 0 {
				late = append(late, leave)
				if _, err := s.Ledger.Post(ctx, leave); err != nil {
					t.Fatalf("step %d: Post: %v", step, err)
				}
			}
		}
	}

	assertLedgersBalance(t, s, accounts, late)
}

// walkMoves are the transitions randomWalk tries, each on whatever status it finds: every
// trigger of both state tables, with random amounts where the trigger takes one.
func walkMoves(rng *rand.Rand) (txMoves []func(*domain.Transaction, time.Time) error, wdMoves []func(*domain.Withdrawal, time.Time) error) {
	refunds := 0
	txMoves = []func(*domain.Transaction, time.Time) error{
		func(t *domain.Transaction, at time.Time) error {
			return t.AttachPix(domain.PixResponse{URI: "x", ExpiresAt: at.Add(time.Hour)}, at)
		},
		func(t *domain.Transaction, at time.Time) error { return t.FailEmission("no", at) },
		func(t *domain.Transaction, at time.Time) error {
			paid := t.Amount() - domain.Cents(rng.IntN(2))
			return t.Pay(domain.Payment{AmountPaid: paid, Fee: paid / 100, PaidAt: at}, at)
		},
		func(t *domain.Transaction, at time.Time) error { return t.Expire(at.Add(2 * time.Hour)) },
		func(t *domain.Transaction, at time.Time) error {
			refunds++
			amount := domain.Cents(0) // everything left
			if left := t.Refundable(); left > 1 && rng.IntN(2) == 0 {
				amount = 1 + domain.Cents(rng.IntN(int(left-1)))
			}
			return t.RequestRefund(domain.RefundRequest{ID: fmt.Sprintf("R%d", refunds), Amount: amount}, at)
		},
		func(t *domain.Transaction, at time.Time) error {
			r, _ := t.RefundInProgress()
			return t.ConfirmRefund(r.ID, "D", at)
		},
		func(t *domain.Transaction, at time.Time) error {
			r, _ := t.RefundInProgress()
			return t.FailRefund(r.ID, "no", at)
		},
		func(t *domain.Transaction, at time.Time) error { return t.OpenDispute(at) },
		func(t *domain.Transaction, at time.Time) error { return t.RejectDispute(at) },
		func(t *domain.Transaction, at time.Time) error { return t.AcceptDispute(at) },
		func(t *domain.Transaction, at time.Time) error { return t.CompleteInfraction("D", at) },
	}
	wdMoves = []func(*domain.Withdrawal, time.Time) error{
		func(w *domain.Withdrawal, at time.Time) error { return w.StartProcessing(at) },
		func(w *domain.Withdrawal, at time.Time) error { return w.Cancel(at) },
		func(w *domain.Withdrawal, at time.Time) error { return w.Complete("E", at) },
		func(w *domain.Withdrawal, at time.Time) error { return w.Fail("no", at) },
		func(w *domain.Withdrawal, at time.Time) error { return w.Reject("no", at) },
		func(w *domain.Withdrawal, at time.Time) error { return w.Refund(at) },
	}
	return txMoves, wdMoves
}

// assertLedgersBalance checks the ledgers of accounts and the service's after a walk: each
// merchant's matches its histories, every ledger account sums to zero over all of them, and
// suspense holds what the late payments left.
func assertLedgersBalance(t *testing.T, s Stores, accounts []string, late []domain.Posting) {
	t.Helper()
	ctx := context.Background()
	// Every ledger account, the merchants' and the service's, summed over every entry.
	sums := map[domain.LedgerAccount]domain.Cents{}
	for _, account := range append([]string{""}, accounts...) {
		if account != "" {
			AssertLedgerMatchesHistories(t, s, account)
		}
		err := s.Ledger.Scan(ctx, account, func(e domain.Entry) error {
			sums[e.Debit] -= e.Amount
			sums[e.Credit] += e.Amount
			return nil
		})
		if err != nil {
			t.Fatalf("Scan: %v", err)
		}
	}
	var total domain.Cents
	for _, v := range sums {
		total += v
	}
	if total != 0 {
		t.Errorf("the ledger accounts sum to %d, want 0: %v", total, sums)
	}
	var suspense domain.Cents
	for _, p := range late {
		suspense += p.Delta().Available // zero: the service's postings touch no merchant
		if p.Credit == domain.LedgerSuspense {
			suspense += p.Amount
		} else {
			suspense -= p.Amount
		}
	}
	if sums[domain.LedgerSuspense] != suspense {
		t.Errorf("suspense holds %d, the late payments left %d", sums[domain.LedgerSuspense], suspense)
	}
}
