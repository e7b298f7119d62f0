package storetest

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pixgate/pixgate/domain"
	"github.com/pixgate/pixgate/ports"
)

// errRefused is what the suite's update functions return to make an update fail.
var errRefused = errors.New("refused by the test")

// TestTransactions states the behaviour every ports.TransactionRepository must have, with the
// outbox of the same store. newStore returns an empty store for each subtest (see Stores).
func TestTransactions(t *testing.T, newStore func(t *testing.T) Stores) {
	t.Helper()
	runStoreTests(t, newStore, []storeTest{
		{"a created transaction reads back exactly as it was stored", txCreatedTransactionReadsBackExactly},
		{"create records version 1 on the transaction and clears the events it stored", txCreateRecordsVersion1Transaction},
		{"an unknown transaction is not found", txUnknownTransactionNotFound},
		{"another account's transaction is not found, not changed and not listed", txAnotherAccountTransactionNotFound},
		{"a second transaction with an existing id is a duplicate, even in another account", txSecondTransactionExistingIdDuplicate},
		{"a second transaction with an idempotency key the account used is a duplicate", txSecondTransactionIdempotencyKeyAccount},
		{"two accounts may use the same idempotency key", txTwoAccountsMayUseSame},
		{"transactions without an idempotency key never collide", txTransactionsWithoutIdempotencyKeyNever},
		{"concurrent creations with one idempotency key store exactly one", txConcurrentCreationsIdempotencyKeyStore},
		{"an update stores what fn did, returns it, and adds one to the version", txUpdateStoresFnDidReturns},
		{"a new transaction's events are stored with it as pending deliveries due at once", txNewTransactionEventsStoredPending},
		{"an update stores exactly the events it raised with the status change", txUpdateStoresExactlyEventsRaised},
		{"a transaction without a webhook URL has no deliveries", txTransactionWithoutWebhookURLNo},
		{"a failed update returns fn's error and leaves nothing behind", txFailedUpdateReturnsFnError},
		{"a transition the domain refuses is returned as it is and stores nothing", txTransitionDomainRefusesReturnedStores},
		{"of concurrent payments of one transaction exactly one wins", txConcurrentPaymentsTransactionExactlyWins},
		{"transactions handed in and out are never shared with the store", txTransactionsHandedOutNeverShared},
		{"find returns a transaction whatever its account", txFindReturnsTransactionWhateverAccount},
		{"find by payment token returns the transaction whatever its account, as it is now", txFindPaymentTokenReturnsTransaction},
		{"an unknown, empty or id-shaped payment token is not found", txUnknownEmptyIdShapedPayment},
		{"a second transaction with an existing payment token is a duplicate, even in another account", txSecondTransactionExistingPaymentToken},
		{"a list is ordered by createdAt descending, then id descending", txListOrderedCreatedAtDescendingThen},
		{"a list pages through the matches and counts them all, past the end too", txListPagesThroughMatchesCounts},
		{"a list reads a page number or size below 1 as 1, and a page far past the end as empty", txListReadsPageNumberSize},
		{"a list of an account without transactions is empty", txListAccountWithoutTransactionsEmpty},
		{"a list filters on what updates changed: the status and the end-to-end ids", txListFiltersUpdatesChangedStatus},
		{"each filter field selects its transactions", txFilterFieldSelectsTransactions},
		{"listExpired lists transactions awaiting payment whose QR code expired at or before now", txListExpiredListsTransactionsAwaitingPayment},
		{"listByStatus lists transactions that entered the status at or before until, oldest first", txListByStatusListsTransactionsEnteredStatus},
		{"a refund's devolution reads back as stored, listed while due, the earliest first, never once the refund is done", txDevolutionDispatchReadsBackAndListsDue},
		{"of concurrent claims of one refund's devolution exactly one wins", txConcurrentClaimsOneDevolutionOneWins},
	})
}

func txCreatedTransactionReadsBackExactly(t *testing.T, newStore func(t *testing.T) Stores) {
	t.Parallel()
	s, ctx := newStore(t), context.Background()
	tx := richTransaction(t, domain.NewID())
	want := buildTransactionLike(t, tx)
	mustCreateTransaction(t, s, tx)

	got, err := s.Transactions.Get(ctx, tx.AccountID(), tx.ID())
	if err != nil {
		t.Fatalf("Get: %v", err)
	}
	assertSameTransaction(t, got, want)
	if got, err = s.Transactions.GetByIdempotencyKey(ctx, tx.AccountID(), tx.Idempotency().Key); err != nil {
		t.Fatalf("GetByIdempotencyKey: %v", err)
	}
	assertSameTransaction(t, got, want)
	if got, err = s.Transactions.Find(ctx, tx.ID()); err != nil {
		t.Fatalf("Find: %v", err)
	}
	assertSameTransaction(t, got, want)
	page, err := s.Transactions.List(ctx, ports.TransactionFilter{AccountID: tx.AccountID()}, ports.Page{Number: 1, Size: 20})
	if err != nil || len(page.Items) != 1 {
		t.Fatalf("List = %d items, %v; want 1", len(page.Items), err)
	}
	assertSameTransaction(t, page.Items[0], want)
}

func txCreateRecordsVersion1Transaction(t *testing.T, newStore func(t *testing.T) Stores) {
	t.Parallel()
	s, ctx := newStore(t), context.Background()
	tx := buildTransaction(t, txSpec{account: domain.NewID(), webhook: "https://shop.example.com/hooks"})
	mustCreateTransaction(t, s, tx)
	if tx.Version() != 1 || len(tx.Events()) != 0 {
		t.Errorf("after Create: version %d, %d events; want 1, 0", tx.Version(), len(tx.Events()))
	}
	got, err := s.Transactions.Get(ctx, tx.AccountID(), tx.ID())
	if err != nil || got.Version() != 1 {
		t.Errorf("Get = version %v, %v; want 1", versionOf(got), err)
	}
}

