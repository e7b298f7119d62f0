package mongo

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	mdb "go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/pixgate/pixgate/domain"
)

// The ledger migration. The version before the ledger kept no entries: it derived a balance
// from the statuses of an account's transactions and withdrawals every time it was asked. A
// database it wrote has resources and no ledger. MigrateLedger gives every account found in
// it the entries its resources' histories imply, and one opening balance per side that brings
// the ledger to the balance the old rules showed, so that GET /balance reads the same before
// and after the upgrade.
//
// It runs once per database and is safe to run again, or from several instances at once:
//
//   - implied entries have deterministic ids (the domain's), so posting them twice stores
//     them once;
//   - the opening balance of an account is decided once, by a marker document whose unique _id
//     ("ledger/<account>") lets the first instance's figures win; every instance then posts
//     those figures, under ids of their own ("opening/<account>/<side>"), so once;
//   - a marker is done only after its opening balance is posted, and a marker "ledger" records
//     that every account was migrated: later starts read that one document and stop.
//
// The old version must not run beside this one: its status changes would post nothing.

// collMigrations holds the migration markers.
const collMigrations = "migrations"

// ledgerMigrated is the marker of a database whose accounts all have their ledgers.
const ledgerMigrated = "ledger"

// LedgerMigration reports what one run of MigrateLedger did.
type LedgerMigration struct {
	Accounts int // accounts whose opening balance this run decided or finished
	Entries  int // entries this run stored
}

// migrationDoc is the marker of one account's migration: the balance its resources imply
// (have) and the one the old rules gave (want), decided once, and whether the opening balance
// that reconciles them is posted.
type migrationDoc struct {
	ID        string     `bson:"_id"`
	Have      balanceDoc `bson:"have"`
	Want      balanceDoc `bson:"want"`
	Done      bool       `bson:"done"`
	CreatedAt time.Time  `bson:"createdAt"`
}

// MigrateLedger brings a database written before the ledger to it (see above). Open runs it;
// running it again changes nothing. It is bounded by ctx only (a large database takes a
// while), each of its calls by Config.OpTimeout.
func (s *Store) MigrateLedger(ctx context.Context) (LedgerMigration, error) {
	var out LedgerMigration
	l := s.ledger
	done, err := l.marker(ctx, ledgerMigrated)
	if err != nil || done != nil {
		return out, err
	}
	accounts, err := s.legacyAccounts(ctx)
	if err != nil {
		return out, err
	}
	for _, account := range accounts {
		k, decided, err := l.migrateAccount(ctx, account)
		out.Entries += k
		if decided {
			out.Accounts++
		}
		if err != nil {
			return out, fmt.Errorf("mongo migrate the ledger of %s: %w", account, err)
		}
	}
	opCtx, cancel := s.op(ctx)
	defer cancel()
	_, err = l.migrations.InsertOne(opCtx, migrationDoc{ID: ledgerMigrated, Done: true, CreatedAt: l.s.cfg.Clock.Now().UTC()})
	if err != nil && !mdb.IsDuplicateKeyError(err) {
		return out, mapErr(opCtx, "mark the ledger migrated", err)
	}
	return out, nil
}

// legacyAccounts lists the accounts that have transactions or withdrawals.
func (s *Store) legacyAccounts(ctx context.Context) ([]string, error) {
	ctx, cancel := s.op(ctx)
	defer cancel()
	var all []string
	for _, coll := range []*mdb.Collection{s.ledger.txColl, s.ledger.wdColl} {
		ids, err := accountIDs(ctx, coll)
		if err != nil {
			return nil, err
		}
		all = append(all, ids...)
	}
	slices.Sort(all)
	return slices.Compact(all), nil
}

func (l *LedgerRepository) marker(ctx context.Context, id string) (*migrationDoc, error) {
	ctx, cancel := l.s.op(ctx)
	defer cancel()
	var d migrationDoc
	err := l.migrations.FindOne(ctx, bson.D{{Key: "_id", Value: id}}).Decode(&d)
	if errors.Is(err, mdb.ErrNoDocuments) {
		return nil, nil
	}
	if err != nil {
		return nil, mapErr(ctx, "read migration marker "+id, err)
	}
	return &d, nil
}

// migrateAccount posts the entries the account's resources imply and its opening balance,
// unless its marker says that is done. It reports how many entries it stored and whether it
// finished the account.
func (l *LedgerRepository) migrateAccount(ctx context.Context, account string) (int, bool, error) {
	id := ledgerMigrated + "/" + account
	m, err := l.marker(ctx, id)
	if err != nil || m != nil && m.Done {
		return 0, false, err
	}
	var have, want domain.LedgerBalance
	n := 0
	postAll := func(ps []domain.Posting) error {
		for _, j := range domain.Journals(ps) {
			for i := range j {
				// History is not checked again: the old version allowed what it allowed, and
				// the opening balance reconciles the result.
				j[i].Checked = false
				have = applyDelta(have, j[i])
			}
			stored, err := l.postOne(ctx, j)
			n += stored
			if err != nil {
				return err
			}
		}
		return nil
	}
	err = eachResource(ctx, l.s, l.txColl, account, (*txSnapshot).toTransaction, func(t *domain.Transaction) error {
		r := t.Record()
		want = addBalance(want, legacyTransactionBalance(r))
		return postAll(domain.ImpliedTransactionPostings(r))
	})
	if err != nil {
		return n, false, err
	}
	err = eachResource(ctx, l.s, l.wdColl, account, (*wdSnapshot).toWithdrawal, func(w *domain.Withdrawal) error {
		r := w.Record()
		want = addBalance(want, legacyWithdrawalBalance(r))
		return postAll(domain.ImpliedWithdrawalPostings(r))
	})
	if err != nil {
		return n, false, err
	}
	if m == nil {
		if m, err = l.decideOpening(ctx, id, have, want); err != nil {
			return n, false, err
		}
	}
	open := domain.OpeningBalancePostings(account, toLedgerBalance(m.Have), toLedgerBalance(m.Want))
	if len(open) > 0 {
		stored, err := l.postOne(ctx, open)
		n += stored
		if err != nil {
			return n, false, err
		}
	}
	opCtx, cancel := l.s.op(ctx)
	defer cancel()
	if _, err := l.migrations.UpdateOne(opCtx, bson.D{{Key: "_id", Value: id}}, bson.D{{Key: "$set", Value: bson.D{{Key: "done", Value: true}}}}); err != nil {
		return n, false, mapErr(opCtx, "mark "+id+" done", err)
	}
	return n, true, nil
}

