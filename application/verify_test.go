package application_test

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/pixgate/pixgate/application"
	"github.com/pixgate/pixgate/domain"
	"github.com/pixgate/pixgate/ports"
	"github.com/pixgate/pixgate/ports/porttest"
)

// The ledger audit runs on staged stores (stagedLedger, stagedTransactions and
// stagedWithdrawals below), which vfWorld fills with a store's worth of entries and resources
// and which the tests then corrupt in ways no real store would let them.

var vfNow = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)

const vfAccount = "acc-1"

// vfWorld is a store whose ledger holds exactly what the transitions below posted: a paid
// charge, a partial refund completed, a withdrawal that failed, and a late payment returned.
type vfWorld struct {
	ledger      *stagedLedger
	txs         *stagedTransactions
	withdrawals *stagedWithdrawals
	accounts    *porttest.Accounts
}

func newVfWorld(t *testing.T) *vfWorld {
	t.Helper()
	ledger := newStagedLedger(newFakeClock(vfNow))
	w := &vfWorld{ledger: ledger, txs: &stagedTransactions{}, withdrawals: &stagedWithdrawals{}, accounts: newAccounts()}
	vfAddAccount(t, w.accounts, vfAccount)
	at := vfNow.Add(-time.Hour)
	step := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		at = at.Add(time.Second)
	}

	tx, err := domain.NewTransaction("tx1", "payment-token-verify-0001", vfAccount, "SANDBOX", domain.Order{Amount: 10000, PaymentMethod: domain.PaymentPIX,
		ExpirationSeconds: 3600, IsInfoProduct: true}, domain.Idempotency{}, at)
	step(err)
	step(tx.AttachPix(domain.PixResponse{URI: "000201", ExpiresAt: at.Add(time.Hour)}, at))
	step(tx.Pay(domain.Payment{AmountPaid: 10000, PaidAt: at, EndToEnd: "E1", Fee: 99}, at))
	step(tx.RequestRefund(domain.RefundRequest{ID: "rf1", Amount: 2500}, at))
	step(tx.ConfirmRefund("rf1", "D1", at))
	w.ledger.record(t, tx.Postings()...)
	tx.MarkStored(tx.Version() + 1)
	w.txs.put(tx)

	wd, err := domain.NewWithdrawal("wd1", vfAccount, "SANDBOX", domain.Payout{Amount: 3000, Fee: 100, PixKey: domain.PixKey{Type: domain.PixKeyEmail, Key: "loja@example.com"}}, domain.Idempotency{}, at)
	step(err)
	step(wd.StartProcessing(at))
	step(wd.Fail("recusado", at))
	w.ledger.record(t, wd.Postings()...)
	wd.MarkStored(wd.Version() + 1)
	w.withdrawals.put(wd)

	claim := ports.PaymentClaim{EndToEndID: "E2", TransactionID: "tx1", AccountID: vfAccount, Amount: 700, Late: true, CreatedAt: at}
	arrive, leave := domain.LatePaymentPostings(claim.EndToEndID, claim.TransactionID, claim.Amount)
	w.ledger.record(t, arrive, leave)
	if _, err := w.ledger.ClaimPayment(context.Background(), claim); err != nil {
		t.Fatal(err)
	}
	return w
}

// vfAddAccount stores an active merchant account created at vfNow.
func vfAddAccount(t *testing.T, accounts *porttest.Accounts, id string) {
	t.Helper()
	a := domain.UnmarshalAccountFromDatabase(domain.AccountRecord{ID: id, Name: "Loja " + id, Status: domain.AccountActive, CreatedAt: vfNow})
	if err := accounts.CreateAccount(context.Background(), a); err != nil {
		t.Fatal(err)
	}
}