func txUnknownTransactionNotFound(t *testing.T, newStore func(t *testing.T) Stores) {
	t.Parallel()
	s, ctx := newStore(t), context.Background()
	account := domain.NewID()
	createTransaction(t, s, txSpec{account: account, idemKey: "known"})
	id := domain.NewID()
	if _, err := s.Transactions.Get(ctx, account, id); !errors.Is(err, domain.ErrNotFound) {
		t.Errorf("Get: %v, want ErrNotFound", err)
	}
	if _, err := s.Transactions.GetByIdempotencyKey(ctx, account, "unknown"); !errors.Is(err, domain.ErrNotFound) {
		t.Errorf("GetByIdempotencyKey: %v, want ErrNotFound", err)
	}
	if _, err := s.Transactions.Find(ctx, id); !errors.Is(err, domain.ErrNotFound) {
		t.Errorf("Find: %v, want ErrNotFound", err)
	}
	called := false
	_, err := s.Transactions.Update(ctx, account, id, func(*domain.Transaction) error { called = true; return nil })
	if !errors.Is(err, domain.ErrNotFound) || called {
		t.Errorf("Update: %v (fn called: %v), want ErrNotFound without calling fn", err, called)
	}
}

func txAnotherAccountTransactionNotFound(t *testing.T, newStore func(t *testing.T) Stores) {
	t.Parallel()
	s, ctx := newStore(t), context.Background()
	owner, other := domain.NewID(), domain.NewID()
	tx := createTransaction(t, s, txSpec{account: owner, idemKey: "order-1"})
	createTransaction(t, s, txSpec{account: other})

	if _, err := s.Transactions.Get(ctx, other, tx.ID()); !errors.Is(err, domain.ErrNotFound) {
		t.Errorf("Get: %v, want ErrNotFound", err)
	}
	if _, err := s.Transactions.GetByIdempotencyKey(ctx, other, "order-1"); !errors.Is(err, domain.ErrNotFound) {
		t.Errorf("GetByIdempotencyKey: %v, want ErrNotFound", err)
	}
	called := false
	_, err := s.Transactions.Update(ctx, other, tx.ID(), func(t *domain.Transaction) error {
		called = true
		return t.Pay(domain.Payment{AmountPaid: 1000, PaidAt: minutes(1)}, minutes(1))
	})
	if !errors.Is(err, domain.ErrNotFound) || called {
		t.Errorf("Update: %v (fn called: %v), want ErrNotFound without calling fn", err, called)
	}
	if got, err := s.Transactions.Get(ctx, owner, tx.ID()); err != nil || got.Status() != domain.TxPixQRCodeGenerated || got.Version() != 1 {
		t.Errorf("the owner's transaction = %s v%v, %v; want it untouched", statusOf(got), versionOf(got), err)
	}
	for _, f := range []ports.TransactionFilter{{AccountID: other}, {AccountID: other, ID: tx.ID()}} {
		page, err := s.Transactions.List(ctx, f, ports.Page{Number: 1, Size: 20})
		if err != nil || slices.Contains(transactionIDs(page.Items), tx.ID()) {
			t.Errorf("List(%+v) = %v, %v; want the owner's transaction left out", f, transactionIDs(page.Items), err)
		}
	}
}

func txSecondTransactionExistingIdDuplicate(t *testing.T, newStore func(t *testing.T) Stores) {
	t.Parallel()
	s, ctx := newStore(t), context.Background()
	first := createTransaction(t, s, txSpec{account: domain.NewID(), amount: 1000})
	for _, account := range []string{first.AccountID(), domain.NewID()} {
		again := buildTransaction(t, txSpec{account: account, id: first.ID(), amount: 2000})
		if err := s.Transactions.Create(ctx, again); !errors.Is(err, ports.ErrDuplicate) {
			t.Errorf("Create in account %s: %v, want ErrDuplicate", account, err)
		}
		if _, err := s.Transactions.Get(ctx, domain.NewID(), first.ID()); !errors.Is(err, domain.ErrNotFound) {
			t.Errorf("Get from a third account: %v, want ErrNotFound", err)
		}
	}
	got, err := s.Transactions.Find(ctx, first.ID())
	if err != nil || got.AccountID() != first.AccountID() || got.Amount() != 1000 {
		t.Errorf("Find = %v, %v; want the first transaction unchanged", got, err)
	}
}

func txSecondTransactionIdempotencyKeyAccount(t *testing.T, newStore func(t *testing.T) Stores) {
	t.Parallel()
	s, ctx := newStore(t), context.Background()
	first := createTransaction(t, s, txSpec{account: domain.NewID(), idemKey: "order-7", amount: 1000})
	again := buildTransaction(t, txSpec{account: first.AccountID(), idemKey: "order-7", amount: 2000})
	if err := s.Transactions.Create(ctx, again); !errors.Is(err, ports.ErrDuplicate) {
		t.Fatalf("Create: %v, want ErrDuplicate", err)
	}
	got, err := s.Transactions.GetByIdempotencyKey(ctx, first.AccountID(), "order-7")
	if err != nil || got.ID() != first.ID() {
		t.Errorf("GetByIdempotencyKey = %v, %v; want the first transaction", got, err)
	}
	if _, err := s.Transactions.Find(ctx, again.ID()); !errors.Is(err, domain.ErrNotFound) {
		t.Errorf("Find(the refused one): %v, want ErrNotFound", err)
	}
}

func txTwoAccountsMayUseSame(t *testing.T, newStore func(t *testing.T) Stores) {
	t.Parallel()
	s, ctx := newStore(t), context.Background()
	a := createTransaction(t, s, txSpec{account: domain.NewID(), idemKey: "shared"})
	b := createTransaction(t, s, txSpec{account: domain.NewID(), idemKey: "shared"})
	for _, tx := range []*domain.Transaction{a, b} {
		got, err := s.Transactions.GetByIdempotencyKey(ctx, tx.AccountID(), "shared")
		if err != nil || got.ID() != tx.ID() {
			t.Errorf("GetByIdempotencyKey(%s) = %v, %v; want %s", tx.AccountID(), got, err, tx.ID())
		}
	}
}

func txTransactionsWithoutIdempotencyKeyNever(t *testing.T, newStore func(t *testing.T) Stores) {
	t.Parallel()
	s, ctx := newStore(t), context.Background()
	account := domain.NewID()
	createTransaction(t, s, txSpec{account: account})
	createTransaction(t, s, txSpec{account: account})
	if _, err := s.Transactions.GetByIdempotencyKey(ctx, account, ""); !errors.Is(err, domain.ErrNotFound) {
		t.Errorf("GetByIdempotencyKey(empty): %v, want ErrNotFound", err)
	}
}

