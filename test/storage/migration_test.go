package storage_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	mdb "go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	pixmongo "github.com/pixgate/pixgate/adapters/mongo"
	"github.com/pixgate/pixgate/domain"
	"github.com/pixgate/pixgate/ports"
	"github.com/pixgate/pixgate/ports/storetest"
	"github.com/pixgate/pixgate/test/testdb"
)

// legacyTx and legacyWd describe resources as the version before the ledger stored them: no
// refunds (a refund was the whole amount paid, in the status only), no ledger fields, and
// withdrawals numbered by seq under a unique (accountId, seq) index.
type legacyTx struct {
	amount, paid, fee int64
	path              []string // the statuses entered, from PENDING
}

type legacyWd struct {
	amount, fee int64
	path        []string
}

// legacyData is one account's worth of every status the old version knew, and a second
// account whose old balance was negative (the old version did not stop that).
func legacyData() map[string]struct {
	txs []legacyTx
	wds []legacyWd
} {
	paid := []string{"PENDING", "PIX_QRCODE_GENERATED", "PAID"}
	with := func(p []string, more ...string) []string { return append(append([]string{}, p...), more...) }
	return map[string]struct {
		txs []legacyTx
		wds []legacyWd
	}{
		"a": {
			txs: []legacyTx{
				{700, 0, 0, []string{"PENDING", "PIX_QRCODE_GENERATED"}},
				{10000, 10000, 100, paid},
				{2000, 2000, 20, with(paid, "PROCESSING_REFUND", "PAID")}, // a refund that failed
				{3000, 3000, 30, with(paid, "BLOCKED")},
				{1000, 1000, 10, with(paid, "PROCESSING_REFUND")},
				{4000, 4000, 40, with(paid, "PROCESSING_REFUND", "REFUNDED")},
				{500, 500, 5, with(paid, "BLOCKED", "PROCESSING_INFRACTION")},
				{600, 600, 6, with(paid, "BLOCKED", "PROCESSING_INFRACTION", "INFRACTION")},
				{800, 0, 0, []string{"PENDING", "PIX_QRCODE_GENERATED", "FAILED"}},
				{1500, 1500, 15, with(paid, "BLOCKED", "PAID")}, // a dispute rejected
			},
			wds: []legacyWd{
				{1000, 10, []string{"PENDING"}},
				{2000, 0, []string{"PENDING", "PROCESSING"}},
				{500, 5, []string{"PENDING", "PROCESSING", "PROCESSED"}},
				{700, 0, []string{"PENDING", "PROCESSING", "FAILED"}},
				{300, 0, []string{"PENDING", "CANCELED"}},
				{400, 4, []string{"PENDING", "PROCESSING", "PROCESSED", "REFUNDED"}},
				{200, 0, []string{"PENDING", "PROCESSING", "REJECTED"}},
			},
		},
		"b": {
			txs: []legacyTx{{1000, 1000, 0, paid}},
			wds: []legacyWd{{1500, 0, []string{"PENDING", "PROCESSING", "PROCESSED"}}},
		},
	}
}

// oldBalance applies the balance rules of the version before the ledger.
func oldBalance(txs []legacyTx, wds []legacyWd) domain.Balance {
	var b domain.Balance
	for _, t := range txs {
		net := domain.Cents(t.paid - t.fee)
		switch t.path[len(t.path)-1] {
		case "PAID":
			b.Available += net
		case "BLOCKED", "PROCESSING_REFUND", "PROCESSING_INFRACTION":
			b.Blocked += net
		case "PIX_QRCODE_GENERATED":
			b.Pending += domain.Cents(t.amount)
		}
	}
	for _, w := range wds {
		switch w.path[len(w.path)-1] {
		case "PENDING", "PROCESSING", "PROCESSED":
			b.Available -= domain.Cents(w.amount + w.fee)
		}
	}
	return b
}

