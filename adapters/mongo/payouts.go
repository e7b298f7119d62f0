package mongo

import (
	"context"
	"errors"

	"go.mongodb.org/mongo-driver/v2/bson"
	mdb "go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/pixgate/pixgate/domain"
)

// payoutsMigrated is the marker of a database whose live withdrawals all have a payoutDue.
const payoutsMigrated = "payouts"

// MigratePayouts makes the payout outbox find the withdrawals written before it existed.
// Versions before it wrote withdrawals without payoutDue: in production they stayed PENDING
// (no payout was ever sent), in the sandbox they waited PROCESSING for the settling job. The
// outbox finds its work through the (payoutDue) index only, so each such withdrawal still
// PENDING or PROCESSING is made due at its last change, through Update: the write claims the
// document's state as every write does (claims.go), so that it can neither undo nor be undone
// by a concurrent change from an instance already running this version. A PENDING one is then
// sent once a payout provider is configured (never claimed, it may still be canceled until
// then); a PROCESSING one is read back.
//
// It is safe to run again, or from several instances at once: a document that has a
// payoutDue is left out, and a withdrawal's Update made twice schedules it twice, to the same
// effect. A marker records that the work is done; later starts read that one document. The
// old version must not run beside this one: its new withdrawals would lack the field.
//
// It returns how many withdrawals it scheduled.
func (s *Store) MigratePayouts(ctx context.Context) (int, error) {
	done, err := s.ledger.marker(ctx, payoutsMigrated)
	if err != nil || done != nil {
		return 0, err
	}
	n, err := s.schedulePayouts(ctx)
	if err != nil {
		return n, err
	}
	opCtx, cancel := s.op(ctx)
	defer cancel()
	_, err = s.ledger.migrations.InsertOne(opCtx, migrationDoc{ID: payoutsMigrated, Done: true, CreatedAt: s.cfg.Clock.Now().UTC()})
	if err != nil && !mdb.IsDuplicateKeyError(err) {
		return n, mapErr(opCtx, "mark the payouts migrated", err)
	}
	return n, nil
}

// schedulePayouts makes every live withdrawal without a payoutDue due at its last change.
func (s *Store) schedulePayouts(ctx context.Context) (int, error) {
	// Through the (status, updatedAt, _id) index: the live statuses are a small part.
	filter := bson.D{
		{Key: "status", Value: bson.D{{Key: "$in", Value: bson.A{string(domain.WdPending), string(domain.WdProcessing)}}}},
		{Key: "payoutDue", Value: bson.D{{Key: "$exists", Value: false}}},
	}
	cur, err := s.withdrawals.coll.Find(ctx, filter,
		options.Find().SetProjection(bson.D{{Key: "_id", Value: 1}, {Key: "accountId", Value: 1}}).SetBatchSize(500))
	if err != nil {
		return 0, mapErr(ctx, "find withdrawals without a payout schedule", err)
	}
	defer cur.Close(context.WithoutCancel(ctx))
	n := 0
	for cur.Next(ctx) {
		var d struct {
			ID        string `bson:"_id"`
			AccountID string `bson:"accountId"`
		}
		if err := cur.Decode(&d); err != nil {
			return n, mapErr(ctx, "find withdrawals without a payout schedule", err)
		}
		_, err := s.withdrawals.Update(ctx, d.AccountID, d.ID, func(w *domain.Withdrawal) error {
			if w.PayoutDue() == nil {
				w.SchedulePayout(w.UpdatedAt())
			}
			return nil
		})
		if err != nil && !errors.Is(err, domain.ErrNotFound) {
			return n, err
		}
		n++
	}
	return n, mapErr(ctx, "find withdrawals without a payout schedule", cur.Err())
}