func (w *vfWorld) verify(t *testing.T, accountID string) application.LedgerReport {
	t.Helper()
	rep, err := application.NewVerifyLedger(w.ledger, w.txs, w.withdrawals, w.accounts).Execute(context.Background(), accountID)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// entry returns a pointer to the stored entry of type kind of account's ledger.
func (w *vfWorld) entry(t *testing.T, accountID string, kind domain.MovementType) *domain.Entry {
	t.Helper()
	log := w.ledger.entries[accountID]
	for i := range log {
		if log[i].Type == kind {
			return &log[i]
		}
	}
	t.Fatalf("no %s entry in %q", kind, accountID)
	return nil
}

// lastEntry returns a pointer to the newest entry of account's ledger.
func (w *vfWorld) lastEntry(accountID string) *domain.Entry {
	log := w.ledger.entries[accountID]
	return &log[len(log)-1]
}

func kinds(rep application.LedgerReport) []application.DisagreementKind {
	var out []application.DisagreementKind
	for _, d := range rep.Disagreements {
		out = append(out, d.Kind)
	}
	return out
}

func TestVerifyLedgerPassesAClean(t *testing.T) {
	w := newVfWorld(t)
	rep := w.verify(t, "")
	if !rep.OK() {
		t.Fatalf("a clean ledger disagrees: %v", rep.Disagreements)
	}
	if rep.Ledgers != 2 || rep.Entries != 8 || rep.Resources != 3 {
		t.Fatalf("checked %d ledgers, %d entries, %d resources; want 2, 8 and 3 (a transaction, a withdrawal, a late payment)",
			rep.Ledgers, rep.Entries, rep.Resources)
	}
	want := map[domain.LedgerAccount]domain.Cents{domain.LedgerAvailable: 10000 - 99 - 2500, domain.LedgerBlocked: 0,
		domain.LedgerClearing: -10000 + 2500 - 700 + 700, domain.LedgerFees: 99, domain.LedgerPayouts: 0, domain.LedgerSuspense: 0}
	for acct, c := range want {
		if rep.Balances[acct] != c {
			t.Errorf("%s recomputed as %d, want %d (all: %v)", acct, rep.Balances[acct], c, rep.Balances)
		}
	}
	if one := w.verify(t, vfAccount); !one.OK() || one.Ledgers != 1 || one.Resources != 2 {
		t.Fatalf("--account: %d ledgers, %d resources, %v", one.Ledgers, one.Resources, one.Disagreements)
	}
}

func TestVerifyLedgerCatches(t *testing.T) {
	cases := []struct {
		name    string
		corrupt func(t *testing.T, w *vfWorld)
		want    application.DisagreementKind
		entryID string
	}{
		{"a missing entry", func(t *testing.T, w *vfWorld) {
			log := w.ledger.entries[vfAccount]
			var kept []domain.Entry
			for _, e := range log {
				if e.Type != domain.MoveFee {
					kept = append(kept, e)
				}
			}
			w.ledger.entries[vfAccount] = nil
			for _, e := range kept {
				w.ledger.record(t, e.Posting)
			}
		}, application.DisagreeMissing, "tx1/2/fee"},
		{"a changed amount", func(t *testing.T, w *vfWorld) {
			w.ledger.entries[vfAccount] = rebuilt(t, w.ledger.entries[vfAccount], func(p *domain.Posting) {
				if p.Type == domain.MovePayment {
					p.Amount = 9000
				}
			})
		}, application.DisagreeChanged, "tx1/2/payment"},
		{"a broken balanceAfter chain", func(t *testing.T, w *vfWorld) {
			w.entry(t, vfAccount, domain.MoveRefundHold).BalanceAfter.Available += 1
		}, application.DisagreeBalanceAfter, domain.RefundPostingID("tx1", "rf1", domain.MoveRefundHold)},
		{"a duplicated entry", func(t *testing.T, w *vfWorld) {
			w.ledger.record(t, w.entry(t, vfAccount, domain.MovePayment).Posting)
		}, application.DisagreeDuplicate, "tx1/2/payment"},
		{"an entry of an unknown resource", func(t *testing.T, w *vfWorld) {
			w.ledger.record(t, domain.Posting{ID: "ghost/0/withdrawal", Type: domain.MoveWithdrawal, AccountID: vfAccount,
				Resource: domain.ResourceWithdrawal, ResourceID: "ghost", Debit: domain.LedgerAvailable, Credit: domain.LedgerPayouts, Amount: 10})
		}, application.DisagreeUnknownResource, "ghost/0/withdrawal"},
		{"an extra entry of a known resource", func(t *testing.T, w *vfWorld) {
			w.ledger.record(t, domain.Posting{ID: "tx1/9/dispute_hold", Type: domain.MoveDisputeHold, AccountID: vfAccount,
				Resource: domain.ResourceTransaction, ResourceID: "tx1", Debit: domain.LedgerAvailable, Credit: domain.LedgerBlocked, Amount: 10})
		}, application.DisagreeExtra, "tx1/9/dispute_hold"},
		{"a balance the entries do not add up to", func(t *testing.T, w *vfWorld) {
			w.ledger.balances[vfAccount] = domain.LedgerBalance{Available: 1}
		}, application.DisagreeBalance, ""},
		{"a gap in the numbering", func(t *testing.T, w *vfWorld) {
			w.entry(t, vfAccount, domain.MoveWithdrawal).Seq += 10
		}, application.DisagreeSequence, "wd1/0/withdrawal"},
		{"an entry that debits and credits one account", func(t *testing.T, w *vfWorld) {
			w.entry(t, vfAccount, domain.MoveWithdrawalReversal).Debit = domain.LedgerAvailable
		}, application.DisagreeMalformed, "wd1/2/withdrawal_reversal"},
		{"a late payment returned without its arrival", func(t *testing.T, w *vfWorld) {
			w.ledger.entries[""] = rebuilt(t, w.ledger.entries[""][1:], func(*domain.Posting) {})
		}, application.DisagreeMissing, "late/E2/late_payment"},
		{"a suspense entry no late payment explains", func(t *testing.T, w *vfWorld) {
			arrive, _ := domain.LatePaymentPostings("E9", "tx1", 5)
			w.ledger.record(t, arrive)
		}, application.DisagreeLatePayment, "late/E9/late_payment"},
	}
	for _, c := range cases {
		t.Run(c.name+" is caught", func(t *testing.T) {
			w := newVfWorld(t)
			c.corrupt(t, w)
			rep := w.verify(t, "")
			found := slices.ContainsFunc(rep.Disagreements, func(d application.Disagreement) bool {
				return d.Kind == c.want && d.EntryID == c.entryID && d.Detail != ""
			})
			for _, d := range rep.Disagreements {
				t.Log(d)
			}
			if !found {
				t.Fatalf("want a %s of entry %q; the audit found %v", c.want, c.entryID, rep.Disagreements)
			}
		})
	}
}

func TestVerifyLedgerAllows(t *testing.T) {
	cases := []struct {
		name string
		add  func(t *testing.T, w *vfWorld)
	}{
		{"a withdrawal reserved then given back by a store that lost its write", func(t *testing.T, w *vfWorld) {
			p := domain.Posting{ID: "lost/0/withdrawal", Type: domain.MoveWithdrawal, AccountID: vfAccount, Resource: domain.ResourceWithdrawal,
				ResourceID: "lost", Debit: domain.LedgerAvailable, Credit: domain.LedgerPayouts, Amount: 50, Checked: true}
			w.ledger.record(t, p, p.Void())
		}},
		{"a refund hold given back on a transaction that never recorded the refund", func(t *testing.T, w *vfWorld) {
			p := domain.Posting{ID: domain.RefundPostingID("tx1", "rf2", domain.MoveRefundHold), Type: domain.MoveRefundHold, AccountID: vfAccount,
				Resource: domain.ResourceTransaction, ResourceID: "tx1", Debit: domain.LedgerAvailable, Credit: domain.LedgerBlocked, Amount: 10, Checked: true}
			w.ledger.record(t, p, p.Void())
		}},
		{"an opening balance per merchant account", func(t *testing.T, w *vfWorld) {
			w.ledger.record(t, domain.OpeningBalancePostings(vfAccount, domain.LedgerBalance{}, domain.LedgerBalance{Available: 500, Blocked: 20})...)
		}},
		{"an account with no entries and nothing to record", func(t *testing.T, w *vfWorld) {
			vfAddAccount(t, w.accounts, "acc-empty")
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := newVfWorld(t)
			c.add(t, w)
			if rep := w.verify(t, ""); !rep.OK() {
				t.Fatalf("the audit refuses it: %v", rep.Disagreements)
			}
		})
	}
	t.Run("but not a void without its reservation", func(t *testing.T) {
		w := newVfWorld(t)
		p := domain.Posting{ID: "lost/0/withdrawal", Type: domain.MoveWithdrawal, AccountID: vfAccount, Resource: domain.ResourceWithdrawal,
			ResourceID: "lost", Debit: domain.LedgerAvailable, Credit: domain.LedgerPayouts, Amount: 50, Checked: true}
		w.ledger.record(t, p.Void())
		if rep := w.verify(t, ""); !slices.Contains(kinds(rep), application.DisagreeUnknownResource) {
			t.Fatalf("a lone void passed: %v", rep.Disagreements)
		}
	})
	t.Run("but not an account whose entries are all missing", func(t *testing.T) {
		w := newVfWorld(t)
		delete(w.ledger.entries, vfAccount)
		if rep := w.verify(t, ""); !slices.Contains(kinds(rep), application.DisagreeMissing) {
			t.Fatalf("an account without its entries passed: %v", rep.Disagreements)
		}
	})
}

// rebuilt stores log's postings again after edit, renumbered, as a store that recorded them
// so would have.
func rebuilt(t *testing.T, log []domain.Entry, edit func(*domain.Posting)) []domain.Entry {
	t.Helper()
	l := newStagedLedger(newFakeClock(vfNow))
	for _, e := range log {
		p := e.Posting
		edit(&p)
		l.record(t, p)
	}
	var out []domain.Entry
	for _, es := range l.entries {
		out = append(out, es...)
	}
	return out
}

// vfCharge is a charge of vfAccount awaiting payment, created at at.
func vfCharge(t *testing.T, id string, amount domain.Cents, at time.Time) *domain.Transaction {
	t.Helper()
	tx, err := domain.NewTransaction(id, "payment-token-"+id+"-000000000", vfAccount, "SANDBOX", domain.Order{Amount: amount, PaymentMethod: domain.PaymentPIX,
		ExpirationSeconds: 3600, IsInfoProduct: true}, domain.Idempotency{}, at)
	if err != nil {
		t.Fatal(err)
	}
	if err := tx.AttachPix(domain.PixResponse{URI: "000201", ExpiresAt: at.Add(time.Hour)}, at); err != nil {
		t.Fatal(err)
	}
	tx.MarkStored(tx.Version() + 1)
	return tx
}

// vfWithdrawal is a PENDING withdrawal of vfAccount.
func vfWithdrawal(t *testing.T, id string, amount domain.Cents, at time.Time) *domain.Withdrawal {
	t.Helper()
	wd, err := domain.NewWithdrawal(id, vfAccount, "SANDBOX", domain.Payout{Amount: amount, PixKey: domain.PixKey{Type: domain.PixKeyEmail, Key: "loja@example.com"}},
		domain.Idempotency{}, at)
	if err != nil {
		t.Fatal(err)
	}
	return wd
}

func TestVerifyLedgerChecksTheOrderOfEntries(t *testing.T) {
	at := vfNow.Add(-time.Minute)
	// vfWorld leaves 7401 available (10000 paid, 99 fee, 2500 refunded) and tx1 PAID.
	t.Run("a fee recorded after a withdrawal that took its payment is caught", func(t *testing.T) {
		w := newVfWorld(t)
		tx := vfCharge(t, "tx2", 1000, at)
		if err := tx.Pay(domain.Payment{AmountPaid: 1000, Fee: 10, PaidAt: at, EndToEnd: "E3"}, at); err != nil {
			t.Fatal(err)
		}
		pay, fee := tx.Postings()[0], tx.Postings()[1]
		wd := vfWithdrawal(t, "wd2", 7401+1000, at)
		// As a store that posted a payment and its fee one by one did, a withdrawal in between.
		w.ledger.record(t, pay)
		w.ledger.record(t, wd.Postings()...)
		w.ledger.record(t, fee)
		tx.MarkStored(tx.Version() + 1)
		w.txs.put(tx)
		wd.MarkStored(wd.Version() + 1)
		w.withdrawals.put(wd)
		rep := w.verify(t, "")
		for _, d := range rep.Disagreements {
			t.Log(d)
		}
		if len(rep.Disagreements) != 1 || rep.Disagreements[0].Kind != application.DisagreeOverdrawn || rep.Disagreements[0].EntryID != wd.ID()+"/0/withdrawal" {
			t.Fatalf("want one %s at the withdrawal; the audit found %v", application.DisagreeOverdrawn, rep.Disagreements)
		}
	})
	t.Run("so is one while a dispute holds money, and in a ledger that stored the fee apart", func(t *testing.T) {
		w := newVfWorld(t)
		tx1, err := w.txs.Get(context.Background(), vfAccount, "tx1")
		if err != nil {
			t.Fatal(err)
		}
		if err := tx1.OpenDispute(at); err != nil { // available 7401 - 7500 = -99, 7500 held
			t.Fatal(err)
		}
		w.ledger.record(t, tx1.Postings()...)
		tx1.MarkStored(tx1.Version() + 1)
		w.txs.put(tx1)
		tx := vfCharge(t, "tx2", 10000, at)
		if err := tx.Pay(domain.Payment{AmountPaid: 10000, Fee: 10, PaidAt: at, EndToEnd: "E3"}, at); err != nil {
			t.Fatal(err)
		}
		pay, fee := tx.Postings()[0], tx.Postings()[1]
		fee.Journal = "" // as a store before journals kept it: the audit knows it from the history
		wd := vfWithdrawal(t, "wd2", 10000-99, at)
		w.ledger.record(t, pay)
		w.ledger.record(t, wd.Postings()...)
		w.ledger.record(t, fee) // available -10: within what the dispute holds, yet taken by the withdrawal
		tx.MarkStored(tx.Version() + 1)
		w.txs.put(tx)
		wd.MarkStored(wd.Version() + 1)
		w.withdrawals.put(wd)
		rep := w.verify(t, "")
		if len(rep.Disagreements) != 1 || rep.Disagreements[0].Kind != application.DisagreeOverdrawn || rep.Disagreements[0].EntryID != wd.ID()+"/0/withdrawal" {
			t.Fatalf("want one %s at the withdrawal; the audit found %v", application.DisagreeOverdrawn, rep.Disagreements)
		}
	})
	t.Run("a debit the merchant asked for left below zero is caught", func(t *testing.T) {
		w := newVfWorld(t)
		wd := vfWithdrawal(t, "wd2", 7402, at)
		p := wd.Postings()[0]
		p.Checked = false // the fake checks what it records; the entry is marked checked below
		w.ledger.record(t, p)
		w.lastEntry(vfAccount).Checked = true
		wd.MarkStored(wd.Version() + 1)
		w.withdrawals.put(wd)
		rep := w.verify(t, "")
		if len(rep.Disagreements) != 1 || rep.Disagreements[0].Kind != application.DisagreeOverdrawn || rep.Disagreements[0].EntryID != p.ID {
			t.Fatalf("want one %s at the withdrawal; the audit found %v", application.DisagreeOverdrawn, rep.Disagreements)
		}
	})
	t.Run("available taken below zero by a MED dispute, held or lost, passes", func(t *testing.T) {
		w := newVfWorld(t)
		tx, err := w.txs.Get(context.Background(), vfAccount, "tx1")
		if err != nil {
			t.Fatal(err)
		}
		for i, move := range []func(time.Time) error{tx.OpenDispute, tx.AcceptDispute, func(at time.Time) error { return tx.CompleteInfraction("D9", at) }} {
			if err := move(at.Add(time.Duration(i) * time.Second)); err != nil {
				t.Fatal(err)
			}
			w.ledger.record(t, tx.Postings()...)
			tx.MarkStored(tx.Version() + 1)
			w.txs.put(tx)
			if rep := w.verify(t, ""); !rep.OK() {
				t.Fatalf("after step %d: the audit refuses it: %v", i, rep.Disagreements)
			}
		}
		if b, _ := w.ledger.Balance(context.Background(), vfAccount); b.Available != 7401-7500 {
			t.Fatalf("available %d, want %d: the dispute's hold leaves it below zero", b.Available, 7401-7500)
		}
	})
	t.Run("a fee recorded before its payment, taking available below zero, is caught", func(t *testing.T) {
		w := newVfWorld(t)
		all := vfWithdrawal(t, "wd2", 7401, at)
		w.ledger.record(t, all.Postings()...)
		all.MarkStored(all.Version() + 1)
		w.withdrawals.put(all)
		tx := vfCharge(t, "tx2", 1000, at)
		if err := tx.Pay(domain.Payment{AmountPaid: 1000, Fee: 10, PaidAt: at, EndToEnd: "E3"}, at); err != nil {
			t.Fatal(err)
		}
		pay, fee := tx.Postings()[0], tx.Postings()[1]
		fee.Journal = ""
		w.ledger.record(t, fee)
		w.ledger.record(t, pay)
		tx.MarkStored(tx.Version() + 1)
		w.txs.put(tx)
		rep := w.verify(t, "")
		if len(rep.Disagreements) != 1 || rep.Disagreements[0].Kind != application.DisagreeOverdrawn || rep.Disagreements[0].EntryID != fee.ID {
			t.Fatalf("want one %s at the fee; the audit found %v", application.DisagreeOverdrawn, rep.Disagreements)
		}
	})
	t.Run("a debit the merchant asked for after a dispute's hold took available below zero is caught", func(t *testing.T) {
		w := newVfWorld(t)
		tx, err := w.txs.Get(context.Background(), vfAccount, "tx1")
		if err != nil {
			t.Fatal(err)
		}
		if err := tx.OpenDispute(at); err != nil {
			t.Fatal(err)
		}
		w.ledger.record(t, tx.Postings()...)
		tx.MarkStored(tx.Version() + 1)
		w.txs.put(tx)
		// A withdrawal after the hold, which the balance check should have refused.
		wd := vfWithdrawal(t, "wd2", 100, at)
		p := wd.Postings()[0]
		p.Checked = false
		w.ledger.record(t, p)
		w.lastEntry(vfAccount).Checked = true
		wd.MarkStored(wd.Version() + 1)
		w.withdrawals.put(wd)
		if rep := w.verify(t, ""); !slices.Contains(kinds(rep), application.DisagreeOverdrawn) {
			t.Fatalf("a withdrawal below a dispute's hold passed: %v", rep.Disagreements)
		}
	})
	t.Run("the history an upgrade replayed, closed by its opening balance, passes", func(t *testing.T) {
		w := newVfWorld(t)
		w.ledger.entries[vfAccount] = nil
		// The version before the ledger refunded a charge's whole payment while its fee had
		// been taken: replayed unchecked, the refund's hold takes available below zero, and
		// the opening balance brings it to what that version showed.
		tx, err := w.txs.Get(context.Background(), vfAccount, "tx1")
		if err != nil {
			t.Fatal(err)
		}
		var have domain.LedgerBalance
		for _, p := range domain.ImpliedTransactionPostings(tx.Record()) {
			p.Checked = false
			w.ledger.record(t, p)
			have = w.ledger.entries[vfAccount][len(w.ledger.entries[vfAccount])-1].BalanceAfter
		}
		wds, _ := w.withdrawals.ListByAccount(context.Background(), vfAccount, ports.Page{Number: 1, Size: 10})
		for _, wd := range wds {
			for _, p := range domain.ImpliedWithdrawalPostings(wd.Record()) {
				p.Checked = false
				w.ledger.record(t, p)
			}
		}
		w.ledger.record(t, domain.OpeningBalancePostings(vfAccount, have, domain.LedgerBalance{Available: have.Available + 1})...)
		if rep := w.verify(t, ""); !rep.OK() {
			t.Fatalf("the audit refuses an upgraded ledger: %v", rep.Disagreements)
		}
	})
}

// stagedTransactions holds transactions exactly as a test puts them, a state no store would
// write included (a charge whose entries are missing or doubled): the audit reads what is
// there. It answers the two reads the audit makes; any other call panics.
type stagedTransactions struct {
	ports.TransactionRepository
	mu      sync.Mutex
	records []domain.TransactionRecord
}

// put stores t, replacing the transaction of the same id.
func (r *stagedTransactions) put(t *domain.Transaction) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.records = slices.DeleteFunc(r.records, func(rec domain.TransactionRecord) bool { return rec.ID == t.ID() })
	r.records = append(r.records, t.Record())
}