// writeLegacy writes the legacy data by hand into db, with the indexes the old version made
// that this one drops, and returns the account ids (by the data's names) and their old
// balances.
func writeLegacy(t *testing.T, ctx context.Context, db *mdb.Database) (map[string]string, map[string]domain.Balance) {
	t.Helper()
	for _, m := range []mdb.IndexModel{
		{Keys: bson.D{{Key: "accountId", Value: 1}, {Key: "seq", Value: -1}}, Options: options.Index().SetName("wd_account_seq").SetUnique(true)},
		{Keys: bson.D{{Key: "accountId", Value: 1}, {Key: "status", Value: 1}}, Options: options.Index().SetName("wd_account_status")},
	} {
		if _, err := db.Collection("withdrawals").Indexes().CreateOne(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	ids, balances := map[string]string{}, map[string]domain.Balance{}
	for name, data := range legacyData() {
		account := newID()
		ids[name], balances[name] = account, oldBalance(data.txs, data.wds)
		for i, spec := range data.txs {
			if _, err := db.Collection("transactions").InsertOne(ctx, legacyTxDoc(account, spec, base.Add(time.Duration(i)*time.Minute))); err != nil {
				t.Fatal(err)
			}
		}
		for i, spec := range data.wds {
			if _, err := db.Collection("withdrawals").InsertOne(ctx, legacyWdDoc(account, int64(i+1), spec, base.Add(time.Duration(i)*time.Minute))); err != nil {
				t.Fatal(err)
			}
		}
	}
	return ids, balances
}

func legacyHistory(path []string, at time.Time) bson.A {
	var h bson.A
	for i, s := range path {
		h = append(h, bson.D{{Key: "status", Value: s}, {Key: "date", Value: at.Add(time.Duration(i) * time.Second)}})
	}
	return h
}

// legacyTxDoc is a transaction document exactly as the old version wrote one.
func legacyTxDoc(account string, spec legacyTx, at time.Time) bson.D {
	id := newID()
	last := at.Add(time.Duration(len(spec.path)-1) * time.Second)
	status := spec.path[len(spec.path)-1]
	var amountPaid, fee, paymentDate, infractionDate any
	endToEnd, endToEndRefund := "", ""
	for i, s := range spec.path {
		switch s {
		case "PAID":
			if amountPaid == nil {
				amountPaid, fee, paymentDate, endToEnd = spec.paid, spec.fee, at.Add(time.Duration(i)*time.Second), "E"+id[:8]
			}
		case "BLOCKED":
			infractionDate = at.Add(time.Duration(i) * time.Second)
		case "REFUNDED", "INFRACTION":
			endToEndRefund = "D" + id[:8]
		}
	}
	return bson.D{
		{Key: "_id", Value: id}, {Key: "accountId", Value: account}, {Key: "acquirer", Value: "SANDBOX"},
		{Key: "idem", Value: "id:" + id}, {Key: "idemKey", Value: ""}, {Key: "idemFingerprint", Value: ""},
		{Key: "createdAt", Value: at}, {Key: "updatedAt", Value: last}, {Key: "status", Value: status},
		{Key: "history", Value: legacyHistory(spec.path, at)},
		{Key: "amount", Value: spec.amount}, {Key: "paymentMethod", Value: "PIX"}, {Key: "webhookUrl", Value: ""},
		{Key: "externalCode", Value: ""}, {Key: "customer", Value: nil}, {Key: "seller", Value: nil},
		{Key: "isInfoProduct", Value: true}, {Key: "address", Value: nil}, {Key: "items", Value: nil},
		{Key: "metadata", Value: ""}, {Key: "expirationSeconds", Value: 1800},
		{Key: "pix", Value: bson.D{{Key: "uri", Value: "000201" + id}, {Key: "qrCodePng", Value: []byte("png")},
			{Key: "expiresAt", Value: at.Add(30 * time.Minute)}}},
		{Key: "amountPaid", Value: amountPaid}, {Key: "paymentDate", Value: paymentDate},
		{Key: "infractionDate", Value: infractionDate}, {Key: "errorMessage", Value: ""},
		{Key: "endToEnd", Value: endToEnd}, {Key: "endToEndRefund", Value: endToEndRefund},
		{Key: "payer", Value: nil}, {Key: "receiver", Value: nil}, {Key: "feeAmount", Value: fee},
		{Key: "search", Value: bson.D{}}, {Key: "version", Value: int64(len(spec.path))}, {Key: "outboxRev", Value: int64(0)},
	}
}

// legacyWdDoc is a withdrawal document exactly as the old version wrote one, seq included.
func legacyWdDoc(account string, seq int64, spec legacyWd, at time.Time) bson.D {
	id := newID()
	status := spec.path[len(spec.path)-1]
	var withdrawn, processed any
	for i, s := range spec.path {
		if s == "PROCESSED" {
			withdrawn, processed = spec.amount, at.Add(time.Duration(i)*time.Second)
		}
	}
	return bson.D{
		{Key: "_id", Value: id}, {Key: "seq", Value: seq}, {Key: "accountId", Value: account}, {Key: "acquirer", Value: "SANDBOX"},
		{Key: "idem", Value: "id:" + id}, {Key: "idemKey", Value: ""}, {Key: "idemFingerprint", Value: ""},
		{Key: "createdAt", Value: at}, {Key: "updatedAt", Value: at.Add(time.Duration(len(spec.path)-1) * time.Second)},
		{Key: "status", Value: status}, {Key: "history", Value: legacyHistory(spec.path, at)},
		{Key: "amount", Value: spec.amount}, {Key: "fee", Value: spec.fee},
		{Key: "pixKey", Value: bson.D{{Key: "type", Value: "EVP"}, {Key: "key", Value: newID()}}},
		{Key: "externalCode", Value: ""}, {Key: "webhookUrl", Value: ""}, {Key: "payer", Value: nil}, {Key: "receiver", Value: nil},
		{Key: "amountWithdrawn", Value: withdrawn}, {Key: "processedDate", Value: processed},
		{Key: "errorMessage", Value: ""}, {Key: "endToEnd", Value: ""},
		{Key: "version", Value: int64(len(spec.path))}, {Key: "outboxRev", Value: int64(0)},
	}
}

// TestLedgerMigration opens the adapter on databases the version before the ledger wrote.
func TestLedgerMigration(t *testing.T) {
	t.Parallel()

	t.Run("the upgrade keeps every balance and gives every resource its entries, once", func(t *testing.T) {
		t.Parallel()
		srv := testdb.Shared(t)
		cfg := srv.Config(t)
		db := testdb.Client(t, srv).Database(cfg.Database)
		ctx := ctxTimeout(t, 3*time.Minute)
		ids, want := writeLegacy(t, ctx, db)

		s := testdb.OpenStore(t, srv, cfg)
		for name, account := range ids {
			if got, err := s.Ledger().Balance(ctx, account); err != nil || got != want[name] {
				t.Errorf("account %s: Balance = %+v, %v; want %+v, as before the upgrade", name, got, err, want[name])
			}
			assertResourcesHaveTheirEntries(t, s, account)
		}
		count := countEntries(t, ctx, db)

		testdb.OpenStore(t, srv, cfg) // a second instance, or a restart
		if n := countEntries(t, ctx, db); n != count {
			t.Errorf("a second Open: %d entries, want %d", n, count)
		}
		// Even with its markers gone, the migration finds every entry stored already.
		if _, err := db.Collection("migrations").DeleteMany(ctx, bson.D{}); err != nil {
			t.Fatal(err)
		}
		if m, err := s.MigrateLedger(ctx); err != nil || m.Entries != 0 {
			t.Errorf("MigrateLedger again = %+v, %v; want no entry", m, err)
		}
		for name, account := range ids {
			if got, _ := s.Ledger().Balance(ctx, account); got != want[name] {
				t.Errorf("account %s after a second migration: Balance = %+v, want %+v", name, got, want[name])
			}
		}
		if n := countEntries(t, ctx, db); n != count {
			t.Errorf("after a second migration: %d entries, want %d", n, count)
		}

		// The old sequence index is gone: new withdrawals, which have no seq, do not collide.
		specs, err := db.Collection("withdrawals").Indexes().ListSpecifications(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, spec := range specs {
			if spec.Name == "wd_account_seq" || spec.Name == "wd_account_status" {
				t.Errorf("index %s is still there", spec.Name)
			}
		}
		fresh := newID()
		if err := s.Transactions().Create(ctx, paidTransaction(t, fresh, 1000, base)); err != nil {
			t.Fatal(err)
		}
		for range 2 {
			if err := s.Withdrawals().Create(ctx, withdrawal(t, fresh, 100, 0)); err != nil {
				t.Errorf("a new withdrawal after the upgrade: %v", err)
			}
		}

		// A refund the old version left in progress completes under the new one.
		account := ids["a"]
		page, err := s.Transactions().List(ctx, ports.TransactionFilter{AccountID: account,
			Statuses: []domain.TransactionStatus{domain.TxProcessingRefund}}, ports.Page{Number: 1, Size: 10})
		if err != nil || len(page.Items) != 1 {
			t.Fatalf("the transaction in PROCESSING_REFUND: %d, %v", len(page.Items), err)
		}
		got, err := s.Transactions().Update(ctx, account, page.Items[0].ID(), func(tx *domain.Transaction) error {
			r, ok := tx.RefundInProgress()
			if !ok {
				return fmt.Errorf("no refund in progress in %+v", tx.Refunds())
			}
			return tx.ConfirmRefund(r.ID, "D9", base.Add(time.Hour))
		})
		if err != nil || got.Status() != domain.TxRefunded || got.AmountRefunded() != 1000 {
			t.Fatalf("confirming the legacy refund: %v", err)
		}
		if bal, _ := s.Ledger().Balance(ctx, account); bal.Blocked != want["a"].Blocked-1000 || bal.Available != want["a"].Available {
			t.Errorf("Balance = %+v after the refund, want its 1000 gone from the blocked balance", bal)
		}
		assertResourcesHaveTheirEntries(t, s, account)
	})

	t.Run("two instances upgrading one database at once agree", func(t *testing.T) {
		t.Parallel()
		srv := testdb.Shared(t)
		cfg := srv.Config(t)
		db := testdb.Client(t, srv).Database(cfg.Database)
		ctx := ctxTimeout(t, 3*time.Minute)
		ids, want := writeLegacy(t, ctx, db)

		stores := make([]*pixmongo.Store, 2)
		errs := make([]error, 2)
		var wg sync.WaitGroup
		for i := range stores {
			wg.Go(func() { stores[i], errs[i] = pixmongo.Open(ctx, cfg) })
		}
		wg.Wait()
		t.Cleanup(func() { testdb.DropDatabase(t, srv, cfg.Database) })
		for i, s := range stores {
			if errs[i] != nil {
				t.Fatalf("Open %d: %v", i, errs[i])
			}
			t.Cleanup(func() { _ = s.Close(context.Background()) })
		}
		for name, account := range ids {
			if got, err := stores[1].Ledger().Balance(ctx, account); err != nil || got != want[name] {
				t.Errorf("account %s: Balance = %+v, %v; want %+v", name, got, err, want[name])
			}
			assertResourcesHaveTheirEntries(t, stores[0], account)
		}
	})
}

func countEntries(t *testing.T, ctx context.Context, db *mdb.Database) int64 {
	t.Helper()
	n, err := db.Collection("ledger").CountDocuments(ctx, bson.D{})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// assertResourcesHaveTheirEntries checks the account's ledger against the histories of its
// transactions and withdrawals, as the conformance suite does.
func assertResourcesHaveTheirEntries(t *testing.T, s *pixmongo.Store, account string) {
	t.Helper()
	storetest.AssertLedgerMatchesHistories(t, storetest.Stores{Transactions: s.Transactions(),
		Withdrawals: s.Withdrawals(), Outbox: s.Outbox(), Ledger: s.Ledger()}, account)
}

// TestLegacyAccountsKeepReadingTheBalance stores accounts as the version before balance:read
// wrote them (no scopeSet): one that could read the balance then (transaction:read) gets
// balance:read on read, one that could not does not, and a rewrite keeps the upgrade.
func TestLegacyAccountsKeepReadingTheBalance(t *testing.T) {
	t.Parallel()
	srv := testdb.Shared(t)
	cfg := srv.Config(t)
	db := testdb.Client(t, srv).Database(cfg.Database)
	ctx := ctxTimeout(t, time.Minute)
	s := testdb.OpenStore(t, srv, cfg)
	reader, writer := newID(), newID()
	for id, scopes := range map[string]bson.A{
		reader: {"transaction:read", "transaction:write", "withdrawal:read", "withdrawal:write"},
		writer: {"withdrawal:write"},
	} {
		doc := bson.D{{Key: "_id", Value: id}, {Key: "name", Value: "legacy " + id}, {Key: "status", Value: "active"},
			{Key: "scopes", Value: scopes}, {Key: "webhook", Value: bson.D{{Key: "current", Value: "whsec_" + id}}},
			{Key: "createdAt", Value: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}, {Key: "version", Value: int64(1)}}
		if _, err := db.Collection("accounts").InsertOne(ctx, doc); err != nil {
			t.Fatal(err)
		}
	}
	a, err := s.Accounts().GetAccount(ctx, reader)
	if err != nil || !a.HasScope(domain.ScopeBalanceRead) || !a.HasScope(domain.ScopeWithdrawalWrite) {
		t.Fatalf("the legacy reader: %v, %v; want balance:read added to its scopes", a.Scopes(), err)
	}
	w, err := s.Accounts().GetAccount(ctx, writer)
	if err != nil || w.HasScope(domain.ScopeBalanceRead) {
		t.Fatalf("the legacy writer: %v, %v; want no balance:read", w.Scopes(), err)
	}
	if err := s.Accounts().UpdateAccount(ctx, reader, func(a *domain.Account) error { return nil }); err != nil {
		t.Fatal(err)
	}
	var stored struct {
		Scopes   []string `bson:"scopes"`
		ScopeSet int      `bson:"scopeSet"`
	}
	if err := db.Collection("accounts").FindOne(ctx, bson.D{{Key: "_id", Value: reader}}).Decode(&stored); err != nil {
		t.Fatal(err)
	}
	if stored.ScopeSet == 0 || !slices.Contains(stored.Scopes, "balance:read") {
		t.Fatalf("after a rewrite the document holds %+v, want the upgraded scopes and the scope set", stored)
	}
}

// TestLegacyAccountsKeepManagingThemselves stores accounts as the versions before account:admin
// wrote them (scopeSet missing or 1): every token could then manage credentials and the webhook
// secret, so every such account gets account:admin on read and keeps it once rewritten. An
// account written under the current revision without account:admin stays without it.
func TestLegacyAccountsKeepManagingThemselves(t *testing.T) {
	t.Parallel()
	srv := testdb.Shared(t)
	cfg := srv.Config(t)
	db := testdb.Client(t, srv).Database(cfg.Database)
	ctx := ctxTimeout(t, time.Minute)
	s := testdb.OpenStore(t, srv, cfg)
	beforeBalance, beforeAdmin, current := newID(), newID(), newID()
	for _, legacy := range []struct {
		id       string
		scopeSet any // nil: the field is absent, as the first version wrote it
		scopes   bson.A
	}{
		{beforeBalance, nil, bson.A{"transaction:read"}},
		{beforeAdmin, 1, bson.A{"withdrawal:write", "balance:read"}},
		{current, 2, bson.A{"balance:read"}},
	} {
		doc := bson.D{{Key: "_id", Value: legacy.id}, {Key: "name", Value: "legacy " + legacy.id}, {Key: "status", Value: "active"},
			{Key: "scopes", Value: legacy.scopes}, {Key: "webhook", Value: bson.D{{Key: "current", Value: "whsec_" + legacy.id}}},
			{Key: "createdAt", Value: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}, {Key: "version", Value: int64(1)}}
		if legacy.scopeSet != nil {
			doc = append(doc, bson.E{Key: "scopeSet", Value: legacy.scopeSet})
		}
		if _, err := db.Collection("accounts").InsertOne(ctx, doc); err != nil {
			t.Fatal(err)
		}
	}
	for id, want := range map[string][]domain.Scope{
		beforeBalance: {domain.ScopeTransactionRead, domain.ScopeBalanceRead, domain.ScopeAccountAdmin},
		beforeAdmin:   {domain.ScopeWithdrawalWrite, domain.ScopeBalanceRead, domain.ScopeAccountAdmin},
		current:       {domain.ScopeBalanceRead},
	} {
		a, err := s.Accounts().GetAccount(ctx, id)
		if err != nil || !slices.Equal(a.Scopes(), want) {
			t.Fatalf("account %s reads back with %v, %v; want %v", id, a.Scopes(), err, want)
		}
	}
	if err := s.Accounts().UpdateAccount(ctx, beforeAdmin, func(a *domain.Account) error { return nil }); err != nil {
		t.Fatal(err)
	}
	var stored struct {
		Scopes   []string `bson:"scopes"`
		ScopeSet int      `bson:"scopeSet"`
	}
	if err := db.Collection("accounts").FindOne(ctx, bson.D{{Key: "_id", Value: beforeAdmin}}).Decode(&stored); err != nil {
		t.Fatal(err)
	}
	if stored.ScopeSet != domain.ScopesCurrent || !slices.Contains(stored.Scopes, "account:admin") {
		t.Fatalf("after a rewrite the document holds %+v, want account:admin and scope set %d", stored, domain.ScopesCurrent)
	}
}

// TestPayoutsMigration opens the adapter on a database written before the payout outbox: the
// withdrawals still PENDING or PROCESSING become due at their last change, so that the outbox
// finds them through its index, and no other.
func TestPayoutsMigration(t *testing.T) {
	t.Parallel()
	srv := testdb.Shared(t)
	cfg := srv.Config(t)
	db := testdb.Client(t, srv).Database(cfg.Database)
	ctx := ctxTimeout(t, 3*time.Minute)
	writeLegacy(t, ctx, db)
	var live []string
	cur, err := db.Collection("withdrawals").Find(ctx, bson.D{{Key: "status", Value: bson.D{{Key: "$in", Value: bson.A{"PENDING", "PROCESSING"}}}}})
	if err != nil {
		t.Fatal(err)
	}
	var docs []struct {
		ID string `bson:"_id"`
	}
	if err := cur.All(ctx, &docs); err != nil {
		t.Fatal(err)
	}
	for _, d := range docs {
		live = append(live, d.ID)
	}

	s := testdb.OpenStore(t, srv, cfg)
	due, err := s.Withdrawals().ListPayoutsDue(ctx, base.Add(time.Hour), 100)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, w := range due {
		got = append(got, w.ID())
		if !w.PayoutDue().Equal(w.UpdatedAt()) || w.PayoutClaims() != 0 {
			t.Errorf("%s: due %v with %d claims, want due at its last change %v, unclaimed", w.ID(), w.PayoutDue(), w.PayoutClaims(), w.UpdatedAt())
		}
	}
	slices.Sort(got)
	slices.Sort(live)
	if len(live) == 0 || !slices.Equal(got, live) {
		t.Fatalf("due after the upgrade %v, want the live withdrawals %v", got, live)
	}
	// A second instance, or a restart, schedules nothing again.
	if n, err := testdb.OpenStore(t, srv, cfg).MigratePayouts(ctx); err != nil || n != 0 {
		t.Fatalf("MigratePayouts again = %d, %v; want 0", n, err)
	}
}
