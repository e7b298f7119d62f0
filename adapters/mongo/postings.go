package mongo

import (
	"context"
	"fmt"
	"strings"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	mdb "go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/pixgate/pixgate/domain"
	"github.com/pixgate/pixgate/ports"
)

// A status change and its ledger entries live in two collections, and the adapter uses no
// multi-document transaction. This file keeps them from being separated (docs/adr/0006):
//
//   - Unchecked postings (a payment and its fee, a refund's completion, a dispute, a
//     withdrawal coming back...) go into the resource document's ledgerPending array in the
//     same write as the change, are posted once it is stored, each journal in one step, and
//     are then cleared. A crash in between leaves them in the document, where Recover finds
//     them.
//   - Checked postings (a withdrawal, a refund's hold) must pass the balance check before the
//     change may be stored, so they are posted first, marked open. When the write then fails
//     for good they are given back (their Void is posted); when it succeeds the mark is
//     cleared. A crash in between leaves an open journal, which Recover settles by looking at
//     the resource.

// splitPostings cuts a change's postings after the journal of its last checked one. Those up
// to it are posted before the change is written, in order, so that a check also sees the
// movements the same change made before it (a transaction created already paid and refunding:
// its payment and fee, then its hold); the rest wait in the document. The cut never splits a
// journal. A transition of the domain raises either one checked posting or unchecked ones
// only, so in practice the checked ones go first and the others wait. A posting the ledger
// would refuse for its shape (no amount) is refused here, before anything is written. at
// dates the postings that have no date of their own.
func splitPostings(ps []domain.Posting, at time.Time) ([]domain.Posting, []postingDoc, error) {
	cut := 0
	for i, p := range ps {
		if p.Amount <= 0 {
			return nil, nil, fmt.Errorf("mongo: %w: posting %s of %d cents", domain.ErrInvalidPosting, p.ID, p.Amount)
		}
		if p.Checked {
			cut = i + 1
		}
	}
	for cut > 0 && cut < len(ps) && ps[cut].JournalID() == ps[cut-1].JournalID() {
		cut++
	}
	var pending []postingDoc
	for _, p := range ps[cut:] {
		if p.At.IsZero() {
			p.At = at
		}
		pending = append(pending, fromPosting(p))
	}
	return ps[:cut], pending, nil
}

// afterCall gives the work that follows a call's outcome (giving back, confirming, posting
// what is pending) a budget of its own: a call whose own time ran out must still give back
// what it took, and doing it now spares Recover the work.
func (s *Store) afterCall(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), s.cfg.OpTimeout)
}

// checkedPostings are the postings one call of Create or Update stored before writing its
// resource: its checked postings (and any the same change raised before them).
type checkedPostings struct {
	l    *LedgerRepository
	at   time.Time // the date of the entries
	mine []domain.Posting
}

func (l *LedgerRepository) newChecked(at time.Time) *checkedPostings {
	return &checkedPostings{l: l, at: at}
}

// take makes the call hold exactly the postings ps, which the latest run of the change raised
// to be posted first: it gives back those an earlier run of this call posted and this one no
// longer raises (the aggregate changed in between), then posts the new ones, each journal in
// one step, the checked ones with their balance check (domain.ErrInsufficientBalance when the
// available balance does not cover them).
//
// A posting stored before this call began belongs to an earlier attempt that did not finish:
// its resource write may still land, or Recover may give it back, and this call cannot tell
// which. It answers ports.ErrVersionConflict rather than build on it. So does a posting this
// call stored and gave back because a later run raised it with other terms (a refund of
// "everything left" after the amount left changed): its id is spent.
func (c *checkedPostings) take(ctx context.Context, ps []domain.Posting) error {
	kept := c.mine[:0]
	var dropped []domain.Posting
	for _, p := range c.mine {
		if containsPosting(ps, p) {
			kept = append(kept, p)
		} else {
			dropped = append(dropped, p)
		}
	}
	c.mine = kept
	if err := c.l.giveBack(ctx, dropped); err != nil {
		return err
	}
	var fresh []domain.Posting
	for _, p := range ps {
		if !containsPosting(c.mine, p) {
			fresh = append(fresh, p)
		}
	}
	for _, j := range domain.Journals(fresh) {
		stored, err := c.l.post(ctx, j, true, c.at)
		if err != nil {
			return err
		}
		if stored < len(j) {
			// What this call stored of it, if anything, stays open: Recover gives it back once
			// it sees that the resource does not show it.
			return fmt.Errorf("mongo post %s: an earlier attempt of this change stored it and did not finish: %w",
				j[0].ID, ports.ErrVersionConflict)
		}
		c.mine = append(c.mine, j...)
	}
	return nil
}

// containsPosting tells whether ps holds p, dates aside: a change applied again after a lost
// race is dated again, and is the same movement.
func containsPosting(ps []domain.Posting, p domain.Posting) bool {
	p.At = time.Time{}
	for _, q := range ps {
		q.At = time.Time{}
		if q == p {
			return true
		}
	}
	return false
}

