package mongo

import (
	"context"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	mdb "go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/pixgate/pixgate/domain"
	"github.com/pixgate/pixgate/ports"
)

// WithdrawalRepository stores withdrawals, one document each with its outbox. Build it with
// Open; use it through Store.
type WithdrawalRepository struct {
	s    *Store
	coll *mdb.Collection
}

var _ ports.WithdrawalRepository = (*WithdrawalRepository)(nil)

// Create looks for a duplicate first (the id, or the account's idempotency slot), so that a
// repeated request learns that its withdrawal exists even when the first one took the money;
// then it posts the withdrawal's entry, checked against the available balance in the ledger's
// serialised step (domain.ErrInsufficientBalance stores nothing); then it inserts the document.
// An insert refused as a duplicate (a twin request that got in after the look) gives the entry
// back and answers ports.ErrDuplicate (see write.go).
func (r *WithdrawalRepository) Create(ctx context.Context, w *domain.Withdrawal) error {
	snap := fromWithdrawal(w)
	snap.Fields.Version = 1
	return create(ctx, r.s, r.coll, "withdrawal", w,
		func(box outboxFields, pending ledgerFields) any {
			return wdDoc{ID: snap.ID, Fields: snap.Fields, Box: box, Ledger: pending}
		},
		func(ctx context.Context) (bool, error) {
			return anyExists(ctx, r.coll, bson.D{{Key: "_id", Value: w.ID()}},
				bson.D{{Key: "accountId", Value: w.AccountID()}, {Key: "idem", Value: snap.Fields.Idem}})
		})
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

// findForUpdate reads a withdrawal and the postings its document holds pending.
func (r *WithdrawalRepository) findForUpdate(ctx context.Context, filter bson.D) (*domain.Withdrawal, docState, error) {
	var d wdDoc
	if err := r.coll.FindOne(ctx, filter, options.FindOne().SetProjection(withoutOutbox)).Decode(&d); err != nil {
		return nil, docState{}, mapErr(ctx, "get withdrawal", err)
	}
	w, err := (&wdSnapshot{ID: d.ID, Fields: d.Fields}).toWithdrawal()
	return w, docState{pending: d.Ledger.LedgerPending, outboxRev: d.Box.OutboxRev}, err
}

// Update is TransactionRepository.Update for withdrawals: read, apply fn, write guarded by the
// version read with the postings fn raised pending, retry on a lost race.
func (r *WithdrawalRepository) Update(ctx context.Context, accountID, id string, fn func(*domain.Withdrawal) error) (*domain.Withdrawal, error) {
	return updateVersioned(ctx, r.s, r.coll, accountID, id, r.findForUpdate, fn,
		func(w *domain.Withdrawal) any { return fromWithdrawal(w).Fields })
}

// Find returns withdrawal id whatever its account.
func (r *WithdrawalRepository) Find(ctx context.Context, id string) (*domain.Withdrawal, error) {
	ctx, cancel := r.s.op(ctx)
	defer cancel()
	return r.findOne(ctx, bson.D{{Key: "_id", Value: id}})
}

// ListPayoutsDue returns the withdrawals whose payoutDue is at or before until, the earliest
// first, through the (payoutDue, _id) index: a document whose payout is done holds null there,
// outside the range.
func (r *WithdrawalRepository) ListPayoutsDue(ctx context.Context, until time.Time, limit int) ([]*domain.Withdrawal, error) {
	if limit <= 0 {
		return []*domain.Withdrawal{}, nil
	}
	ctx, cancel := r.s.op(ctx)
	defer cancel()
	return findAll(ctx, r.coll, "find withdrawals whose payout is due",
		bson.D{{Key: "payoutDue", Value: bson.D{{Key: "$lte", Value: until.UTC()}}}},
		options.Find().SetSort(bson.D{{Key: "payoutDue", Value: 1}, {Key: "_id", Value: 1}}).
			SetLimit(int64(limit)).SetProjection(withoutOutbox),
		(*wdSnapshot).toWithdrawal)
}

// ListByAccount reads one page of the account's withdrawals in creation order through the
// (accountId, createdAt, _id) index.
func (r *WithdrawalRepository) ListByAccount(ctx context.Context, accountID string, p ports.Page) ([]*domain.Withdrawal, error) {
	ctx, cancel := r.s.op(ctx)
	defer cancel()
	return findAll(ctx, r.coll, "list withdrawals", bson.D{{Key: "accountId", Value: accountID}},
		options.Find().SetSort(oldestFirst).SetSkip(int64(p.Skip())).SetLimit(int64(p.Clamped().Size)).
			SetProjection(withoutOutbox),
		(*wdSnapshot).toWithdrawal)
}
