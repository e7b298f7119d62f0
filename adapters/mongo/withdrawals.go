package mongo

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	mdb "go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/pixgate/pixgate/domain"
	"github.com/pixgate/pixgate/ports"
)

// WithdrawalRepository stores withdrawals, one document each with its outbox, and derives
// balances from both collections. Build it with Open; use it through Store.
type WithdrawalRepository struct {
	s      *Store
	coll   *mdb.Collection
	txColl *mdb.Collection
}

var _ ports.WithdrawalRepository = (*WithdrawalRepository)(nil)

// CreateReserving inserts w only if check accepts the balance without it, and makes
// concurrent reservations of one account take turns without a database lock or a
// transaction: every withdrawal takes the next number of its account's sequence (seq), and a
// unique index on (accountId, seq) lets only one of two racing reservations have a given
// number.
//
// One attempt reads the account's highest seq N, then the balance, asks check, and inserts w
// with seq N+1. Sequence numbers are dense (N+1 is only ever written after N was read), so a
// reservation that read N has seen every withdrawal numbered up to N, and its balance, read
// afterwards, includes all of them. Two reservations that read the same N both try N+1: the
// index lets one in and refuses the other with a duplicate key, and the loser starts over,
// reading N+1 and a balance that now includes the winner. Hence no two withdrawals ever pass
// check on the same money. After Config.MaxRetries lost races it answers
// ports.ErrVersionConflict, having stored nothing.
func (r *WithdrawalRepository) CreateReserving(ctx context.Context, w *domain.Withdrawal, check func(domain.Balance) error) error {
	ctx, cancel := r.s.op(ctx)
	defer cancel()
	snap := fromWithdrawal(w)
	snap.Fields.Version = 1
	doc := wdDoc{ID: snap.ID, Fields: snap.Fields, Box: newOutbox(w.Events())}
	// Reservations of one account take turns inside this process (see localLocks); between
	// processes the sequence numbers do it.
	unlock, err := r.s.lock(ctx, "reserve/"+w.AccountID())
	if err != nil {
		return err
	}
	defer unlock()
	// A repeated request must learn that its withdrawal exists even when the first one took
	// the money, so duplicates are looked for before check; the unique indexes still catch
	// the ones that race in after this look.
	if dup, err := r.duplicate(ctx, w.ID(), w.AccountID(), doc.Fields.Idem); err != nil || dup {
		return dupErr(w.ID(), err)
	}
	for attempt := 0; attempt < r.s.cfg.MaxRetries; attempt++ {
		if attempt > 0 {
			if err := backoff(ctx, attempt); err != nil {
				return mapErr(ctx, "reserve withdrawal "+w.ID(), err)
			}
		}
		last, err := r.lastSeq(ctx, w.AccountID())
		if err != nil {
			return err
		}
		totals, err := r.totals(ctx, w.AccountID())
		if err != nil {
			return err
		}
		if err := check(totals.Balance()); err != nil {
			return err
		}
		doc.Seq = last + 1
		_, err = r.coll.InsertOne(ctx, doc)
		if err == nil {
			w.SetVersion(1)
			w.ClearEvents()
			return nil
		}
		if !mdb.IsDuplicateKeyError(err) {
			return mapErr(ctx, "reserve withdrawal "+w.ID(), err)
		}
		// Which unique index refused it? The message names it on MongoDB but not on
		// FerretDB, so ask: the id or the key already stored is a real duplicate; otherwise
		// only the sequence number was taken, and the race was lost.
		if dup, err := r.duplicate(ctx, w.ID(), w.AccountID(), doc.Fields.Idem); err != nil || dup {
			return dupErr(w.ID(), err)
		}
	}
	return fmt.Errorf("mongo reserve withdrawal %s: %w", w.ID(), ports.ErrVersionConflict)
}

// duplicate tells whether a withdrawal with the id, or with the account's idempotency slot,
// is stored.
func (r *WithdrawalRepository) duplicate(ctx context.Context, id, accountID, idem string) (bool, error) {
	dup, err := r.exists(ctx, bson.D{{Key: "_id", Value: id}})
	if err == nil && !dup {
		dup, err = r.exists(ctx, bson.D{{Key: "accountId", Value: accountID}, {Key: "idem", Value: idem}})
	}
	return dup, err
}

// dupErr is err when the look for duplicates failed, ports.ErrDuplicate when it found one.
func dupErr(id string, err error) error {
	if err != nil {
		return err
	}
	return fmt.Errorf("mongo reserve withdrawal %s: %w", id, ports.ErrDuplicate)
}