// decideOpening inserts the account's marker with its figures, or reads the figures another
// instance inserted first.
func (l *LedgerRepository) decideOpening(ctx context.Context, id string, have, want domain.LedgerBalance) (*migrationDoc, error) {
	opCtx, cancel := l.s.op(ctx)
	defer cancel()
	d := migrationDoc{ID: id, Have: fromLedgerBalance(have), Want: fromLedgerBalance(want), CreatedAt: l.s.cfg.Clock.Now().UTC()}
	_, err := l.migrations.InsertOne(opCtx, d)
	if err == nil {
		return &d, nil
	}
	if !mdb.IsDuplicateKeyError(err) {
		return nil, mapErr(opCtx, "record "+id, err)
	}
	m, err := l.marker(ctx, id)
	if err == nil && m == nil {
		err = fmt.Errorf("mongo: migration marker %s vanished", id)
	}
	return m, err
}

// postOne posts the journal j under an operation timeout of its own.
func (l *LedgerRepository) postOne(ctx context.Context, j []domain.Posting) (int, error) {
	ctx, cancel := l.s.op(ctx)
	defer cancel()
	return l.post(ctx, j, false, l.s.cfg.Clock.Now())
}

// eachResource calls fn with each of the account's resources in coll, oldest first, read
// through a cursor in batches.
func eachResource[D, A any](ctx context.Context, s *Store, coll *mdb.Collection, account string,
	convert func(*D) (A, error), fn func(A) error) error {
	cur, err := coll.Find(ctx, bson.D{{Key: "accountId", Value: account}},
		options.Find().SetSort(oldestFirst).SetProjection(withoutOutbox).SetBatchSize(200))
	if err != nil {
		return mapErr(ctx, "read the resources of "+account, err)
	}
	defer cur.Close(context.WithoutCancel(ctx))
	for cur.Next(ctx) {
		var d D
		if err := cur.Decode(&d); err != nil {
			return mapErr(ctx, "read the resources of "+account, err)
		}
		a, err := convert(&d)
		if err != nil {
			return err
		}
		if err := fn(a); err != nil {
			return err
		}
	}
	return mapErr(ctx, "read the resources of "+account, cur.Err())
}

// legacyTransactionBalance is what one transaction counted in the balance the version before
// the ledger showed: a PAID one its amount paid less its fee, available; a BLOCKED,
// PROCESSING_REFUND or PROCESSING_INFRACTION one the same, blocked; any other nothing.
func legacyTransactionBalance(r domain.TransactionRecord) domain.LedgerBalance {
	var net domain.Cents
	if r.AmountPaid != nil {
		net = *r.AmountPaid
	}
	if r.FeeAmount != nil {
		net -= *r.FeeAmount
	}
	switch r.Status {
	case domain.TxPaid:
		return domain.LedgerBalance{Available: net}
	case domain.TxBlocked, domain.TxProcessingRefund, domain.TxProcessingInfraction:
		return domain.LedgerBalance{Blocked: net}
	}
	return domain.LedgerBalance{}
}

// legacyWithdrawalBalance is what one withdrawal counted then: its amount and fee taken from
// the available balance while PENDING, PROCESSING or PROCESSED.
func legacyWithdrawalBalance(r domain.WithdrawalRecord) domain.LedgerBalance {
	switch r.Status {
	case domain.WdPending, domain.WdProcessing, domain.WdProcessed:
		return domain.LedgerBalance{Available: -(r.Payout.Amount + r.Payout.Fee)}
	}
	return domain.LedgerBalance{}
}

func applyDelta(b domain.LedgerBalance, p domain.Posting) domain.LedgerBalance {
	return addBalance(b, p.Delta())
}

func addBalance(a, b domain.LedgerBalance) domain.LedgerBalance {
	return domain.LedgerBalance{Available: a.Available + b.Available, Blocked: a.Blocked + b.Blocked}
}

func fromLedgerBalance(b domain.LedgerBalance) balanceDoc {
	return balanceDoc{Available: int64(b.Available), Blocked: int64(b.Blocked)}
}

func toLedgerBalance(d balanceDoc) domain.LedgerBalance {
	return domain.LedgerBalance{Available: domain.Cents(d.Available), Blocked: domain.Cents(d.Blocked)}
}