func (r *stagedTransactions) Get(_ context.Context, accountID, id string) (*domain.Transaction, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, rec := range r.records {
		if rec.ID == id && rec.AccountID == accountID {
			return domain.UnmarshalTransactionFromDatabase(rec), nil
		}
	}
	return nil, fmt.Errorf("transaction %s: %w", id, domain.ErrNotFound)
}

// List answers an account's transactions in one page, in the order they were put; the audit
// reads them all and orders nothing.
func (r *stagedTransactions) List(_ context.Context, f ports.TransactionFilter, p ports.Page) (ports.TransactionPage, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var all []*domain.Transaction
	for _, rec := range r.records {
		if rec.AccountID == f.AccountID {
			all = append(all, domain.UnmarshalTransactionFromDatabase(rec))
		}
	}
	p = p.Clamped()
	from := min((p.Number-1)*p.Size, len(all))
	return ports.TransactionPage{Items: all[from:min(from+p.Size, len(all))], Total: len(all)}, nil
}

// stagedWithdrawals holds withdrawals exactly as a test puts them, as stagedTransactions does.
type stagedWithdrawals struct {
	ports.WithdrawalRepository
	mu      sync.Mutex
	records []domain.WithdrawalRecord
}

// put stores w, replacing the withdrawal of the same id.
func (r *stagedWithdrawals) put(w *domain.Withdrawal) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.records = slices.DeleteFunc(r.records, func(rec domain.WithdrawalRecord) bool { return rec.ID == w.ID() })
	r.records = append(r.records, w.Record())
}

