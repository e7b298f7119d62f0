package mongo

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	mdb "go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/pixgate/pixgate/ports"
)

// collReconciliation holds one document, the reconciliation's shared state.
const (
	collReconciliation = "reconciliation"
	reconciliationID   = "acquirer"
)

type reconciliationDoc struct {
	ID        string    `bson:"_id"`
	Version   int64     `bson:"version"`
	Reached   time.Time `bson:"reached"`
	Holder    string    `bson:"holder"`
	HeldUntil time.Time `bson:"heldUntil"`
}

// Reconciliations keeps the reconciliation's state in one versioned document. A change is a
// read, a decision and a replace at the version read, under a claim of that version
// (claims.go), so that one writer at a time changes it across instances, on FerretDB (whose
// conditional updates are not atomic between clients) as on MongoDB; the first document is
// an insert, which the unique _id lets happen once. Build it with Open; use it through Store.
type Reconciliations struct {
	s    *Store
	coll *mdb.Collection
}

var _ ports.Reconciliations = (*Reconciliations)(nil)

// Reconciliations returns the reconciliation's state.
func (s *Store) Reconciliations() *Reconciliations {
	return &Reconciliations{s: s, coll: s.db.Collection(collReconciliation)}
}

// errHeldByOther: another instance holds the reconciliation; Hold answers false.
var errHeldByOther = errors.New("held by another instance")

func (r *Reconciliations) read(ctx context.Context) (reconciliationDoc, bool, error) {
	var d reconciliationDoc
	err := r.coll.FindOne(ctx, bson.D{{Key: "_id", Value: reconciliationID}}).Decode(&d)
	if errors.Is(err, mdb.ErrNoDocuments) {
		return reconciliationDoc{ID: reconciliationID}, false, nil
	}
	if err != nil {
		return d, false, mapErr(ctx, "read the reconciliation", err)
	}
	return d, true, nil
}

// ReconciliationState answers the stored state (zero before anything was stored).
func (r *Reconciliations) ReconciliationState(ctx context.Context) (ports.ReconciliationState, error) {
	ctx, cancel := r.s.op(ctx)
	defer cancel()
	d, _, err := r.read(ctx)
	return ports.ReconciliationState{Reached: d.Reached, Holder: d.Holder, HeldUntil: d.HeldUntil}, err
}

// change lets decide change the document as read and stores it at the version read; it reads
// again and decides again when another writer came first.
func (r *Reconciliations) change(ctx context.Context, what string, decide func(*reconciliationDoc) error) error {
	ctx, cancel := r.s.op(ctx)
	defer cancel()
	for attempt := range 16 {
		if attempt > 0 {
			if err := backoff(ctx, attempt); err != nil {
				return mapErr(ctx, what, err)
			}
		}
		d, found, err := r.read(ctx)
		if err != nil {
			return err
		}
		v := d.Version
		if err := decide(&d); err != nil {
			return err
		}
		d.Version = v + 1
		if !found {
			_, err := r.coll.InsertOne(ctx, d)
			if mdb.IsDuplicateKeyError(err) {
				continue
			}
			return mapErr(ctx, what, err)
		}
		written, err := r.s.writeClaimed(ctx, collReconciliation+"/"+reconciliationID+"/v"+strconv.FormatInt(v, 10), what,
			func(ctx context.Context) (*mdb.UpdateResult, error) {
				return r.coll.ReplaceOne(ctx, bson.D{{Key: "_id", Value: reconciliationID}, {Key: "version", Value: v}}, d)
			})
		if err != nil {
			return err
		}
		if written {
			return nil
		}
	}
	return fmt.Errorf("mongo %s: %w", what, ports.ErrVersionConflict)
}

func millis(t time.Time) time.Time { return t.UTC().Truncate(time.Millisecond) }

// HoldReconciliation makes holder the holder until until, unless another holds it at now.
func (r *Reconciliations) HoldReconciliation(ctx context.Context, holder string, now, until time.Time) (bool, error) {
	err := r.change(ctx, "hold the reconciliation", func(d *reconciliationDoc) error {
		if d.Holder != "" && d.Holder != holder && d.HeldUntil.After(now) {
			return errHeldByOther
		}
		d.Holder, d.HeldUntil = holder, millis(until)
		return nil
	})
	if errors.Is(err, errHeldByOther) {
		return false, nil
	}
	return err == nil, err
}

// CompleteReconciliation stores reached, when later, and ends holder's hold.
func (r *Reconciliations) CompleteReconciliation(ctx context.Context, holder string, reached time.Time) error {
	return r.change(ctx, "complete the reconciliation", func(d *reconciliationDoc) error {
		if d.Holder != holder {
			return ports.ErrReconciliationNotHeld
		}
		if reached = millis(reached); reached.After(d.Reached) {
			d.Reached = reached
		}
		d.Holder, d.HeldUntil = "", time.Time{}
		return nil
	})
}

// ReleaseReconciliation ends holder's hold.
func (r *Reconciliations) ReleaseReconciliation(ctx context.Context, holder string) error {
	return r.change(ctx, "release the reconciliation", func(d *reconciliationDoc) error {
		if d.Holder != holder {
			return ports.ErrReconciliationNotHeld
		}
		d.Holder, d.HeldUntil = "", time.Time{}
		return nil
	})
}