// fail ends a call whose resource write did not happen, for cause, and returns cause: it gives
// back every posting the call holds. A write that may have happened (a writeUnknown cause)
// gives nothing back: its postings stay open for Recover to judge. A posting that could not be
// given back now stays open too and Recover gives it back later; cause keeps its identity and
// says so in its text.
func (c *checkedPostings) fail(ctx context.Context, cause error) error {
	if len(c.mine) == 0 || mayHaveLanded(cause) {
		return cause
	}
	ctx, cancel := c.l.s.afterCall(ctx)
	defer cancel()
	err := c.l.giveBack(ctx, c.mine)
	c.mine = nil
	if err != nil {
		return fmt.Errorf("%w (the balance it held comes back through Recover: %v)", cause, err)
	}
	return cause
}

// confirm clears the open mark of the call's journals: their resource write is stored.
func (c *checkedPostings) confirm(ctx context.Context) error {
	return c.l.close(ctx, c.mine)
}

// settleLedger does what follows a stored write: it clears the open marks of the postings the call
// posted first, and posts and clears the postings the document holds pending (version is the
// version written). Either may fail (the database went away just now) without undoing the
// stored change, so a failure is not the call's: it is logged, and Recover completes the work
// (a mark left behind costs it one look at the resource, which shows the write; pending
// postings wait in the document).
func (s *Store) settleLedger(ctx context.Context, held *checkedPostings, coll *mdb.Collection, id string, version, outboxRev int64, pending []postingDoc) {
	ctx, cancel := s.afterCall(ctx)
	defer cancel()
	err := held.confirm(ctx)
	if _, perr := s.ledger.postPending(ctx, coll, id, version, outboxRev, pending); perr != nil {
		err = perr
	}
	if err != nil {
		s.cfg.Logger.Warn("mongo: the ledger work after a stored change is left to Recover",
			"collection", coll.Name(), "id", id, "error", err.Error())
	}
}

// giveBack posts the voids of each journal of ps as one journal (stored once whoever does it)
// and clears its open mark.
func (l *LedgerRepository) giveBack(ctx context.Context, ps []domain.Posting) error {
	var failed []string
	var last error
	for _, j := range domain.Journals(ps) {
		if _, err := l.post(ctx, voids(j), false, l.s.cfg.Clock.Now()); err != nil {
			failed, last = append(failed, j[0].ID), err
			continue
		}
		if err := l.close(ctx, j); err != nil {
			failed, last = append(failed, j[0].ID), err
		}
	}
	if last != nil {
		return fmt.Errorf("give back %s: %w", strings.Join(failed, ", "), last)
	}
	return nil
}

// voids are the postings that give back the journal j, one journal too (domain.Posting.Void).
func voids(j []domain.Posting) []domain.Posting {
	out := make([]domain.Posting, len(j))
	for i, p := range j {
		out[i] = p.Void()
	}
	return out
}

// close clears the open mark of the journals holding ps: an update of each document that may
// hold them, named by a posting's journal or by its own id (see post) — one for a journal of
// one posting, which is what checked postings are — by _id alone, which FerretDB hands down
// to its backend's index. An id naming no document matches nothing.
func (l *LedgerRepository) close(ctx context.Context, ps []domain.Posting) error {
	done := map[string]bool{}
	for _, p := range ps {
		for _, id := range []string{p.JournalID(), p.ID} {
			if done[id] {
				continue
			}
			done[id] = true
			if _, err := l.entries.UpdateOne(ctx, bson.D{{Key: "_id", Value: id}}, bson.D{{Key: "$unset", Value: bson.D{{Key: "open", Value: ""}}}}); err != nil {
				return mapErr(ctx, "close entry "+id, err)
			}
		}
	}
	return nil
}

// postPending posts the pending postings of document id of coll, stored at version (with
// outbox revision outboxRev), each journal in one step (the array may hold the postings of
// several changes, carried over), and then clears them from the document if it is still in
// that state, under the claim of that state (writeClaimed). A write that got in between carried
// them over (it only appends to the array) and its writer posts and clears them; clearing
// them anyway would lose the ones it added. So does a writer holding the claim now: the clear
// is left to it (or to Recover). Posting is idempotent, so a journal met twice (two writers,
// or a writer and Recover) is stored once. The caller holds the document's lock. It reports
// how many entries it stored.
func (l *LedgerRepository) postPending(ctx context.Context, coll *mdb.Collection, id string, version, outboxRev int64, pending []postingDoc) (int, error) {
	if len(pending) == 0 {
		return 0, nil
	}
	n := 0
	for _, j := range domain.Journals(pendingPostings(pending)) {
		stored, err := l.post(ctx, j, false, l.s.cfg.Clock.Now())
		n += stored
		if err != nil {
			return n, err
		}
	}
	_, err := l.s.writeClaimed(ctx, stateKey(coll.Name(), id, version, outboxRev), "clear the pending postings of "+id,
		func(ctx context.Context) (*mdb.UpdateResult, error) {
			return coll.UpdateOne(ctx, stateFilter(id, version, outboxRev),
				bson.D{{Key: "$unset", Value: bson.D{{Key: "ledgerPending", Value: ""}, {Key: "ledgerDue", Value: ""}}}})
		})
	return n, err
}

// pendingFields are the ledger fields of a document holding pending, written at now.
func pendingFields(pending []postingDoc, now time.Time) ledgerFields {
	if len(pending) == 0 {
		return ledgerFields{}
	}
	due := now.UTC().Truncate(time.Millisecond)
	return ledgerFields{LedgerPending: pending, LedgerDue: &due}
}