func txConcurrentCreationsIdempotencyKeyStore(t *testing.T, newStore func(t *testing.T) Stores) {
	t.Parallel()
	s, ctx := newStore(t), context.Background()
	account := domain.NewID()
	txs := make([]*domain.Transaction, 10)
	for i := range txs {
		txs[i] = buildTransaction(t, txSpec{account: account, idemKey: "burst"})
	}
	errs := concurrently(len(txs), func(i int) error { return s.Transactions.Create(ctx, txs[i]) })
	winner := ""
	for i, err := range errs {
		switch {
		case err == nil && winner == "":
			winner = txs[i].ID()
		case err == nil:
			t.Errorf("two creations won: %s and %s", winner, txs[i].ID())
		case !errors.Is(err, ports.ErrDuplicate):
			t.Errorf("Create: %v, want nil or ErrDuplicate", err)
		}
	}
	got, err := s.Transactions.GetByIdempotencyKey(ctx, account, "burst")
	if err != nil || got.ID() != winner {
		t.Errorf("GetByIdempotencyKey = %v, %v; want the winner %s", got, err, winner)
	}
	page, err := s.Transactions.List(ctx, ports.TransactionFilter{AccountID: account}, ports.Page{Number: 1, Size: 20})
	if err != nil || page.Total != 1 {
		t.Errorf("List total = %d, %v; want 1", page.Total, err)
	}
}

func txUpdateStoresFnDidReturns(t *testing.T, newStore func(t *testing.T) Stores) {
	t.Parallel()
	s, ctx := newStore(t), context.Background()
	tx := createTransaction(t, s, txSpec{account: domain.NewID(), amount: 5000})
	want := buildTransactionLike(t, tx)
	pay := domain.Payment{AmountPaid: 5000, PaidAt: minutes(3), EndToEnd: "E00000000202603021203000000001", Fee: 50,
		Payer: &domain.AccountHolder{Type: domain.HolderPF, Name: "Pagador", Document: cpf(7)}}
	if err := want.Pay(pay, minutes(3)); err != nil {
		t.Fatal(err)
	}
	updated, err := s.Transactions.Update(ctx, tx.AccountID(), tx.ID(), func(t *domain.Transaction) error {
		return t.Pay(pay, minutes(3))
	})
	if err != nil {
		t.Fatalf("Update: %v", err)
	}
	assertSameTransaction(t, updated, want)
	if updated.Version() != 2 {
		t.Errorf("Update returned version %d, want 2", updated.Version())
	}
	got, err := s.Transactions.Get(ctx, tx.AccountID(), tx.ID())
	if err != nil {
		t.Fatalf("Get: %v", err)
	}
	assertSameTransaction(t, got, want)
	if got.Version() != 2 {
		t.Errorf("stored version %d, want 2", got.Version())
	}
	updated, err = s.Transactions.Update(ctx, tx.AccountID(), tx.ID(), func(t *domain.Transaction) error {
		return t.RequestRefund(domain.RefundRequest{ID: "R1", Amount: 100}, minutes(4))
	})
	if err != nil || updated.Version() != 3 || updated.Status() != domain.TxProcessingRefund {
		t.Errorf("second Update = %s v%v, %v; want PROCESSING_REFUND v3", statusOf(updated), versionOf(updated), err)
	}
}

func txNewTransactionEventsStoredPending(t *testing.T, newStore func(t *testing.T) Stores) {
	t.Parallel()
	s, ctx := newStore(t), context.Background()
	tx := buildTransaction(t, txSpec{account: domain.NewID(), webhook: "https://shop.example.com/hooks"})
	raised := tx.Events()
	if len(raised) != 1 {
		t.Fatalf("fixture raised %d events, want 1", len(raised))
	}
	mustCreateTransaction(t, s, tx)
	ds, err := s.Outbox.Deliveries(ctx, tx.AccountID(), domain.ResourceTransaction, tx.ID())
	if err != nil || len(ds) != 1 {
		t.Fatalf("Deliveries = %v, %v; want 1", eventTypes(ds), err)
	}
	assertDeliveryOf(t, ds[0], raised[0])
	if ds[0].Status != ports.DeliveryPending || len(ds[0].Attempts) != 0 || !ds[0].NextAttemptAt.Equal(raised[0].CreatedAt) {
		t.Errorf("delivery = %s, %d attempts, next %v; want pending, none, %v",
			ds[0].Status, len(ds[0].Attempts), ds[0].NextAttemptAt, raised[0].CreatedAt)
	}
}

func txUpdateStoresExactlyEventsRaised(t *testing.T, newStore func(t *testing.T) Stores) {
	t.Parallel()
	s, ctx := newStore(t), context.Background()
	tx := createTransaction(t, s, txSpec{account: domain.NewID(), webhook: "https://shop.example.com/hooks"})
	var raised []domain.Event
	_, err := s.Transactions.Update(ctx, tx.AccountID(), tx.ID(), func(t *domain.Transaction) error {
		err := t.Pay(domain.Payment{AmountPaid: 1000, PaidAt: minutes(2), EndToEnd: "E1"}, minutes(2))
		raised = t.Events()
		return err
	})
	if err != nil || len(raised) != 1 {
		t.Fatalf("Update: %v, raised %d events; want nil, 1", err, len(raised))
	}
	ds, err := s.Outbox.Deliveries(ctx, tx.AccountID(), domain.ResourceTransaction, tx.ID())
	if err != nil {
		t.Fatalf("Deliveries: %v", err)
	}
	if want := []string{"transaction.pix_qrcode_generated", "transaction.paid"}; !slices.Equal(eventTypes(ds), want) {
		t.Fatalf("Deliveries = %v, want %v", eventTypes(ds), want)
	}
	assertDeliveryOf(t, ds[1], raised[0])
	if snap := ds[1].Event.Transaction; snap.AmountPaid() == nil || *snap.AmountPaid() != 1000 {
		t.Errorf("the paid event's snapshot has amountPaid %v, want 1000", snap.AmountPaid())
	}
	if snap := ds[0].Event.Transaction; snap.Status() != domain.TxPixQRCodeGenerated {
		t.Errorf("the first event's snapshot is %s, want it as it was: PIX_QRCODE_GENERATED", snap.Status())
	}
}

