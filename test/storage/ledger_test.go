package storage_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	mdb "go.mongodb.org/mongo-driver/v2/mongo"

	pixmongo "github.com/pixgate/pixgate/adapters/mongo"
	"github.com/pixgate/pixgate/domain"
	"github.com/pixgate/pixgate/ports"
	"github.com/pixgate/pixgate/test/testdb"
)

// These suites check what the conformance suite cannot: the ledger between two instances (two
// Stores on one database, nothing shared but the server), what Recover does after a crash
// between the two writes of a change, and the migration of a database the version before the
// ledger wrote. They run on FerretDB, whose unique indexes are atomic between clients and whose
// conditional updates are not: the ledger relies on the former only.

// TestLedgerAcrossInstances races debits of one account through two instances.
func TestLedgerAcrossInstances(t *testing.T) {
	t.Parallel()

	t.Run("fifty withdrawals and refunds racing through two instances never overdraw", func(t *testing.T) {
		t.Parallel()
		a, b, db := instancesWithDB(t)
		ctx := ctxTimeout(t, 4*time.Minute)
		account := newID()
		const n = 25
		txs := make([]*domain.Transaction, n)
		for i := range txs {
			txs[i] = paidTransaction(t, account, 400, base.Add(time.Duration(i)*time.Second))
			if err := a.Transactions().Create(ctx, txs[i]); err != nil {
				t.Fatal(err)
			}
		}
		const funds = 400 * n // 10000; the debits below ask for 17500
		ws := make([]*domain.Withdrawal, n)
		debits := make([]string, n) // the withdrawals' entries (Create forgets its postings once stored)
		for i := range ws {
			ws[i] = withdrawal(t, account, 290, 10)
			debits[i] = ws[i].Postings()[0].ID
		}
		errs := make([]error, 2*n)
		var start, done sync.WaitGroup
		start.Add(1)
		for i := range 2 * n {
			store := []*pixmongo.Store{a, b}[i%2]
			done.Go(func() {
				start.Wait()
				if i < n {
					errs[i] = store.Withdrawals().Create(ctx, ws[i])
					return
				}
				_, errs[i] = store.Transactions().Update(ctx, account, txs[i-n].ID(), func(tx *domain.Transaction) error {
					return tx.RequestRefund(domain.RefundRequest{ID: fmt.Sprintf("R%d", i)}, base.Add(time.Hour))
				})
			})
		}
		start.Done()
		done.Wait()

		var spent domain.Cents
		accepted := 0
		for i, err := range errs {
			switch {
			case err == nil && i < n:
				spent += 300
				accepted++
			case err == nil:
				spent += 400
				accepted++
			case !errors.Is(err, domain.ErrInsufficientBalance):
				t.Errorf("debit %d: %v, want nil or ErrInsufficientBalance", i, err)
			}
		}
		t.Logf("%d of %d debits accepted, %d of %d cents spent", accepted, 2*n, spent, funds)
		for _, s := range []*pixmongo.Store{a, b} {
			bal, err := s.Ledger().Balance(ctx, account)
			if err != nil || bal.Available < 0 || bal.Available != funds-spent || bal.Blocked != spent-300*domain.Cents(countNil(errs[:n])) {
				t.Errorf("Balance = %+v, %v; want %d available (never below 0) and the refunds blocked", bal, err, funds-spent)
			}
		}
		entries := assertChain(t, a, account)
		if got := entries[len(entries)-1].BalanceAfter.Available; got != funds-spent {
			t.Errorf("the last entry leaves %d available, want %d", got, funds-spent)
		}
		// Each accepted debit has its entry and its resource; each refused one has neither.
		byID := map[string]domain.Entry{}
		for _, e := range entries {
			byID[e.ID] = e
		}
		for i, w := range ws {
			_, posted := byID[debits[i]]
			_, stored := a.Withdrawals().Get(ctx, account, w.ID())
			if want := errs[i] == nil; posted != want || (stored == nil) != want {
				t.Errorf("withdrawal %d (%v): entry %v, document %v; want both %v", i, errs[i], posted, stored == nil, want)
			}
		}
		for i, tx := range txs {
			got, err := a.Transactions().Get(ctx, account, tx.ID())
			if err != nil {
				t.Fatal(err)
			}
			_, posted := byID[domain.RefundPostingID(tx.ID(), fmt.Sprintf("R%d", i+n), domain.MoveRefundHold)]
			want := errs[i+n] == nil
			if posted != want || (got.Status() == domain.TxProcessingRefund) != want || (len(got.Refunds()) == 1) != want {
				t.Errorf("refund %d (%v): entry %v, status %s, %d refunds", i, errs[i+n], posted, got.Status(), len(got.Refunds()))
			}
		}
		assertNothingLeftHalfDone(t, db, ctx)
	})

	t.Run("twin withdrawals with one idempotency key through two instances debit once", func(t *testing.T) {
		t.Parallel()
		a, b, db := instancesWithDB(t)
		ctx := ctxTimeout(t, 2*time.Minute)
		account := newID()
		if err := a.Transactions().Create(ctx, paidTransaction(t, account, 1000, base)); err != nil {
			t.Fatal(err)
		}
		const twins = 8
		errs := make([]error, twins)
		var wg sync.WaitGroup
		for i := range twins {
			store := []*pixmongo.Store{a, b}[i%2]
			key, _ := domain.NewPixKey(domain.PixKeyEVP, newID())
			w, err := domain.NewWithdrawal(newID(), account, "SANDBOX", domain.Payout{Amount: 100, PixKey: key},
				domain.Idempotency{Key: "same-key", Fingerprint: "f"}, base)
			if err != nil {
				t.Fatal(err)
			}
			wg.Go(func() { errs[i] = store.Withdrawals().Create(ctx, w) })
		}
		wg.Wait()
		if countNil(errs) != 1 {
			t.Errorf("%d of %d twins stored (%v), want 1", countNil(errs), twins, errs)
		}
		for _, err := range errs {
			if err != nil && !errors.Is(err, ports.ErrDuplicate) {
				t.Errorf("a twin: %v, want ErrDuplicate", err)
			}
		}
		if bal, err := b.Ledger().Balance(ctx, account); err != nil || bal.Available != 900 {
			t.Errorf("Balance = %+v, %v; want 900: one debit, the losers' given back", bal, err)
		}
		assertChain(t, a, account)
		assertNothingLeftHalfDone(t, db, ctx)
	})

	t.Run("a payment's end-to-end id claimed through two instances at once has one winner", func(t *testing.T) {
		t.Parallel()
		a, b := twoInstances(t, nil)
		ctx := ctxTimeout(t, time.Minute)
		e2e := "E" + newID()[:31]
		const claims = 16
		got := make([]ports.PaymentClaim, claims)
		var wg sync.WaitGroup
		for i := range claims {
			store := []*pixmongo.Store{a, b}[i%2]
			wg.Go(func() {
				c, err := store.Ledger().ClaimPayment(ctx, ports.PaymentClaim{EndToEndID: e2e, TransactionID: fmt.Sprint("tx-", i),
					AccountID: "acc", Amount: 100, CreatedAt: base})
				if err != nil {
					t.Errorf("ClaimPayment: %v", err)
				}
				got[i] = c
			})
		}
		wg.Wait()
		winners := map[string]bool{}
		for _, c := range got {
			winners[c.TransactionID] = true
			if c.EndToEndID != e2e || !c.CreatedAt.Equal(base) || c.Amount != 100 {
				t.Errorf("claim = %+v", c)
			}
		}
		if len(winners) != 1 {
			t.Errorf("the claims answered %d winners (%v), want 1", len(winners), winners)
		}
	})
}