func (r *stagedWithdrawals) Get(_ context.Context, accountID, id string) (*domain.Withdrawal, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, rec := range r.records {
		if rec.ID == id && rec.AccountID == accountID {
			return domain.UnmarshalWithdrawalFromDatabase(rec), nil
		}
	}
	return nil, fmt.Errorf("withdrawal %s: %w", id, domain.ErrNotFound)
}

// ListByAccount answers an account's withdrawals in the order they were put.
func (r *stagedWithdrawals) ListByAccount(_ context.Context, accountID string, p ports.Page) ([]*domain.Withdrawal, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []*domain.Withdrawal
	for _, rec := range r.records {
		if rec.AccountID == accountID {
			out = append(out, domain.UnmarshalWithdrawalFromDatabase(rec))
		}
	}
	p = p.Clamped()
	from := min(len(out), (p.Number-1)*p.Size)
	return out[from:min(len(out), from+p.Size)], nil
}

// stagedLedger is a ledger as a test stages it: entries are numbered per ledger and carry the
// balance after them, as a store keeps them, but a test may record a posting twice, reach into
// entries to corrupt one, or set balances to override what Balance answers: states no store
// would write, which the audit must find. It answers the reads the audit makes, and keeps the
// payment claims a test stages; any other call panics.
type stagedLedger struct {
	ports.Ledger
	clock    ports.Clock // dates the entries
	mu       sync.Mutex
	entries  map[string][]domain.Entry // by account id, "" the service's own ledger
	claims   map[string]ports.PaymentClaim
	balances map[string]domain.LedgerBalance
}