func txTransactionWithoutWebhookURLNo(t *testing.T, newStore func(t *testing.T) Stores) {
	t.Parallel()
	s, ctx := newStore(t), context.Background()
	tx := createTransaction(t, s, txSpec{account: domain.NewID(), status: domain.TxPaid})
	ds, err := s.Outbox.Deliveries(ctx, tx.AccountID(), domain.ResourceTransaction, tx.ID())
	if err != nil || len(ds) != 0 {
		t.Errorf("Deliveries = %v, %v; want none", eventTypes(ds), err)
	}
}

func txFailedUpdateReturnsFnError(t *testing.T, newStore func(t *testing.T) Stores) {
	t.Parallel()
	s, ctx := newStore(t), context.Background()
	tx := createTransaction(t, s, txSpec{account: domain.NewID(), webhook: "https://shop.example.com/hooks"})
	before, _ := s.Transactions.Get(ctx, tx.AccountID(), tx.ID())
	_, err := s.Transactions.Update(ctx, tx.AccountID(), tx.ID(), func(t *domain.Transaction) error {
		if err := t.Pay(domain.Payment{AmountPaid: 1000, PaidAt: minutes(2)}, minutes(2)); err != nil {
			return err
		}
		return errRefused
	})
	if !errors.Is(err, errRefused) {
		t.Fatalf("Update: %v, want the error fn returned", err)
	}
	assertTransactionUnchanged(t, s, before, 1)
}

func txTransitionDomainRefusesReturnedStores(t *testing.T, newStore func(t *testing.T) Stores) {
	t.Parallel()
	s, ctx := newStore(t), context.Background()
	tx := createTransaction(t, s, txSpec{account: domain.NewID(), webhook: "https://shop.example.com/hooks"})
	before, _ := s.Transactions.Get(ctx, tx.AccountID(), tx.ID())
	_, err := s.Transactions.Update(ctx, tx.AccountID(), tx.ID(), func(t *domain.Transaction) error {
		return t.ConfirmRefund("R1", "D1", minutes(2))
	})
	var invalid *domain.InvalidTransitionError
	if !errors.Is(err, domain.ErrInvalidTransition) || !errors.As(err, &invalid) || invalid.From != string(domain.TxPixQRCodeGenerated) {
		t.Fatalf("Update: %v, want the domain's invalid transition from PIX_QRCODE_GENERATED", err)
	}
	assertTransactionUnchanged(t, s, before, 1)
}