// TestLedgerRecovery simulates a crash between the two writes of a change by writing one of
// them by hand, and lets Recover finish. Recover acts on what is older than RecoverAfter, so a
// third instance looks at the database an hour later (its clock runs ahead); the instances with
// the real clock find nothing old enough.
func TestLedgerRecovery(t *testing.T) {
	t.Parallel()

	open := func(t *testing.T) (now, later *pixmongo.Store, db *mdb.Database) {
		srv := testdb.Shared(t)
		cfg := srv.Config(t)
		now = testdb.OpenStore(t, srv, cfg)
		cfg.Clock = laterClock{time.Hour}
		later = testdb.OpenStore(t, srv, cfg)
		return now, later, testdb.Client(t, srv).Database(cfg.Database)
	}

	t.Run("a status change stored without its entries gets them from Recover, once", func(t *testing.T) {
		t.Parallel()
		now, later, db := open(t)
		ctx := ctxTimeout(t, 2*time.Minute)
		tx := payWithoutPosting(t, now, db, ctx)
		if bal, _ := now.Ledger().Balance(ctx, tx.AccountID()); bal.Available != 0 {
			t.Fatalf("Balance = %+v before Recover, want nothing posted", bal)
		}
		if n, err := now.Ledger().Recover(ctx); err != nil || n != 0 {
			t.Errorf("Recover right away = %d, %v; want nothing: the change is younger than RecoverAfter", n, err)
		}
		if n, err := later.Ledger().Recover(ctx); err != nil || n != 2 {
			t.Errorf("Recover = %d, %v; want the payment and its fee", n, err)
		}
		if n, err := later.Ledger().Recover(ctx); err != nil || n != 0 {
			t.Errorf("Recover again = %d, %v; want nothing", n, err)
		}
		if bal, err := now.Ledger().Balance(ctx, tx.AccountID()); err != nil || bal.Available != 970 {
			t.Errorf("Balance = %+v, %v; want 970 (1000 paid, 30 fee)", bal, err)
		}
		assertMatchesHistory(t, now, tx.AccountID(), tx.ID())
		assertNothingLeftHalfDone(t, db, ctx)
	})

	t.Run("the next change of a document finishes what an interrupted one left", func(t *testing.T) {
		t.Parallel()
		now, later, db := open(t)
		ctx := ctxTimeout(t, 2*time.Minute)
		tx := payWithoutPosting(t, now, db, ctx)
		if _, err := now.Transactions().Update(ctx, tx.AccountID(), tx.ID(), func(tx *domain.Transaction) error {
			return tx.OpenDispute(base.Add(time.Hour))
		}); err != nil {
			t.Fatal(err)
		}
		if bal, err := now.Ledger().Balance(ctx, tx.AccountID()); err != nil || bal != (domain.Balance{Available: -30, Blocked: 1000}) {
			t.Errorf("Balance = %+v, %v; want the payment, its fee and the dispute's hold", bal, err)
		}
		if n, err := later.Ledger().Recover(ctx); err != nil || n != 0 {
			t.Errorf("Recover = %d, %v; want nothing left to do", n, err)
		}
		assertMatchesHistory(t, now, tx.AccountID(), tx.ID())
	})

	t.Run("a payment the version before journals stored alone gets its fee from Recover, in a journal of its own", func(t *testing.T) {
		t.Parallel()
		now, later, db := open(t)
		ctx := ctxTimeout(t, 2*time.Minute)
		tx := payWithoutPosting(t, now, db, ctx)
		// That version posted the payment as a document of its own, then crashed before the fee.
		insertEntry(t, now, db, ctx, tx.Postings()[0], false)
		if bal, _ := now.Ledger().Balance(ctx, tx.AccountID()); bal.Available != 1000 {
			t.Fatalf("Balance = %+v before Recover, want the payment alone", bal)
		}
		if n, err := later.Ledger().Recover(ctx); err != nil || n != 1 {
			t.Errorf("Recover = %d, %v; want the fee alone", n, err)
		}
		if bal, err := now.Ledger().Balance(ctx, tx.AccountID()); err != nil || bal.Available != 970 {
			t.Errorf("Balance = %+v, %v; want 970 (1000 paid, 30 fee)", bal, err)
		}
		if n, err := db.Collection("ledger").CountDocuments(ctx, bson.D{{Key: "accountId", Value: tx.AccountID()}}); err != nil || n != 2 {
			t.Errorf("%d ledger documents, %v; want the payment's and the fee's", n, err)
		}
		assertMatchesHistory(t, now, tx.AccountID(), tx.ID())
		assertNothingLeftHalfDone(t, db, ctx)
	})

	t.Run("checked entries whose change was never stored are given back, the others kept", func(t *testing.T) {
		t.Parallel()
		now, later, db := open(t)
		ctx := ctxTimeout(t, 2*time.Minute)
		account := newID()
		paid := paidTransaction(t, account, 1000, base)
		if err := now.Transactions().Create(ctx, paid); err != nil {
			t.Fatal(err)
		}
		// A withdrawal whose entry was posted and whose document never was.
		lost := withdrawal(t, account, 100, 5)
		insertOpenEntry(t, now, db, ctx, lost.Postings()[0])
		// A refund whose hold was posted and whose transaction never recorded it.
		hold := domain.Posting{ID: domain.RefundPostingID(paid.ID(), "LOST", domain.MoveRefundHold), Type: domain.MoveRefundHold,
			AccountID: account, Resource: domain.ResourceTransaction, ResourceID: paid.ID(),
			Debit: domain.LedgerAvailable, Credit: domain.LedgerBlocked, Amount: 200, Checked: true}
		insertOpenEntry(t, now, db, ctx, hold)
		// A withdrawal stored in full whose entry kept its open mark (the confirmation was lost).
		kept := withdrawal(t, account, 300, 0)
		keptDebit := kept.Postings()[0].ID
		if err := now.Withdrawals().Create(ctx, kept); err != nil {
			t.Fatal(err)
		}
		if _, err := db.Collection("ledger").UpdateOne(ctx, bson.D{{Key: "_id", Value: keptDebit}},
			bson.D{{Key: "$set", Value: bson.D{{Key: "open", Value: time.Now().UTC()}}}}); err != nil {
			t.Fatal(err)
		}
		if bal, _ := now.Ledger().Balance(ctx, account); bal != (domain.Balance{Available: 1000 - 105 - 200 - 300, Blocked: 200}) {
			t.Fatalf("Balance = %+v before Recover", bal)
		}
		if n, err := now.Ledger().Recover(ctx); err != nil || n != 0 {
			t.Errorf("Recover right away = %d, %v; want nothing: the calls may still be running", n, err)
		}
		if n, err := later.Ledger().Recover(ctx); err != nil || n != 2 {
			t.Errorf("Recover = %d, %v; want two entries given back", n, err)
		}
		if n, err := later.Ledger().Recover(ctx); err != nil || n != 0 {
			t.Errorf("Recover again = %d, %v; want nothing", n, err)
		}
		if bal, err := now.Ledger().Balance(ctx, account); err != nil || bal != (domain.Balance{Available: 700}) {
			t.Errorf("Balance = %+v, %v; want 700: the stored withdrawal's debit only", bal, err)
		}
		entries := assertChain(t, now, account)
		byID := map[string]domain.Entry{}
		for _, e := range entries {
			byID[e.ID] = e
		}
		for _, c := range []struct {
			id   string
			kind domain.MovementType
		}{
			{domain.VoidPostingID(lost.Postings()[0].ID), domain.MoveWithdrawalReversal},
			{domain.VoidPostingID(hold.ID), domain.MoveRefundRelease},
		} {
			if e, ok := byID[c.id]; !ok || e.Type != c.kind {
				t.Errorf("entry %s = %+v, want a %s", c.id, e, c.kind)
			}
		}
		if _, ok := byID[domain.VoidPostingID(keptDebit)]; ok {
			t.Errorf("the stored withdrawal's debit was given back")
		}
		assertNothingLeftHalfDone(t, db, ctx)
	})

	t.Run("Open refuses a RecoverAfter within the operation timeout", func(t *testing.T) {
		t.Parallel()
		srv := testdb.Shared(t)
		cfg := srv.Config(t)
		cfg.RecoverAfter = cfg.OpTimeout
		if s, err := pixmongo.Open(ctxTimeout(t, time.Minute), cfg); err == nil {
			_ = s.Close(context.Background())
			t.Error("Open accepted a RecoverAfter equal to OpTimeout")
		}
	})
}

