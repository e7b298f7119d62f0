package mongo

import (
	"context"
	"hash/fnv"
)

// localLocks serialise, inside one process, the writes to one document (Store.locks) and the
// posts to one account's ledger (Store.ledgerLocks). They are not what makes the adapter
// correct between processes — the write claims and unique indexes on the server do that, on
// FerretDB as on MongoDB (docs/adr/0005) — but they add two things:
//
//   - Goroutines of one process no longer race each other through the database: twenty
//     concurrent updates of one transaction cost twenty writes instead of the quadratic number
//     of lost claims, failed conditional writes and re-reads that optimistic retries take.
//   - With Config.NoClaims (one instance only), they are what keeps two writes of one document
//     from interleaving on a server that does not apply a conditional update atomically
//     (FerretDB v1).
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
