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
// back and answers ports.ErrDuplicate. See changes.go and doc.go.
func (r *WithdrawalRepository) Create(ctx context.Context, w *domain.Withdrawal) error {
	ctx, cancel := r.s.op(ctx)
	defer cancel()
	first, pending, err := splitPostings(w.Postings(), w.CreatedAt())
	if err != nil {
		return err
	}
	snap := fromWithdrawal(w)
	snap.Fields.Version = 1
	doc := wdDoc{ID: snap.ID, Fields: snap.Fields, Box: newOutbox(w.Events()), Ledger: pendingFields(pending, r.s.cfg.Clock.Now())}
	unlock, err := r.s.lock(ctx, collWithdrawals+"/"+w.ID())
	if err != nil {
		return err
	}
	defer unlock()
	if dup, err := r.duplicate(ctx, w.ID(), w.AccountID(), doc.Fields.Idem); err != nil || dup {
		return dupErr("withdrawal", w.ID(), err)
	}
	if err := r.s.createDoc(ctx, r.coll, w.ID(), doc, w.CreatedAt(), first, pending); err != nil {
		return err
	}
	w.MarkStored(1)
	return nil
}

// duplicate tells whether a withdrawal with the id, or with the account's idempotency slot,
// is stored.
func (r *WithdrawalRepository) duplicate(ctx context.Context, id, accountID, idem string) (bool, error) {
	dup, err := exists(ctx, r.coll, bson.D{{Key: "_id", Value: id}})
	if err == nil && !dup {
		dup, err = exists(ctx, r.coll, bson.D{{Key: "accountId", Value: accountID}, {Key: "idem", Value: idem}})
	}
	return dup, err
}

// dupErr is err when the look for duplicates failed, ports.ErrDuplicate when it found one.
func dupErr(what, id string, err error) error {
	if err != nil {
		return err
	}
	return fmt.Errorf("mongo create %s %s: %w", what, id, ports.ErrDuplicate)
}

// exists tells whether coll holds a document matching filter.
func exists(ctx context.Context, coll *mdb.Collection, filter bson.D) (bool, error) {
	n, err := coll.CountDocuments(ctx, filter, options.Count().SetLimit(1))
	if err != nil {
		return false, mapErr(ctx, "look for a duplicate in "+coll.Name(), err)
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
	return updateVersioned(ctx, r.s, r.coll, collWithdrawals, accountID, id, r.findForUpdate, fn,
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