func newStagedLedger(clock ports.Clock) *stagedLedger {
	return &stagedLedger{clock: clock, entries: map[string][]domain.Entry{}, claims: map[string]ports.PaymentClaim{},
		balances: map[string]domain.LedgerBalance{}}
}

// appendLocked numbers postings after the entries of their ledgers and stores them, all or
// none: a checked posting the available balance does not cover refuses them all. The caller
// holds l.mu.
func (l *stagedLedger) appendLocked(postings []domain.Posting) error {
	next := map[string][]domain.Entry{}
	for _, p := range postings {
		log, ok := next[p.AccountID]
		if !ok {
			log = slices.Clone(l.entries[p.AccountID])
		}
		var prev *domain.Entry
		if len(log) > 0 {
			prev = &log[len(log)-1]
		}
		e, err := domain.NextEntry(prev, p, l.clock.Now())
		if err != nil {
			return err
		}
		next[p.AccountID] = append(log, e)
	}
	for account, log := range next {
		l.entries[account] = log
	}
	return nil
}

// record stores postings as given, a duplicate id included, so that a test can stage the
// ledger it needs.
func (l *stagedLedger) record(t testing.TB, postings ...domain.Posting) {
	t.Helper()
	l.mu.Lock()
	err := l.appendLocked(postings)
	l.mu.Unlock()
	if err != nil {
		t.Fatalf("recording %d postings: %v", len(postings), err)
	}
}

