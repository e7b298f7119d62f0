package mongo

import (
	"context"
	"hash/fnv"
)

// localLocks serialise, inside one process, the writes to one document (Store.locks) and the
// posts to one account's ledger (Store.ledgerLocks). They are not what makes the adapter
// correct between processes — the version checks and unique indexes on the server do that —
// but they add two things:
//
//   - Goroutines of one process no longer race each other through the database: twenty
//     concurrent updates of one transaction cost twenty writes instead of the quadratic number
//     of failed conditional writes and re-reads that optimistic retries take.
//   - Servers that do not execute a conditional update atomically stay correct for a single
//     instance. FerretDB v1 (the suites' database) reads the matching document, applies the
//     update in its own memory and writes the whole document back by _id: two concurrent
//     updateOne({_id, version: v}) both match and both write. Serialised here, they cannot
//     interleave. Several pixgate instances updating one document on such a server are NOT
//     safe; on MongoDB they are. The ledger does not depend on this: it rests on unique
//     indexes, which FerretDB enforces atomically (see doc.go).
//
// The locks are a fixed set of stripes, keyed by a hash: unrelated documents may share a
// stripe (they then wait for each other a little), and the set never grows. A caller never
// holds two stripes of one set at once, and takes a ledger stripe only while holding a
// document stripe, never the other way round, so stripes cannot deadlock.
type localLocks struct {
	stripes [256]chan struct{}
}

func newLocalLocks() *localLocks {
	l := &localLocks{}
	for i := range l.stripes {
		l.stripes[i] = make(chan struct{}, 1)
	}
	return l
}

// lock takes the stripe of key, waiting at most until ctx ends; the answer releases it.
func (l *localLocks) lock(ctx context.Context, key string) (func(), error) {
	h := fnv.New32a()
	_, _ = h.Write([]byte(key))
	stripe := l.stripes[h.Sum32()%uint32(len(l.stripes))]
	select {
	case stripe <- struct{}{}:
		return func() { <-stripe }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}
