package main

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/pixgate/pixgate/adapters/memory"
	"github.com/pixgate/pixgate/domain"
)

// `pixgate ledger verify`: its command line through run(), and its audit of a memory store
// that the API filled (the same wiring as `serve`).

func runLedger(t *testing.T, vars map[string]string, args ...string) (string, error) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), append([]string{"ledger"}, args...), environ(vars), &stdout, &stderr)
	return stdout.String(), err
}

func TestLedgerHelpPrintsUsageAndSucceeds(t *testing.T) {
	for _, args := range [][]string{{"--help"}, {"-h"}, {"verify", "--help"}, {"verify", "-h"}} {
		out, err := runLedger(t, nil, args...)
		if err != nil || !strings.Contains(out, "pixgate ledger verify [--account ID]") {
			t.Fatalf("ledger %v: %v\n%s", args, err, out)
		}
	}
}

func TestLedgerCommandLineMistakesFail(t *testing.T) {
	for _, args := range [][]string{{}, {"check"}, {"verify", "extra"}, {"verify", "--acount", "x"}} {
		if _, err := runLedger(t, nil, args...); err == nil {
			t.Fatalf("ledger %v succeeded", args)
		}
	}
}

func TestLedgerVerifyOnTheMemoryStoreSaysThereIsNothingToCheck(t *testing.T) {
	out, err := runLedger(t, nil, "verify")
	if err != nil || !strings.Contains(out, "no ledger here to verify") {
		t.Fatalf("%v\n%s", err, out)
	}
}

// ledgerFill moves money through every kind of entry the API makes: payments and fees, a refund
// completed, a refund failed, a withdrawal paid out and one failed.
func ledgerFill(t *testing.T, e *env) (accountID, tok string) {
	t.Helper()
	accountID, tok = e.account()
	paid := e.rfPaid(tok, 10_000)
	e.rfPaid(tok, 5_000)
	e.rfAccepted(tok, paid, map[string]any{"amount": 1_000})
	e.lcSettle()
	e.rfAccepted(tok, paid, map[string]any{"amount": 500})
	e.lcStep(tok, paid, "refund/fail", http.StatusOK)
	e.secWithdraw(tok, 2_000)
	e.settle()
	failed := e.secWithdraw(tok, 1_000)
	if r := e.do("POST", "/sandbox/withdrawal/"+failed+"/fail", tok, nil); r.status != http.StatusOK {
		t.Fatalf("failing the withdrawal: %d %s", r.status, r.body)
	}
	return accountID, tok
}

func TestLedgerVerifyPassesWhatTheAPIRecorded(t *testing.T) {
	e := wdEnv(t, nil)
	accountID, _ := ledgerFill(t, e)
	ledgerFill(t, e)
	var out bytes.Buffer
	if err := verifyLedger(context.Background(), e.app.stores, "", &out); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	t.Log(out.String())
	if !strings.Contains(out.String(), "resources checked: OK") || !strings.Contains(out.String(), "(sum 0.00)") {
		t.Fatalf("report:\n%s", out.String())
	}
	out.Reset()
	if err := verifyLedger(context.Background(), e.app.stores, accountID, &out); err != nil || !strings.Contains(out.String(), "ledger verify: 1 ledgers") {
		t.Fatalf("--account: %v\n%s", err, out.String())
	}
}

