package mongo

import (
	"context"
	"errors"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	mdb "go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/pixgate/pixgate/domain"
)

// recoverBatch bounds how many documents, and how many open entries, one Recover call looks
// at; the oldest come first, so repeated calls work through any backlog.
const recoverBatch = 100

// Recover finishes what calls interrupted by a crash (or by the database going away) left
// half done, once it is older than Config.RecoverAfter, and reports how many entries it
// stored:
//
//   - documents whose ledgerDue has passed hold postings of a stored status change that were
//     never posted: it posts them (each once, whoever else does) and clears them;
//   - open journals hold checked postings (and any their change raised before them) whose
//     status change may never have been written: it looks at the resource, and when the
//     change is not there it posts the journal's voids, as one journal, so the money comes
//     back; either way it clears the mark.
//
// Judging an open entry by its resource is safe only once its call is over: a call lasts at
// most Config.OpTimeout (every write of it runs under that deadline), and RecoverAfter is
// always more than that (Open refuses a configuration where it is not), so a write that is not
// there when Recover looks never lands afterwards.
func (l *LedgerRepository) Recover(ctx context.Context) (int, error) {
	ctx, cancel := l.s.op(ctx)
	defer cancel()
	cutoff := l.s.cfg.Clock.Now().Add(-l.s.cfg.RecoverAfter)
	n := 0
	var errs []error
	for _, src := range []struct {
		coll *mdb.Collection
		name string
	}{{l.txColl, collTransactions}, {l.wdColl, collWithdrawals}} {
		k, err := l.recoverPending(ctx, src.coll, src.name, cutoff)
		n += k
		errs = append(errs, err)
	}
	k, err := l.settleOpen(ctx, cutoff)
	n += k
	errs = append(errs, err)
	return n, errors.Join(errs...)
}

// pendingDoc is what Recover reads of a document with pending postings.
type pendingDoc struct {
	ID        string       `bson:"_id"`
	Version   int64        `bson:"version"`
	OutboxRev int64        `bson:"outboxRev"`
	Ledger    ledgerFields `bson:",inline"`
}

func (l *LedgerRepository) recoverPending(ctx context.Context, coll *mdb.Collection, collName string, cutoff time.Time) (int, error) {
	docs, err := findAll(ctx, coll, "find pending postings", bson.D{{Key: "ledgerDue", Value: bson.D{{Key: "$lte", Value: cutoff}}}},
		options.Find().SetSort(bson.D{{Key: "ledgerDue", Value: 1}}).SetLimit(recoverBatch).
			SetProjection(bson.D{{Key: "version", Value: 1}, {Key: "outboxRev", Value: 1}, {Key: "ledgerPending", Value: 1}, {Key: "ledgerDue", Value: 1}}),
		func(d *pendingDoc) (pendingDoc, error) { return *d, nil })
	if err != nil {
		return 0, err
	}
	n := 0
	var errs []error
	for _, d := range docs {
		k, err := l.recoverDoc(ctx, coll, collName, d)
		n += k
		errs = append(errs, err)
	}
	return n, errors.Join(errs...)
}

// recoverDoc posts and clears one document's pending postings, holding its lock as the
// repositories' writers do.
func (l *LedgerRepository) recoverDoc(ctx context.Context, coll *mdb.Collection, collName string, d pendingDoc) (int, error) {
	unlock, err := l.s.lock(ctx, collName+"/"+d.ID)
	if err != nil {
		return 0, err
	}
	defer unlock()
	return l.postPending(ctx, coll, d.ID, d.Version, d.OutboxRev, d.Ledger.LedgerPending)
}

// settleOpen settles the journals opened before cutoff, through the index on open.
func (l *LedgerRepository) settleOpen(ctx context.Context, cutoff time.Time) (int, error) {
	open, err := findAll(ctx, l.entries, "find open entries",
		bson.D{{Key: "open", Value: bson.D{{Key: "$lte", Value: cutoff}}}},
		options.Find().SetSort(bson.D{{Key: "open", Value: 1}}).SetLimit(recoverBatch),
		func(d *entryDoc) (entryDoc, error) { return *d, nil })
	if err != nil {
		return 0, err
	}
	n := 0
	var errs []error
	for _, e := range open {
		shows, err := l.resourceShows(ctx, e)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		var legs []domain.Posting
		for _, line := range e.lines() {
			legs = append(legs, line.Posting)
		}
		if !shows {
			stored, err := l.post(ctx, voids(legs), false, l.s.cfg.Clock.Now())
			n += stored
			if err != nil {
				errs = append(errs, err)
				continue
			}
		}
		errs = append(errs, l.close(ctx, legs))
	}
	return n, errors.Join(errs...)
}

// resourceShows tells whether the status change that posted open journal e was stored: whether
// the history of its resource, as stored now, implies e's first posting (and so the journal:
// one change raised it) (domain.ImpliedTransactionPostings, ImpliedWithdrawalPostings: the
// withdrawal was created, the transaction holds the refund...).
// A resource that does not exist shows nothing. Entries of other resources are never posted
// open; should one be, it is not Recover's to judge, and it is taken as shown.
func (l *LedgerRepository) resourceShows(ctx context.Context, e entryDoc) (bool, error) {
	var implied []domain.Posting
	filter := bson.D{{Key: "_id", Value: e.ResourceID}}
	switch domain.ResourceKind(e.Resource) {
	case domain.ResourceTransaction:
		t, err := l.s.transactions.findOne(ctx, filter)
		if errors.Is(err, domain.ErrNotFound) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		implied = domain.ImpliedTransactionPostings(t.Record())
	case domain.ResourceWithdrawal:
		w, err := l.s.withdrawals.findOne(ctx, filter)
		if errors.Is(err, domain.ErrNotFound) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		implied = domain.ImpliedWithdrawalPostings(w.Record())
	default:
		return true, nil
	}
	for _, p := range implied {
		if p.ID == e.ID {
			return true, nil
		}
	}
	return false, nil
}