// lastSeq is the account's highest withdrawal sequence number, 0 when it has none.
func (r *WithdrawalRepository) lastSeq(ctx context.Context, accountID string) (int64, error) {
	var d struct {
		Seq int64 `bson:"seq"`
	}
	err := r.coll.FindOne(ctx, bson.D{{Key: "accountId", Value: accountID}},
		options.FindOne().SetSort(bson.D{{Key: "accountId", Value: 1}, {Key: "seq", Value: -1}}).
			SetProjection(bson.D{{Key: "seq", Value: 1}})).Decode(&d)
	if errors.Is(err, mdb.ErrNoDocuments) {
		return 0, nil
	}
	if err != nil {
		return 0, mapErr(ctx, "read withdrawal sequence", err)
	}
	return d.Seq, nil
}

func (r *WithdrawalRepository) exists(ctx context.Context, filter bson.D) (bool, error) {
	n, err := r.coll.CountDocuments(ctx, filter, options.Count().SetLimit(1))
	if err != nil {
		return false, mapErr(ctx, "check withdrawal", err)
	}
	return n > 0, nil
}

// Get returns the account's withdrawal id.
func (r *WithdrawalRepository) Get(ctx context.Context, accountID, id string) (*domain.Withdrawal, error) {
	ctx, cancel := r.s.op(ctx)
	defer cancel()
	return r.findOne(ctx, bson.D{{Key: "_id", Value: id}, {Key: "accountId", Value: accountID}})
}

// GetByIdempotencyKey returns the account's withdrawal created with key.
func (r *WithdrawalRepository) GetByIdempotencyKey(ctx context.Context, accountID, key string) (*domain.Withdrawal, error) {
	if key == "" {
		return nil, fmt.Errorf("mongo get withdrawal by idempotency key: %w", domain.ErrNotFound)
	}
	ctx, cancel := r.s.op(ctx)
	defer cancel()
	return r.findOne(ctx, bson.D{{Key: "accountId", Value: accountID}, {Key: "idem", Value: idemSlot(key, "")}})
}

func (r *WithdrawalRepository) findOne(ctx context.Context, filter bson.D) (*domain.Withdrawal, error) {
	var d wdSnapshot
	err := r.coll.FindOne(ctx, filter, options.FindOne().SetProjection(withoutOutbox)).Decode(&d)
	if err != nil {
		return nil, mapErr(ctx, "get withdrawal", err)
	}
	return d.toWithdrawal()
}

// Update is TransactionRepository.Update for withdrawals: read, apply fn, write guarded by the
// version read, retry on a lost race.
func (r *WithdrawalRepository) Update(ctx context.Context, accountID, id string, fn func(*domain.Withdrawal) error) (*domain.Withdrawal, error) {
	return updateVersioned(ctx, r.s, r.coll, collWithdrawals, accountID, id, r.findOne, fn,
		func(w *domain.Withdrawal) any { return fromWithdrawal(w).Fields })
}

// ListByStatus returns withdrawals in status whose last change happened at or before until,
// oldest change first.
func (r *WithdrawalRepository) ListByStatus(ctx context.Context, status domain.WithdrawalStatus, until time.Time, limit int) ([]*domain.Withdrawal, error) {
	if limit <= 0 {
		return []*domain.Withdrawal{}, nil
	}
	ctx, cancel := r.s.op(ctx)
	defer cancel()
	return findAll(ctx, r.coll, "find withdrawals", statusUntil(string(status), until),
		options.Find().SetSort(byLastChange).SetLimit(int64(limit)).SetProjection(withoutOutbox),
		(*wdSnapshot).toWithdrawal)
}

// Balance sums the account's transactions and withdrawals per status on the server and lets
// the domain apply its rules to the sums.
func (r *WithdrawalRepository) Balance(ctx context.Context, accountID string) (domain.Balance, error) {
	ctx, cancel := r.s.op(ctx)
	defer cancel()
	totals, err := r.totals(ctx, accountID)
	if err != nil {
		return domain.Balance{}, err
	}
	return totals.Balance(), nil
}

