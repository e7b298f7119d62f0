package mongo

import (
	"context"
	"errors"
	"strconv"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	mdb "go.mongodb.org/mongo-driver/v2/mongo"
)

// collClaims holds the write claims (docs/adr/0005).
const collClaims = "claims"

// claimDoc is one write claim: _id is what it claims (a document in the state its writer read
// it, or a document as a whole), at when it was taken, by the taker's clock.
type claimDoc struct {
	ID string    `bson:"_id"`
	At time.Time `bson:"at"`
}

// claimGenerations bounds how many stale claims of one key a writer takes over in one try.
const claimGenerations = 8

// claim is a claim held by this call; release gives it up.
type claim struct {
	s   *Store
	ids []string // the claim inserted, and the stale ones it took over
}

// claimWrite claims key, the right to write one document in the state key names (for
// example "transactions/<id>/v3/o7": version 3, outbox revision 7), before the write. The
// claim is a document of the claims collection whose _id is key with a generation suffix
// ("#0"), and the unique _id lets one writer in: across any number of instances, one writer
// at a time writes a document in one state, on a server whose conditional updates are not
// atomic (FerretDB v1) as on MongoDB. ok false means someone else holds it now; the caller
// reads the document again (it has most likely moved on) and retries.
//
// A claim whose writer died before releasing it stays. Once it is older than
// Config.RecoverAfter, longer than any call may still be writing (every write runs under
// OpTimeout, and RecoverAfter exceeds it), it is stale: the next generation of the key is
// claimed instead, and released with it. A stale claim whose write landed blocks nothing
// (the document moved on to another state, whose key is another).
func (s *Store) claimWrite(ctx context.Context, key string) (*claim, bool, error) {
	c := &claim{s: s}
	if s.cfg.NoClaims {
		return c, true, nil
	}
	now := s.cfg.Clock.Now().UTC().Truncate(time.Millisecond)
	for gen := 0; gen < claimGenerations; gen++ {
		id := key + "#" + strconv.Itoa(gen)
		_, err := s.claims.InsertOne(ctx, claimDoc{ID: id, At: now})
		if err == nil {
			c.ids = append(c.ids, id)
			return c, true, nil
		}
		if !mdb.IsDuplicateKeyError(err) {
			return nil, false, mapErr(ctx, "claim "+key, err)
		}
		var held claimDoc
		err = s.claims.FindOne(ctx, bson.D{{Key: "_id", Value: id}}).Decode(&held)
		if errors.Is(err, mdb.ErrNoDocuments) {
			// Released in between: the write it guarded is done.
			return nil, false, nil
		}
		if err != nil {
			return nil, false, mapErr(ctx, "read claim "+key, err)
		}
		if now.Sub(held.At) < s.cfg.RecoverAfter {
			return nil, false, nil
		}
		c.ids = append(c.ids, id)
	}
	return nil, false, nil
}

// release deletes the claim once its write is known to be done (stored, or known not to
// have happened). A claim whose write's outcome is unknown (the database went away) is
// left: it goes stale and is taken over. A failed release only leaves a claim that goes
// stale, so it is not an error of the call.
func (c *claim) release(ctx context.Context) {
	if c == nil || len(c.ids) == 0 {
		return
	}
	ctx, cancel := c.s.afterCall(ctx)
	defer cancel()
	_, _ = c.s.claims.DeleteMany(ctx, bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: c.ids}}}})
	c.ids = nil
}

// stateKey names document id of coll in the state (version, outboxRev).
func stateKey(coll, id string, version, outboxRev int64) string {
	return coll + "/" + id + "/v" + strconv.FormatInt(version, 10) + "/o" + strconv.FormatInt(outboxRev, 10)
}

// writeClaimed makes write, one write of a document, under the claim of key (claimWrite), and
// releases the claim once the write returned. It answers whether the write matched its filter;
// false with a nil error also when someone else holds the claim: either way a lost race, after
// which the caller reads again and retries. An error of write (mapped under what) is a write
// that may still land: its claim stays, and goes stale, and the error says so to
// checkedPostings.fail (see writeUnknown).
func (s *Store) writeClaimed(ctx context.Context, key, what string, write func(context.Context) (*mdb.UpdateResult, error)) (bool, error) {
	c, ok, err := s.claimWrite(ctx, key)
	if err != nil || !ok {
		return false, err
	}
	res, err := write(ctx)
	if err != nil {
		return false, &writeUnknown{mapErr(ctx, what, err)}
	}
	c.release(ctx)
	return res.MatchedCount == 1, nil
}

// writeUnknown is the error of a write that failed in an unknown way (the database went away
// just now): the write may have happened, so what its call took must not be given back yet.
type writeUnknown struct{ err error }

func (e *writeUnknown) Error() string { return e.err.Error() }
func (e *writeUnknown) Unwrap() error { return e.err }

// mayHaveLanded tells whether err is, or wraps, a writeUnknown.
func mayHaveLanded(err error) bool {
	var u *writeUnknown
	return errors.As(err, &u)
}