func txConcurrentPaymentsTransactionExactlyWins(t *testing.T, newStore func(t *testing.T) Stores) {
	t.Parallel()
	s, ctx := newStore(t), context.Background()
	tx := createTransaction(t, s, txSpec{account: domain.NewID(), webhook: "https://shop.example.com/hooks"})
	const n = 20
	errs := concurrently(n, func(i int) error {
		_, err := s.Transactions.Update(ctx, tx.AccountID(), tx.ID(), func(t *domain.Transaction) error {
			return t.Pay(domain.Payment{AmountPaid: domain.Cents(1000 + i), PaidAt: minutes(2), EndToEnd: "E" + strings.Repeat("0", i)}, minutes(2))
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
		t.Fatalf("%d payments won, want exactly 1", wins)
	}
	got, err := s.Transactions.Get(ctx, tx.AccountID(), tx.ID())
	if err != nil || got.Status() != domain.TxPaid || got.Version() != 2 || len(got.History()) != 3 {
		t.Errorf("stored = %s v%v, %v; want PAID v2 with 3 history entries", statusOf(got), versionOf(got), err)
	}
	ds, err := s.Outbox.Deliveries(ctx, tx.AccountID(), domain.ResourceTransaction, tx.ID())
	if want := []string{"transaction.pix_qrcode_generated", "transaction.paid"}; err != nil || !slices.Equal(eventTypes(ds), want) {
		t.Errorf("Deliveries = %v, %v; want %v", eventTypes(ds), err, want)
	}
}

func txTransactionsHandedOutNeverShared(t *testing.T, newStore func(t *testing.T) Stores) {
	t.Parallel()
	s, ctx := newStore(t), context.Background()
	tx := richTransaction(t, domain.NewID())
	want := buildTransactionLike(t, tx)
	mustCreateTransaction(t, s, tx)
	scribble(tx)
	got, err := s.Transactions.Get(ctx, tx.AccountID(), tx.ID())
	if err != nil {
		t.Fatalf("Get: %v", err)
	}
	scribble(got)
	updated, err := s.Transactions.Update(ctx, tx.AccountID(), tx.ID(), func(t *domain.Transaction) error { return nil })
	if err != nil {
		t.Fatalf("Update: %v", err)
	}
	scribble(updated)
	if got, err = s.Transactions.Get(ctx, tx.AccountID(), tx.ID()); err != nil {
		t.Fatalf("Get: %v", err)
	}
	assertSameTransaction(t, got, want)
}

func txFindReturnsTransactionWhateverAccount(t *testing.T, newStore func(t *testing.T) Stores) {
	t.Parallel()
	s, ctx := newStore(t), context.Background()
	a := createTransaction(t, s, txSpec{account: domain.NewID()})
	b := createTransaction(t, s, txSpec{account: domain.NewID()})
	for _, tx := range []*domain.Transaction{a, b} {
		got, err := s.Transactions.Find(ctx, tx.ID())
		if err != nil || got.AccountID() != tx.AccountID() {
			t.Errorf("Find(%s) = %v, %v; want account %s", tx.ID(), got, err, tx.AccountID())
		}
	}
}

func txFindPaymentTokenReturnsTransaction(t *testing.T, newStore func(t *testing.T) Stores) {
	t.Parallel()
	s, ctx := newStore(t), context.Background()
	a := createTransaction(t, s, txSpec{account: domain.NewID()})
	b := createTransaction(t, s, txSpec{account: domain.NewID()})
	if _, err := s.Transactions.Update(ctx, b.AccountID(), b.ID(), func(tx *domain.Transaction) error {
		return tx.Pay(domain.Payment{AmountPaid: 1000, PaidAt: minutes(1), EndToEnd: "E" + strings.ReplaceAll(b.ID(), "-", "")[:31]}, minutes(1))
	}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		tx     *domain.Transaction
		status domain.TransactionStatus
	}{{a, domain.TxPixQRCodeGenerated}, {b, domain.TxPaid}} {
		got, err := s.Transactions.FindByPaymentToken(ctx, c.tx.PaymentToken())
		if err != nil || got.ID() != c.tx.ID() || got.AccountID() != c.tx.AccountID() || got.Status() != c.status {
			t.Errorf("FindByPaymentToken(%s's token) = %v, %v; want it in %s", c.tx.ID(), got, err, c.status)
			continue
		}
		if got.PaymentToken() != c.tx.PaymentToken() {
			t.Errorf("token read back %q, want %q", got.PaymentToken(), c.tx.PaymentToken())
		}
	}
}

func txUnknownEmptyIdShapedPayment(t *testing.T, newStore func(t *testing.T) Stores) {
	t.Parallel()
	s, ctx := newStore(t), context.Background()
	tx := createTransaction(t, s, txSpec{account: domain.NewID()})
	for _, token := range []string{newPaymentToken(), "", tx.ID(), tx.PaymentToken()[:len(tx.PaymentToken())-1]} {
		if got, err := s.Transactions.FindByPaymentToken(ctx, token); !errors.Is(err, domain.ErrNotFound) {
			t.Errorf("FindByPaymentToken(%q) = %v, %v; want ErrNotFound", token, got, err)
		}
	}
}

func txSecondTransactionExistingPaymentToken(t *testing.T, newStore func(t *testing.T) Stores) {
	t.Parallel()
	s, ctx := newStore(t), context.Background()
	first := createTransaction(t, s, txSpec{account: domain.NewID()})
	for _, account := range []string{first.AccountID(), domain.NewID()} {
		again := buildTransaction(t, txSpec{account: account, payToken: first.PaymentToken()})
		if err := s.Transactions.Create(ctx, again); !errors.Is(err, ports.ErrDuplicate) {
			t.Errorf("Create in account %s: %v, want ErrDuplicate", account, err)
		}
	}
	got, err := s.Transactions.FindByPaymentToken(ctx, first.PaymentToken())
	if err != nil || got.ID() != first.ID() {
		t.Errorf("FindByPaymentToken = %v, %v; want the first transaction", got, err)
	}
}

func txListOrderedCreatedAtDescendingThen(t *testing.T, newStore func(t *testing.T) Stores) {
	t.Parallel()
	s, ctx := newStore(t), context.Background()
	account := domain.NewID()
	var txs []*domain.Transaction
	for _, m := range []int{5, 0, 5, 2, 5, 9, 1} { // stored out of order, three at one instant
		txs = append(txs, createTransaction(t, s, txSpec{account: account, createdAt: minutes(m)}))
	}
	page, err := s.Transactions.List(ctx, ports.TransactionFilter{AccountID: account}, ports.Page{Number: 1, Size: 20})
	if err != nil {
		t.Fatalf("List: %v", err)
	}
	if want := listOrder(txs); !slices.Equal(transactionIDs(page.Items), want) || page.Total != len(txs) {
		t.Errorf("List = %v (total %d), want %v (total %d)", transactionIDs(page.Items), page.Total, want, len(txs))
	}
}

func txListPagesThroughMatchesCounts(t *testing.T, newStore func(t *testing.T) Stores) {
	t.Parallel()
	s, ctx := newStore(t), context.Background()
	account := domain.NewID()
	var txs []*domain.Transaction
	for i := range 7 {
		txs = append(txs, createTransaction(t, s, txSpec{account: account, createdAt: minutes(i)}))
	}
	all := listOrder(txs)
	for _, c := range []struct {
		page int
		want []string
	}{{1, all[0:3]}, {2, all[3:6]}, {3, all[6:7]}, {4, nil}, {1000, nil}} {
		got, err := s.Transactions.List(ctx, ports.TransactionFilter{AccountID: account}, ports.Page{Number: c.page, Size: 3})
		if err != nil || !slices.Equal(transactionIDs(got.Items), c.want) || got.Total != 7 {
			t.Errorf("page %d = %v (total %d), %v; want %v (total 7)", c.page, transactionIDs(got.Items), got.Total, err, c.want)
		}
	}
}

func txListReadsPageNumberSize(t *testing.T, newStore func(t *testing.T) Stores) {
	t.Parallel()
	s, ctx := newStore(t), context.Background()
	account := domain.NewID()
	var txs []*domain.Transaction
	for i := range 3 {
		txs = append(txs, createTransaction(t, s, txSpec{account: account, createdAt: minutes(i)}))
	}
	all := listOrder(txs)
	for _, c := range []struct {
		page ports.Page
		want []string
	}{
		{ports.Page{Number: 0, Size: 2}, all[0:2]},
		{ports.Page{Number: -1, Size: 2}, all[0:2]},
		{ports.Page{Number: 2, Size: 0}, all[1:2]},
		{ports.Page{Number: -1, Size: -1}, all[0:1]},
		{ports.Page{Number: 1 << 62, Size: 100}, nil},
	} {
		for _, f := range []ports.TransactionFilter{{AccountID: account}, {AccountID: account, MinAmount: new(domain.Cents)}} {
			got, err := s.Transactions.List(ctx, f, c.page)
			if err != nil || !slices.Equal(transactionIDs(got.Items), c.want) || got.Total != 3 {
				t.Errorf("List(%+v, page %+v) = %v (total %d), %v; want %v (total 3)", f, c.page, transactionIDs(got.Items), got.Total, err, c.want)
			}
		}
	}
}

func txListAccountWithoutTransactionsEmpty(t *testing.T, newStore func(t *testing.T) Stores) {
	t.Parallel()
	s, ctx := newStore(t), context.Background()
	createTransaction(t, s, txSpec{account: domain.NewID()})
	page, err := s.Transactions.List(ctx, ports.TransactionFilter{AccountID: domain.NewID()}, ports.Page{Number: 1, Size: 20})
	if err != nil || len(page.Items) != 0 || page.Total != 0 {
		t.Errorf("List = %v (total %d), %v; want nothing", transactionIDs(page.Items), page.Total, err)
	}
}

func txListFiltersUpdatesChangedStatus(t *testing.T, newStore func(t *testing.T) Stores) {
	t.Parallel()
	s, ctx := newStore(t), context.Background()
	account := domain.NewID()
	tx := createTransaction(t, s, txSpec{account: account})
	createTransaction(t, s, txSpec{account: account, status: domain.TxPaid, createdAt: minutes(1)})
	for i, step := range []func(*domain.Transaction) error{
		func(t *domain.Transaction) error {
			return t.Pay(domain.Payment{AmountPaid: 1000, PaidAt: minutes(2), EndToEnd: "E-updated"}, minutes(2))
		},
		func(t *domain.Transaction) error { return t.RequestRefund(domain.RefundRequest{ID: "R1"}, minutes(3)) },
		func(t *domain.Transaction) error { return t.ConfirmRefund("R1", "D-updated", minutes(4)) },
	} {
		if _, err := s.Transactions.Update(ctx, account, tx.ID(), step); err != nil {
			t.Fatalf("Update %d: %v", i+1, err)
		}
	}
	for _, c := range []struct {
		f    ports.TransactionFilter
		want []string
	}{
		{ports.TransactionFilter{Statuses: []domain.TransactionStatus{domain.TxRefunded}}, []string{tx.ID()}},
		{ports.TransactionFilter{Statuses: []domain.TransactionStatus{domain.TxPixQRCodeGenerated}}, nil},
		{ports.TransactionFilter{EndToEnd: "E-updated"}, []string{tx.ID()}},
		{ports.TransactionFilter{EndToEndRefund: "D-updated", MaxAmount: new(domain.Cents(1000))}, []string{tx.ID()}},
	} {
		c.f.AccountID = account
		page, err := s.Transactions.List(ctx, c.f, ports.Page{Number: 1, Size: 20})
		if err != nil || !slices.Equal(transactionIDs(page.Items), c.want) || page.Total != len(c.want) {
			t.Errorf("List(%+v) = %v (total %d), %v; want %v", c.f, transactionIDs(page.Items), page.Total, err, c.want)
		}
	}
}

func txFilterFieldSelectsTransactions(t *testing.T, newStore func(t *testing.T) Stores) {
	t.Parallel()
	testFilters(t, newStore(t))
}

func txListExpiredListsTransactionsAwaitingPayment(t *testing.T, newStore func(t *testing.T) Stores) {
	t.Parallel()
	s, ctx := newStore(t), context.Background()
	expiry := time.Duration(domain.DefaultExpirationSeconds) * time.Second
	early := createTransaction(t, s, txSpec{account: domain.NewID(), createdAt: minutes(0)})
	onTime := createTransaction(t, s, txSpec{account: domain.NewID(), createdAt: minutes(10)})
	createTransaction(t, s, txSpec{account: onTime.AccountID(), createdAt: minutes(11)})                        // not expired yet
	createTransaction(t, s, txSpec{account: domain.NewID(), createdAt: minutes(0), status: domain.TxPaid})      // paid
	createTransaction(t, s, txSpec{account: domain.NewID(), createdAt: minutes(0), status: domain.TxPending})   // no QR code
	createTransaction(t, s, txSpec{account: early.AccountID(), createdAt: minutes(0), status: domain.TxFailed}) // failed
	now := minutes(10).Add(expiry)

	got, err := s.Transactions.ListExpired(ctx, now, 10)
	if want := []string{early.ID(), onTime.ID()}; err != nil || !sameSet(transactionIDs(got), want) {
		t.Errorf("ListExpired = %v, %v; want %v", transactionIDs(got), err, want)
	}
	if got, err = s.Transactions.ListExpired(ctx, now, 1); err != nil || len(got) != 1 {
		t.Errorf("ListExpired(limit 1) = %v, %v; want one", transactionIDs(got), err)
	}
	if got, err = s.Transactions.ListExpired(ctx, minutes(0).Add(expiry).Add(-time.Millisecond), 10); err != nil || len(got) != 0 {
		t.Errorf("ListExpired(before any expiry) = %v, %v; want none", transactionIDs(got), err)
	}
}

func txListByStatusListsTransactionsEnteredStatus(t *testing.T, newStore func(t *testing.T) Stores) {
	t.Parallel()
	s, ctx := newStore(t), context.Background()
	// PROCESSING_REFUND is entered 3 s after creation.
	second := createTransaction(t, s, txSpec{account: domain.NewID(), createdAt: minutes(2), status: domain.TxProcessingRefund})
	first := createTransaction(t, s, txSpec{account: domain.NewID(), createdAt: minutes(1), status: domain.TxProcessingRefund})
	createTransaction(t, s, txSpec{account: domain.NewID(), createdAt: minutes(3), status: domain.TxProcessingRefund}) // too late
	createTransaction(t, s, txSpec{account: first.AccountID(), createdAt: minutes(0), status: domain.TxPaid})          // other status
	until := minutes(2).Add(3 * time.Second)

	got, err := s.Transactions.ListByStatus(ctx, domain.TxProcessingRefund, until, 10)
	if want := []string{first.ID(), second.ID()}; err != nil || !slices.Equal(transactionIDs(got), want) {
		t.Errorf("ListByStatus = %v, %v; want %v", transactionIDs(got), err, want)
	}
	if got, err = s.Transactions.ListByStatus(ctx, domain.TxProcessingRefund, until, 1); err != nil || !slices.Equal(transactionIDs(got), []string{first.ID()}) {
		t.Errorf("ListByStatus(limit 1) = %v, %v; want the oldest", transactionIDs(got), err)
	}
}

// testFilters stores a few transactions in one account, and look-alikes in another, and lists
// them with each filter field.
func testFilters(t *testing.T, s Stores) {
	ctx := context.Background()
	account, other := domain.NewID(), domain.NewID()
	maria := &domain.Customer{Name: "Maria da Silva", Email: "Maria.Silva@Example.com", Document: cpf(1),
		MobilePhone: "11987654321", Landline: "1133334444"}
	joao := &domain.Customer{Name: "João Souza", Email: "joao@example.com", Document: cnpj(1), MobilePhone: "21987650000"}
	ana := &domain.Customer{Name: "Ana Silveira", Email: "ana@example.org", Document: cpf(2), Landline: "3132221111"}
	specs := []txSpec{
		{customer: maria, amount: 1000, status: domain.TxPixQRCodeGenerated, external: "ORD-1"},
		{customer: joao, amount: 2500, status: domain.TxPaid, endToEnd: "E0001", external: "ORD-2"},
		{customer: maria, amount: 5000, status: domain.TxRefunded, endToEnd: "E0002", refundE2E: "D0002"},
		{amount: 100, status: domain.TxPending},
		{customer: ana, amount: 7500, status: domain.TxFailed},
		{customer: joao, amount: 10000, status: domain.TxBlocked, endToEnd: "E0005"},
		{customer: ana, amount: 1000, status: domain.TxPaid, endToEnd: "E0006", external: "ORD-6"},
	}
	var txs []*domain.Transaction
	for i, spec := range specs {
		spec.account, spec.createdAt = account, minutes(i)
		txs = append(txs, createTransaction(t, s, spec))
		// The other account holds a look-alike of every transaction, which no filter may list.
		spec.account, spec.endToEnd, spec.refundE2E = other, "", ""
		createTransaction(t, s, spec)
	}
	outsider := createTransaction(t, s, txSpec{account: other})
	pick := func(indexes ...int) []string {
		var picked []*domain.Transaction
		for _, i := range indexes {
			picked = append(picked, txs[i])
		}
		return listOrder(picked)
	}
	cents := func(c domain.Cents) *domain.Cents { return &c }
	at := func(m int) *time.Time { v := minutes(m); return &v }

	for _, c := range []struct {
		name string
		f    ports.TransactionFilter
		want []string
	}{
		{"no filter lists every transaction", ports.TransactionFilter{}, pick(0, 1, 2, 3, 4, 5, 6)},
		{"startDate keeps those created at or after it", ports.TransactionFilter{StartDate: at(4)}, pick(4, 5, 6)},
		{"endDate keeps those created at or before it", ports.TransactionFilter{EndDate: at(2)}, pick(0, 1, 2)},
		{"startDate and endDate keep the range between them", ports.TransactionFilter{StartDate: at(1), EndDate: at(3)}, pick(1, 2, 3)},
		{"one status keeps those in it", ports.TransactionFilter{Statuses: []domain.TransactionStatus{domain.TxPaid}}, pick(1, 6)},
		{"several statuses keep those in any of them", ports.TransactionFilter{Statuses: []domain.TransactionStatus{domain.TxPaid, domain.TxRefunded}}, pick(1, 2, 6)},
		{"paymentMethod PIX keeps every transaction", ports.TransactionFilter{PaymentMethods: []domain.PaymentMethod{domain.PaymentPIX}}, pick(0, 1, 2, 3, 4, 5, 6)},
		{"customerEmail matches the whole address whatever the case", ports.TransactionFilter{CustomerEmail: "maria.silva@EXAMPLE.com"}, pick(0, 2)},
		{"customerEmail does not match a part of an address", ports.TransactionFilter{CustomerEmail: "silva@example.com"}, nil},
		{"customerName matches a substring whatever the case", ports.TransactionFilter{CustomerName: "SILV"}, pick(0, 2, 4, 6)},
		{"customerName folds the case of accented letters", ports.TransactionFilter{CustomerName: "JOÃO"}, pick(1, 5)},
		{"customerDocument matches the document", ports.TransactionFilter{CustomerDocument: cnpj(1).Value()}, pick(1, 5)},
		{"customerPhone matches the mobile phone", ports.TransactionFilter{CustomerPhone: "21987650000"}, pick(1, 5)},
		{"customerPhone matches the landline", ports.TransactionFilter{CustomerPhone: "3132221111"}, pick(4, 6)},
		{"id selects its transaction", ports.TransactionFilter{ID: txs[3].ID()}, pick(3)},
		{"id of another account's transaction selects nothing", ports.TransactionFilter{ID: outsider.ID()}, nil},
		{"id of a transaction outside the dates selects nothing", ports.TransactionFilter{ID: txs[3].ID(), StartDate: at(4)}, nil},
		{"endToEnd matches exactly", ports.TransactionFilter{EndToEnd: "E0005"}, pick(5)},
		{"endToEndRefund matches exactly", ports.TransactionFilter{EndToEndRefund: "D0002"}, pick(2)},
		{"externalCode matches exactly", ports.TransactionFilter{ExternalCode: "ORD-6"}, pick(6)},
		{"externalCode does not match a prefix", ports.TransactionFilter{ExternalCode: "ORD"}, nil},
		{"minAmount is inclusive", ports.TransactionFilter{MinAmount: cents(5000)}, pick(2, 4, 5)},
		{"maxAmount is inclusive", ports.TransactionFilter{MaxAmount: cents(1000)}, pick(0, 3, 6)},
		{"minAmount and maxAmount keep the range between them", ports.TransactionFilter{MinAmount: cents(1000), MaxAmount: cents(2500)}, pick(0, 1, 6)},
		{"filters combine with AND", ports.TransactionFilter{Statuses: []domain.TransactionStatus{domain.TxPaid}, CustomerName: "silv"}, pick(6)},
		{"a filter nothing matches gives an empty page", ports.TransactionFilter{Statuses: []domain.TransactionStatus{domain.TxInfraction}}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			c.f.AccountID = account
			page, err := s.Transactions.List(ctx, c.f, ports.Page{Number: 1, Size: 100})
			if err != nil {
				t.Fatalf("List: %v", err)
			}
			if !slices.Equal(transactionIDs(page.Items), c.want) || page.Total != len(c.want) {
				t.Errorf("List = %v (total %d), want %v (total %d)", transactionIDs(page.Items), page.Total, c.want, len(c.want))
			}
		})
	}
}

// richTransaction is a PAID transaction with every field set.
func richTransaction(t *testing.T, account string) *domain.Transaction {
	t.Helper()
	order := domain.Order{
		Amount: 15990, PaymentMethod: domain.PaymentPIX, WebhookURL: "https://shop.example.com/hooks/pix",
		ExternalCode: "ORDER-2026-0001",
		Customer: &domain.Customer{IP: "203.0.113.7", Name: "Maria da Silva", Email: "maria@example.com",
			Document: cpf(11), Landline: "1133334444", MobilePhone: "11987654321", Birthdate: "1990-05-17"},
		Seller:  &domain.Seller{Name: "Loja Exemplo LTDA", Document: cnpj(12)},
		Address: &domain.Address{ZipCode: "01310100", Number: "1000", Street: "Avenida Paulista", Neighborhood: "Bela Vista", City: "São Paulo", State: "SP", Country: "BR", Complement: "conj. 12"},
		Items: []domain.Item{
			{Title: "Camiseta", Description: "Algodão, tamanho M", UnitPrice: 4995, Quantity: 2},
			{Title: "Frete", UnitPrice: 6000, Quantity: 1},
		},
		Metadata:          []byte(`{"campaign":"verão","tags":["a","b"]}`),
		ExpirationSeconds: 3600,
	}
	created := minutes(0).Add(123 * time.Millisecond)
	tx, err := domain.NewTransaction(domain.NewID(), newPaymentToken(), account, "SANDBOX", order, domain.Idempotency{Key: "order-2026-0001", Fingerprint: "sha256:ab12"}, created)
	if err != nil {
		t.Fatal(err)
	}
	steps := []func(time.Time) error{
		func(at time.Time) error { return tx.AttachPix(pixFor(tx), at) },
		func(at time.Time) error {
			return tx.Pay(domain.Payment{
				AmountPaid: 15990, PaidAt: at, EndToEnd: "E18236120202603021201s0000000001", Fee: 160,
				Payer: &domain.AccountHolder{Type: domain.HolderPF, Name: "Maria da Silva", Document: cpf(11),
					BankAccount: domain.BankAccount{Type: "CACC", Digit: "7", ISPB: "18236120"},
					Pix:         domain.PixKey{Type: domain.PixKeyEmail, Key: "maria@example.com"}},
				Receiver: &domain.AccountHolder{Type: domain.HolderPJ, Name: "Loja Exemplo LTDA", Document: cnpj(12),
					BankAccount: domain.BankAccount{Type: "TRAN", Digit: "0", ISPB: "00000000"}},
			}, at)
		},
		func(at time.Time) error { return tx.OpenDispute(at) },
	}
	for i, step := range steps {
		if err := step(created.Add(time.Duration(i+1) * 1500 * time.Millisecond)); err != nil {
			t.Fatal(err)
		}
	}
	return tx
}

// buildTransactionLike is an independent copy of tx, made from its record with nothing
// shared, to compare with what the store hands back.
func buildTransactionLike(t *testing.T, tx *domain.Transaction) *domain.Transaction {
	t.Helper()
	r := tx.Record()
	o := r.Order
	o.Customer, o.Seller, o.Address = clonePtr(o.Customer), clonePtr(o.Seller), clonePtr(o.Address)
	o.Items = slices.Clone(o.Items)
	o.Metadata = bytes.Clone(o.Metadata)
	r.Order = o
	if r.Pix != nil {
		p := *r.Pix
		p.QRCodePNG = bytes.Clone(p.QRCodePNG)
		r.Pix = &p
	}
	r.Payer, r.Receiver = clonePtr(r.Payer), clonePtr(r.Receiver)
	r.AmountPaid, r.FeeAmount = clonePtr(r.AmountPaid), clonePtr(r.FeeAmount)
	r.PaymentDate, r.InfractionDate = clonePtr(r.PaymentDate), clonePtr(r.InfractionDate)
	return domain.UnmarshalTransactionFromDatabase(r)
}

// scribble changes everything a caller can reach through a transaction's getters.
func scribble(tx *domain.Transaction) {
	if pix := tx.Pix(); pix != nil {
		pix.QRCodePNG[0] ^= 0xff
		pix.URI = "changed"
	}
	o := tx.Order()
	if o.Customer != nil {
		o.Customer.Name = "changed"
	}
	if len(o.Items) > 0 {
		o.Items[0].Title = "changed"
	}
	if len(o.Metadata) > 0 {
		o.Metadata[0] = '['
	}
	if p := tx.Payer(); p != nil {
		p.Name = "changed"
	}
	if a := tx.AmountPaid(); a != nil {
		*a = 1
	}
}

// assertTransactionUnchanged checks that the stored transaction is still before and that its
// resource still has the deliveries it had.
func assertTransactionUnchanged(t *testing.T, s Stores, before *domain.Transaction, deliveries int) {
	t.Helper()
	ctx := context.Background()
	got, err := s.Transactions.Get(ctx, before.AccountID(), before.ID())
	if err != nil {
		t.Fatalf("Get: %v", err)
	}
	assertSameTransaction(t, got, before)
	if got.Version() != before.Version() {
		t.Errorf("version %d, want %d", got.Version(), before.Version())
	}
	ds, err := s.Outbox.Deliveries(ctx, before.AccountID(), domain.ResourceTransaction, before.ID())
	if err != nil || len(ds) != deliveries {
		t.Errorf("Deliveries = %v, %v; want %d", eventTypes(ds), err, deliveries)
	}
}

// assertDeliveryOf checks that a stored delivery carries the event raised.
func assertDeliveryOf(t *testing.T, d ports.Delivery, raised domain.Event) {
	t.Helper()
	e := d.Event
	if e.ID != raised.ID || e.Type != raised.Type || e.AccountID != raised.AccountID || e.ResourceID != raised.ResourceID ||
		e.Kind != raised.Kind || e.WebhookURL != raised.WebhookURL || !e.CreatedAt.Equal(raised.CreatedAt) {
		t.Errorf("stored event = %s %s %s/%s/%s %s %v, want %s %s %s/%s/%s %s %v",
			e.ID, e.Type, e.AccountID, e.Kind, e.ResourceID, e.WebhookURL, e.CreatedAt,
			raised.ID, raised.Type, raised.AccountID, raised.Kind, raised.ResourceID, raised.WebhookURL, raised.CreatedAt)
	}
	switch {
	case raised.Transaction != nil:
		if e.Transaction == nil {
			t.Fatalf("stored event %s has no transaction snapshot", e.ID)
		}
		assertSameTransaction(t, e.Transaction, raised.Transaction)
	case raised.Withdrawal != nil:
		if e.Withdrawal == nil {
			t.Fatalf("stored event %s has no withdrawal snapshot", e.ID)
		}
		assertSameWithdrawal(t, e.Withdrawal, raised.Withdrawal)
	}
}

// listOrder is the ids of txs in list order: createdAt descending, then id descending.
func listOrder(txs []*domain.Transaction) []string {
	sorted := slices.Clone(txs)
	slices.SortFunc(sorted, func(a, b *domain.Transaction) int {
		if c := b.CreatedAt().Compare(a.CreatedAt()); c != 0 {
			return c
		}
		return strings.Compare(b.ID(), a.ID())
	})
	return transactionIDs(sorted)
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

func statusOf(tx *domain.Transaction) domain.TransactionStatus {
	if tx == nil {
		return "<nil>"
	}
	return tx.Status()
}

func versionOf(tx *domain.Transaction) int64 {
	if tx == nil {
		return 0
	}
	return tx.Version()
}

func clonePtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}