// countingTransactionStatuses and holdingWithdrawalStatuses are the statuses that move a
// balance. They are found by asking the domain's rules rather than repeating them here: a
// status counts when one resource in it changes an empty balance. Matching only them lets the
// aggregation walk the (accountId, status) index over the few live resources of an account
// and skip its settled history (refunded, failed, canceled...).
var (
	countingTransactionStatuses = func() bson.A {
		var out bson.A
		for _, s := range domain.TransactionStatuses() {
			probe := domain.BalanceTotals{Transactions: map[domain.TransactionStatus]domain.TransactionTotals{
				s: {Amount: 1, Paid: 2, Fee: 1}}}
			if probe.Balance() != (domain.Balance{}) {
				out = append(out, string(s))
			}
		}
		return out
	}()
	holdingWithdrawalStatuses = func() bson.A {
		var out bson.A
		for _, s := range domain.WithdrawalStatuses() {
			probe := domain.BalanceTotals{Withdrawals: map[domain.WithdrawalStatus]domain.WithdrawalTotals{s: {Amount: 1}}}
			if probe.Balance() != (domain.Balance{}) {
				out = append(out, string(s))
			}
		}
		return out
	}()
)

// sumRow is one group of a balance aggregation: the sum of one field over the resources of
// one status.
type sumRow struct {
	Status string `bson:"_id"`
	Sum    int64  `bson:"sum"`
}

// sum names one aggregation of totals: the field summed over coll's resources in statuses.
type sum struct {
	coll     *mdb.Collection
	statuses bson.A
	field    string
	rows     []sumRow
	err      error
}

// totals sums, per status, the amounts of the account's live transactions and withdrawals.
// Each sum is its own aggregation ({$match: accountId, status $in ...}, {$group: by status,
// one $sum}), all sent at once: FerretDB v1 computes only the first accumulator of a $group
// and answers 0 for the others, so one $group with three $sum would be wrong there. The
// (accountId, status) indexes serve every one of them.
func (r *WithdrawalRepository) totals(ctx context.Context, accountID string) (domain.BalanceTotals, error) {
	sums := []*sum{
		{coll: r.txColl, statuses: countingTransactionStatuses, field: "amount"},
		{coll: r.txColl, statuses: countingTransactionStatuses, field: "amountPaid"},
		{coll: r.txColl, statuses: countingTransactionStatuses, field: "feeAmount"},
		{coll: r.coll, statuses: holdingWithdrawalStatuses, field: "amount"},
		{coll: r.coll, statuses: holdingWithdrawalStatuses, field: "fee"},
	}
	var wg sync.WaitGroup
	for _, s := range sums {
		wg.Go(func() { s.rows, s.err = aggregateSum(ctx, s.coll, accountID, s.statuses, s.field) })
	}
	wg.Wait()
	out := domain.BalanceTotals{
		Transactions: map[domain.TransactionStatus]domain.TransactionTotals{},
		Withdrawals:  map[domain.WithdrawalStatus]domain.WithdrawalTotals{},
	}
	for _, s := range sums {
		if s.err != nil {
			return out, s.err
		}
	}
	for i, s := range sums[:3] {
		for _, row := range s.rows {
			st := domain.TransactionStatus(row.Status)
			t := out.Transactions[st]
			switch i {
			case 0:
				t.Amount = domain.Cents(row.Sum)
			case 1:
				t.Paid = domain.Cents(row.Sum)
			case 2:
				t.Fee = domain.Cents(row.Sum)
			}
			out.Transactions[st] = t
		}
	}
	for i, s := range sums[3:] {
		for _, row := range s.rows {
			st := domain.WithdrawalStatus(row.Status)
			w := out.Withdrawals[st]
			if i == 0 {
				w.Amount = domain.Cents(row.Sum)
			} else {
				w.Fee = domain.Cents(row.Sum)
			}
			out.Withdrawals[st] = w
		}
	}
	return out, nil
}

func aggregateSum(ctx context.Context, coll *mdb.Collection, accountID string, statuses bson.A, field string) ([]sumRow, error) {
	cur, err := coll.Aggregate(ctx, mdb.Pipeline{
		{{Key: "$match", Value: bson.D{{Key: "accountId", Value: accountID}, {Key: "status", Value: bson.D{{Key: "$in", Value: statuses}}}}}},
		{{Key: "$group", Value: bson.D{{Key: "_id", Value: "$status"}, {Key: "sum", Value: bson.D{{Key: "$sum", Value: "$" + field}}}}}},
	})
	if err != nil {
		return nil, mapErr(ctx, "sum "+coll.Name()+" "+field, err)
	}
	var rows []sumRow
	if err := cur.All(ctx, &rows); err != nil {
		return nil, mapErr(ctx, "sum "+coll.Name()+" "+field, err)
	}
	return rows, nil
}