func (l *stagedLedger) Balance(_ context.Context, accountID string) (domain.Balance, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	b, ok := l.balances[accountID]
	if log := l.entries[accountID]; !ok && len(log) > 0 {
		b = log[len(log)-1].BalanceAfter
	}
	return domain.Balance{Available: b.Available, Blocked: b.Blocked}, nil
}

func (l *stagedLedger) Scan(_ context.Context, accountID string, fn func(domain.Entry) error) error {
	l.mu.Lock()
	log := slices.Clone(l.entries[accountID])
	l.mu.Unlock()
	for _, e := range log {
		if err := fn(e); err != nil {
			return err
		}
	}
	return nil
}

func (l *stagedLedger) Ledgers(context.Context) ([]string, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	ids := []string{}
	for id, log := range l.entries {
		if len(log) > 0 {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return ids, nil
}

func (l *stagedLedger) ClaimPayment(_ context.Context, c ports.PaymentClaim) (ports.PaymentClaim, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if prior, ok := l.claims[c.EndToEndID]; ok {
		return prior, nil
	}
	l.claims[c.EndToEndID] = c
	return c, nil
}

func (l *stagedLedger) LatePayments(context.Context) ([]ports.PaymentClaim, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := []ports.PaymentClaim{}
	for _, c := range l.claims {
		if c.Late {
			out = append(out, c)
		}
	}
	slices.SortFunc(out, func(a, b ports.PaymentClaim) int {
		return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), cmp.Compare(a.EndToEndID, b.EndToEndID))
	})
	return out, nil
}
