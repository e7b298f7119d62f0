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

// The write path of transactions and withdrawals, one for both. A creation or a status change
// is, in order, under the document's in-process lock:
//
//  1. (Update) read the document and apply the change to the aggregate;
//  2. splitPostings: the checked postings the change raised, and those before them, are posted
//     first, marked open (checkedPostings.take, postings.go); the others wait in the document;
//  3. write the document, with the new deliveries and the waiting postings in the same write
//     (an Update under the claim of the state it read: writeClaimed, claims.go);
//  4. settleLedger: clear the open marks and post the waiting postings (postings.go). A crash
//     before it is done leaves work that Recover finishes (recover.go).
//
// When the write is known not to have happened, the postings of step 2 are given back
// (checkedPostings.fail); when its outcome is unknown they stay open for Recover to judge.

// aggregate is what the write path needs of a Transaction or a Withdrawal.
type aggregate interface {
	ID() string
	AccountID() string
	CreatedAt() time.Time
	Version() int64
	Events() []domain.Event
	Postings() []domain.Posting
	MarkStored(version int64)
}

// create inserts the document of the new aggregate a (what kind names, "transaction"), which
// newDoc builds at version 1 from its outbox and its waiting postings, then records the version
// on a. When the creation posts first, duplicate is asked before anything is posted, so that a
// repeated request answers ports.ErrDuplicate (and learns that its resource exists, even when
// the first one took the money) rather than find its postings taken; a twin that slips in after
// the look is refused by a unique index at insert, and its postings are given back.
func create[A aggregate](ctx context.Context, s *Store, coll *mdb.Collection, kind string, a A,
	newDoc func(outboxFields, ledgerFields) any, duplicate func(context.Context) (bool, error)) error {
	ctx, cancel := s.op(ctx)
	defer cancel()
	// An undated posting is dated at the creation, as the memory store does.
	first, pending, err := splitPostings(a.Postings(), a.CreatedAt())
	if err != nil {
		return err
	}
	doc := newDoc(newOutbox(a.Events()), pendingFields(pending, s.cfg.Clock.Now()))
	unlock, err := s.lock(ctx, coll.Name()+"/"+a.ID())
	if err != nil {
		return err
	}
	defer unlock()
	if len(first) > 0 {
		if dup, err := duplicate(ctx); err != nil || dup {
			return dupErr(kind, a.ID(), err)
		}
	}
	held := s.ledger.newChecked(a.CreatedAt())
	if err := held.take(ctx, first); err != nil {
		return held.fail(ctx, err)
	}
	if _, err := coll.InsertOne(ctx, doc); err != nil {
		what := "create " + coll.Name() + " " + a.ID()
		if mdb.IsDuplicateKeyError(err) {
			return held.fail(ctx, mapErr(ctx, what, err))
		}
		// The insert may have happened: the postings stay open for Recover to judge.
		return mapErr(ctx, what, err)
	}
	// A new document is at version 1 and outbox revision 0.
	s.settleLedger(ctx, held, coll, a.ID(), 1, 0, pending)
	a.MarkStored(1)
	return nil
}

// docState is what an update reads of a document beside its aggregate: the postings it holds
// pending, and the revision of its outbox, which with the version names the state the write
// claims and is guarded by.
type docState struct {
	pending   []postingDoc
	outboxRev int64
}