// payWithoutPosting stores a transaction awaiting payment, then writes its payment by hand as
// Update would, with the payment's postings pending in the document, and stops there: a
// crash right after the status change's write. The transaction pays 1000 with a fee of 30.
func payWithoutPosting(t *testing.T, s *pixmongo.Store, db *mdb.Database, ctx context.Context) *domain.Transaction {
	t.Helper()
	account := newID()
	tx, err := domain.NewTransaction(newID(), newPaymentToken(), account, "SANDBOX", domain.Order{Amount: 1000, PaymentMethod: domain.PaymentPIX,
		IsInfoProduct: true, ExpirationSeconds: domain.DefaultExpirationSeconds}, domain.Idempotency{}, base)
	if err != nil {
		t.Fatal(err)
	}
	if err := tx.AttachPix(domain.PixResponse{URI: "000201", ExpiresAt: base.Add(time.Hour)}, base.Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	if err := s.Transactions().Create(ctx, tx); err != nil {
		t.Fatal(err)
	}
	paidAt := base.Add(time.Minute)
	if err := tx.Pay(domain.Payment{AmountPaid: 1000, Fee: 30, PaidAt: paidAt, EndToEnd: "E1"}, paidAt); err != nil {
		t.Fatal(err)
	}
	var history, pending bson.A
	for _, h := range tx.History() {
		history = append(history, bson.D{{Key: "status", Value: string(h.Status)}, {Key: "date", Value: h.Date}})
	}
	for _, p := range tx.Postings() {
		pending = append(pending, bson.D{{Key: "id", Value: p.ID}, {Key: "type", Value: string(p.Type)},
			{Key: "accountId", Value: p.AccountID}, {Key: "resource", Value: string(p.Resource)}, {Key: "resourceId", Value: p.ResourceID},
			{Key: "debit", Value: string(p.Debit)}, {Key: "credit", Value: string(p.Credit)}, {Key: "amount", Value: int64(p.Amount)},
			{Key: "at", Value: time.Now().UTC()}})
	}
	res, err := db.Collection("transactions").UpdateOne(ctx, bson.D{{Key: "_id", Value: tx.ID()}, {Key: "version", Value: int64(1)}},
		bson.D{{Key: "$set", Value: bson.D{
			{Key: "status", Value: "PAID"}, {Key: "history", Value: history}, {Key: "updatedAt", Value: paidAt},
			{Key: "amountPaid", Value: int64(1000)}, {Key: "feeAmount", Value: int64(30)}, {Key: "paymentDate", Value: paidAt},
			{Key: "endToEnd", Value: "E1"}, {Key: "version", Value: int64(2)},
			{Key: "ledgerPending", Value: pending}, {Key: "ledgerDue", Value: time.Now().UTC()},
		}}})
	if err != nil || res.MatchedCount != 1 {
		t.Fatalf("write the payment by hand: %v, %d matched", err, res.MatchedCount)
	}
	return tx
}

// insertOpenEntry posts p by hand as the adapter's first write of a checked change does
// (numbered after the ledger's head, marked open) and stops there: a crash before the
// resource's write.
func insertOpenEntry(t *testing.T, s *pixmongo.Store, db *mdb.Database, ctx context.Context, p domain.Posting) {
	t.Helper()
	insertEntry(t, s, db, ctx, p, true)
}

// insertEntry posts p by hand as a document of its own, numbered after the ledger's head, in
// the shape of the version before journals (open: marked open, as a checked posting is).
func insertEntry(t *testing.T, s *pixmongo.Store, db *mdb.Database, ctx context.Context, p domain.Posting, open bool) {
	t.Helper()
	var head *domain.Entry
	if es, err := s.Ledger().Entries(ctx, ports.EntryFilter{AccountID: p.AccountID}, 1); err != nil {
		t.Fatal(err)
	} else if len(es) == 1 {
		head = &es[0]
	}
	e, err := domain.NextEntry(head, p, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	doc := bson.D{
		{Key: "_id", Value: e.ID}, {Key: "accountId", Value: e.AccountID}, {Key: "seq", Value: e.Seq},
		{Key: "type", Value: string(e.Type)}, {Key: "resource", Value: string(e.Resource)}, {Key: "resourceId", Value: e.ResourceID},
		{Key: "debit", Value: string(e.Debit)}, {Key: "credit", Value: string(e.Credit)}, {Key: "amount", Value: int64(e.Amount)},
		{Key: "checked", Value: e.Checked}, {Key: "at", Value: e.At}, {Key: "createdAt", Value: e.CreatedAt},
		{Key: "after", Value: bson.D{{Key: "available", Value: int64(e.BalanceAfter.Available)}, {Key: "blocked", Value: int64(e.BalanceAfter.Blocked)}}},
	}
	if open {
		doc = append(doc, bson.E{Key: "open", Value: time.Now().UTC()})
	}
	_, err = db.Collection("ledger").InsertOne(ctx, doc)
	if err != nil {
		t.Fatal(err)
	}
}

// laterClock is the system clock moved by d.
type laterClock struct{ d time.Duration }

func (c laterClock) Now() time.Time { return time.Now().Add(c.d) }

func countNil(errs []error) int {
	n := 0
	for _, err := range errs {
		if err == nil {
			n++
		}
	}
	return n
}

// assertChain reads the account's ledger and checks it: numbers dense from 1, every balance
// following from the one before, no checked entry leaving the available balance below zero.
func assertChain(t *testing.T, s *pixmongo.Store, account string) []domain.Entry {
	t.Helper()
	var entries []domain.Entry
	if err := s.Ledger().Scan(context.Background(), account, func(e domain.Entry) error {
		entries = append(entries, e)
		return nil
	}); err != nil {
		t.Fatalf("Scan: %v", err)
	}
	var run domain.LedgerBalance
	for i, e := range entries {
		d := e.Delta()
		run = domain.LedgerBalance{Available: run.Available + d.Available, Blocked: run.Blocked + d.Blocked}
		if e.Seq != int64(i+1) || e.BalanceAfter != run {
			t.Fatalf("entry %d (%s): number %d, after %+v; want number %d, after %+v", i, e.ID, e.Seq, e.BalanceAfter, i+1, run)
		}
		if e.Checked && run.Available < 0 {
			t.Errorf("checked entry %s leaves %d available", e.ID, run.Available)
		}
		if i > 0 && e.CreatedAt.Before(entries[i-1].CreatedAt) {
			t.Errorf("entry %d is dated before entry %d", e.Seq, e.Seq-1)
		}
	}
	if len(entries) == 0 {
		t.Fatalf("the ledger of %s is empty", account)
	}
	return entries
}

// assertMatchesHistory checks that the account's ledger holds exactly the entries the
// transaction's history implies.
func assertMatchesHistory(t *testing.T, s *pixmongo.Store, account, txID string) {
	t.Helper()
	ctx := context.Background()
	tx, err := s.Transactions().Get(ctx, account, txID)
	if err != nil {
		t.Fatal(err)
	}
	stored := map[string]domain.Entry{}
	for _, e := range assertChain(t, s, account) {
		stored[e.ID] = e
	}
	for _, p := range domain.ImpliedTransactionPostings(tx.Record()) {
		e, ok := stored[p.ID]
		if !ok {
			t.Errorf("entry %s is missing", p.ID)
			continue
		}
		if same, why := domain.SamePosting(e.Posting, p); !same {
			t.Errorf("entry %s: %s", p.ID, why)
		}
		delete(stored, p.ID)
	}
	for id := range stored {
		t.Errorf("entry %s has no status change behind it", id)
	}
}

// assertNothingLeftHalfDone checks that no document holds pending postings and no entry is
// open: every change of the test finished both its writes.
func assertNothingLeftHalfDone(t *testing.T, db *mdb.Database, ctx context.Context) {
	t.Helper()
	for coll, filter := range map[string]bson.D{
		"transactions": {{Key: "ledgerPending", Value: bson.D{{Key: "$exists", Value: true}}}},
		"withdrawals":  {{Key: "ledgerPending", Value: bson.D{{Key: "$exists", Value: true}}}},
		"ledger":       {{Key: "open", Value: bson.D{{Key: "$exists", Value: true}}}},
	} {
		if n, err := db.Collection(coll).CountDocuments(ctx, filter); err != nil || n != 0 {
			t.Errorf("%d documents of %s match %v (%v), want none", n, coll, filter, err)
		}
	}
}

// instancesWithDB is twoInstances, and the database for looking behind their back.
func instancesWithDB(t *testing.T) (a, b *pixmongo.Store, db *mdb.Database) {
	srv := testdb.Shared(t)
	cfg := srv.Config(t)
	return testdb.OpenStore(t, srv, cfg), testdb.OpenStore(t, srv, cfg), testdb.Client(t, srv).Database(cfg.Database)
}