func TestLedgerVerifyFailsOnAnEntryOfNoResource(t *testing.T) {
	e := wdEnv(t, nil)
	accountID, _ := ledgerFill(t, e)
	ghost := domain.Posting{ID: "ghost/0/withdrawal", Type: domain.MoveWithdrawal, AccountID: accountID,
		Resource: domain.ResourceWithdrawal, ResourceID: "ghost", Debit: domain.LedgerAvailable, Credit: domain.LedgerPayouts, Amount: 10}
	if _, err := e.app.stores.ledger.Post(context.Background(), ghost); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	err := verifyLedger(context.Background(), e.app.stores, "", &out)
	if err == nil || !strings.Contains(err.Error(), "1 disagreements") {
		t.Fatalf("err = %v\n%s", err, out.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "unknown_resource ledger="+accountID) ||
		!strings.Contains(lines[0], "entry=ghost/0/withdrawal") || !strings.HasSuffix(lines[2], "resources checked: 1 disagreements") {
		t.Fatalf("report:\n%s", out.String())
	}
}

func TestLedgerVerifyReportsAStoreFailure(t *testing.T) {
	e := wdEnv(t, nil)
	st := e.app.stores
	st.ledger = failingLedger{st.ledger}
	if err := verifyLedger(context.Background(), st, "", &bytes.Buffer{}); !errors.Is(err, errLedgerDown) {
		t.Fatalf("err = %v", err)
	}
}

// booksApart are stores whose resources live in one memory store and whose ledger is another's,
// so that a test can write the ledger in the order it needs — as a store that posted a
// payment and its fee one by one did — beside resources whose histories imply exactly its
// entries. (The resources' own store keeps entries of its own, which nobody reads.)
type booksApart struct {
	stores
	res *memory.Store
}

func newBooksApart() booksApart {
	res, books := memory.NewStore(), memory.NewStore()
	return booksApart{res: res, stores: stores{accounts: memory.NewAccounts(), transactions: res.Transactions(),
		withdrawals: res.Withdrawals(), ledger: books.Ledger(), close: func(context.Context) error { return nil }}}
}

// paid stores a charge of account paid with amount and fee, and returns the postings its
// payment raised.
func (b booksApart) paid(t *testing.T, account string, amount, fee domain.Cents, at time.Time) (*domain.Transaction, []domain.Posting) {
	t.Helper()
	ctx := context.Background()
	tx, err := domain.NewTransaction(domain.NewID(), "payment-token-"+domain.NewID(), account, "SANDBOX", domain.Order{Amount: amount,
		PaymentMethod: domain.PaymentPIX, ExpirationSeconds: 3600, IsInfoProduct: true}, domain.Idempotency{}, at)
	if err != nil {
		t.Fatal(err)
	}
	if err := tx.AttachPix(domain.PixResponse{URI: "000201", ExpiresAt: at.Add(time.Hour)}, at); err != nil {
		t.Fatal(err)
	}
	if err := b.transactions.Create(ctx, tx); err != nil {
		t.Fatal(err)
	}
	var raised []domain.Posting
	tx, err = b.transactions.Update(ctx, account, tx.ID(), func(tx *domain.Transaction) error {
		err := tx.Pay(domain.Payment{AmountPaid: amount, Fee: fee, PaidAt: at, EndToEnd: "E" + tx.ID()[:8]}, at)
		raised = tx.Postings()
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return tx, raised
}

// withdrawn stores a withdrawal of account's amount and returns its posting.
func (b booksApart) withdrawn(t *testing.T, account string, amount domain.Cents, at time.Time) domain.Posting {
	t.Helper()
	w, err := domain.NewWithdrawal(domain.NewID(), account, "SANDBOX", domain.Payout{Amount: amount,
		PixKey: domain.PixKey{Type: domain.PixKeyEmail, Key: "loja@example.com"}}, domain.Idempotency{}, at)
	if err != nil {
		t.Fatal(err)
	}
	p := w.Postings()[0]
	if err := b.withdrawals.Create(context.Background(), w); err != nil {
		t.Fatal(err)
	}
	return p
}

// post writes each journal of the ledger as given, one Post each.
func (b booksApart) post(t *testing.T, journals ...[]domain.Posting) {
	t.Helper()
	for _, j := range journals {
		if _, err := b.ledger.Post(context.Background(), j...); err != nil {
			t.Fatal(err)
		}
	}
}

func TestLedgerVerifyFailsOnAnOverdraftNoDisputeExplains(t *testing.T) {
	b := newBooksApart()
	account, at := domain.NewID(), time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC)
	_, first := b.paid(t, account, 1000, 10, at)
	_, second := b.paid(t, account, 10, 0, at.Add(time.Minute))
	debit := b.withdrawn(t, account, 1000, at.Add(2*time.Minute))
	// The defect of a store posting a payment and its fee one by one: a withdrawal of
	// everything lands between them, and the fee takes available to -10.
	b.post(t, first[:1], []domain.Posting{debit}, first[1:], second)
	var out bytes.Buffer
	err := verifyLedger(context.Background(), b.stores, "", &out)
	if err == nil || !strings.Contains(err.Error(), "1 disagreements") {
		t.Fatalf("err = %v\n%s", err, out.String())
	}
	if !strings.HasPrefix(out.String(), "overdrawn ledger="+account) || !strings.Contains(out.String(), "entry="+debit.ID) {
		t.Fatalf("report:\n%s", out.String())
	}
}

func TestLedgerVerifyPassesAnOverdraftADisputeHolds(t *testing.T) {
	b := newBooksApart()
	account, at := domain.NewID(), time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC)
	tx, pay := b.paid(t, account, 1000, 10, at)
	debit := b.withdrawn(t, account, 990, at.Add(time.Minute))
	var hold []domain.Posting
	if _, err := b.transactions.Update(context.Background(), account, tx.ID(), func(tx *domain.Transaction) error {
		err := tx.OpenDispute(at.Add(2 * time.Minute))
		hold = tx.Postings()
		return err
	}); err != nil {
		t.Fatal(err)
	}
	b.post(t, pay, []domain.Posting{debit}, hold) // available 0, then -1000 under the dispute
	var out bytes.Buffer
	if err := verifyLedger(context.Background(), b.stores, "", &out); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if bal, _ := b.ledger.Balance(context.Background(), account); bal.Available != -1000 {
		t.Fatalf("available %d, want -1000", bal.Available)
	}
}