// updateVersioned is the closure-shaped, version-checked update of one aggregate document
// (see TransactionRepository.Update): read, apply fn, post the checked postings fn raised,
// write under the claim of the state read with the unchecked ones pending, and on a lost race
// read and apply again, a bounded number of times (then ports.ErrVersionConflict, having
// stored nothing). Once the write is stored, the document's pending postings (this change's,
// and any an interrupted writer left) are posted and cleared.
//
// The checked postings are given back when the write is known not to have happened: fn
// refusing on a later read, a posting refused, conflicts exhausted. A write that failed
// otherwise (the database went away) may have happened, so they stay for Recover to judge.
func updateVersioned[A aggregate](ctx context.Context, s *Store, coll *mdb.Collection, accountID, id string,
	find func(context.Context, bson.D) (A, docState, error), fn func(A) error, fields func(A) any) (A, error) {
	var zero A
	ctx, cancel := s.op(ctx)
	defer cancel()
	unlock, err := s.lock(ctx, coll.Name()+"/"+id)
	if err != nil {
		return zero, err
	}
	defer unlock()
	what := "update " + coll.Name() + " " + id
	filter := bson.D{{Key: "_id", Value: id}, {Key: "accountId", Value: accountID}}
	held := s.ledger.newChecked(s.cfg.Clock.Now())
	for attempt := 0; attempt < s.cfg.MaxRetries; attempt++ {
		if attempt > 0 {
			if err := backoff(ctx, attempt); err != nil {
				return zero, held.fail(ctx, mapErr(ctx, what, err))
			}
		}
		a, state, err := find(ctx, filter)
		if err != nil {
			return zero, held.fail(ctx, err)
		}
		v := a.Version()
		if err := fn(a); err != nil {
			return zero, held.fail(ctx, err)
		}
		now := s.cfg.Clock.Now()
		first, pending, err := splitPostings(a.Postings(), now)
		if err != nil {
			return zero, held.fail(ctx, err)
		}
		if err := held.take(ctx, first); err != nil {
			return zero, held.fail(ctx, err)
		}
		events := a.Events()
		a.MarkStored(v + 1) // the version written below, with these events and postings
		update := versionedUpdate(fields(a), events, pending, now)
		written, err := s.writeClaimed(ctx, stateKey(coll.Name(), id, v, state.outboxRev), what,
			func(ctx context.Context) (*mdb.UpdateResult, error) {
				return coll.UpdateOne(ctx, stateFilter(id, v, state.outboxRev), update)
			})
		if err != nil {
			return zero, held.fail(ctx, err) // kept when the write may have happened
		}
		if !written {
			continue // another writer got in first
		}
		rev := state.outboxRev
		if len(events) > 0 {
			rev++
		}
		s.settleLedger(ctx, held, coll, id, v+1, rev, append(state.pending, pending...))
		return a, nil
	}
	return zero, held.fail(ctx, fmt.Errorf("mongo %s: %w", what, ports.ErrVersionConflict))
}

// versionedUpdate stores fields (which carry the new version) and appends the deliveries of
// events to the outbox and pending to the pending postings, in one write. The outbox's
// revision moves too, so that an outbox write working from an older read (see outbox.go) does
// not overwrite outboxDue without the new deliveries.
func versionedUpdate(fields any, events []domain.Event, pending []postingDoc, now time.Time) bson.D {
	update := bson.D{{Key: "$set", Value: fields}}
	var push, lower bson.D
	if len(events) > 0 {
		ob := newOutbox(events)
		push = append(push, bson.E{Key: "outbox", Value: bson.D{{Key: "$each", Value: ob.Outbox}}})
		lower = append(lower, bson.E{Key: "outboxDue", Value: *ob.OutboxDue})
		update = append(update, bson.E{Key: "$inc", Value: bson.D{{Key: "outboxRev", Value: int64(1)}}})
	}
	if lf := pendingFields(pending, now); len(lf.LedgerPending) > 0 {
		push = append(push, bson.E{Key: "ledgerPending", Value: bson.D{{Key: "$each", Value: lf.LedgerPending}}})
		lower = append(lower, bson.E{Key: "ledgerDue", Value: *lf.LedgerDue})
	}
	if len(push) > 0 {
		update = append(update, bson.E{Key: "$push", Value: push}, bson.E{Key: "$min", Value: lower})
	}
	if len(events) > 0 {
		// $set holds the aggregate's fields; true is the greatest boolean, so $max sets it.
		update = append(update, bson.E{Key: "$max", Value: bson.D{{Key: "outboxOpen", Value: true}}})
	}
	return update
}

// stateFilter matches document id in the state (version, outboxRev): the filter of every
// write made under the claim of that state (see claimWrite). Guarding by the whole state, not
// only by the counter the write moves, keeps a writer whose claim is of an older state from
// writing beside the holder of the current one.
func stateFilter(id string, version, outboxRev int64) bson.D {
	return bson.D{{Key: "_id", Value: id}, {Key: "version", Value: version}, {Key: "outboxRev", Value: outboxRev}}
}

// exists tells whether coll holds a document matching filter.
func exists(ctx context.Context, coll *mdb.Collection, filter bson.D) (bool, error) {
	n, err := coll.CountDocuments(ctx, filter, options.Count().SetLimit(1))
	if err != nil {
		return false, mapErr(ctx, "look for a duplicate in "+coll.Name(), err)
	}
	return n > 0, nil
}

// anyExists tells whether coll holds a document matching one of filters, asking one at a time.
func anyExists(ctx context.Context, coll *mdb.Collection, filters ...bson.D) (bool, error) {
	for _, f := range filters {
		if dup, err := exists(ctx, coll, f); err != nil || dup {
			return dup, err
		}
	}
	return false, nil
}

// dupErr is err when the look for duplicates failed, ports.ErrDuplicate when it found one.
func dupErr(what, id string, err error) error {
	if err != nil {
		return err
	}
	return fmt.Errorf("mongo create %s %s: %w", what, id, ports.ErrDuplicate)
}
