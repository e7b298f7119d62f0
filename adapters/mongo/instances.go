package mongo

import (
	"context"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	mdb "go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/pixgate/pixgate/ports"
)

// Instances is the registry of the live instances sharing the database: one document per
// instance in the instances collection, _id the instance's id (unique), seenAt its last
// heartbeat, by its own clock. Only its instance writes a document, so the upsert of a
// heartbeat never races another writer of it. Build it with Open; use it through Store.
type Instances struct {
	s    *Store
	coll *mdb.Collection
}

var _ ports.InstanceRegistry = (*Instances)(nil)

// Instances returns the registry of live instances.
func (s *Store) Instances() *Instances { return &Instances{s: s, coll: s.db.Collection(collInstances)} }

// forgetAfter is how many ttl an instance may stay silent before its document is deleted
// (it stopped counting after one ttl already).
const forgetAfter = 10

// Heartbeat upserts id's document with seenAt = now, deletes the documents silent for
// forgetAfter ttl, and counts those seen within ttl (the collection holds a few documents:
// the count reads them all).
func (r *Instances) Heartbeat(ctx context.Context, id string, now time.Time, ttl time.Duration) (int, error) {
	ctx, cancel := r.s.op(ctx)
	defer cancel()
	now = now.UTC().Truncate(time.Millisecond)
	_, err := r.coll.UpdateOne(ctx, bson.D{{Key: "_id", Value: id}},
		bson.D{{Key: "$set", Value: bson.D{{Key: "seenAt", Value: now}}}}, options.UpdateOne().SetUpsert(true))
	if err != nil {
		return 0, mapErr(ctx, "heartbeat of instance "+id, err)
	}
	if _, err := r.coll.DeleteMany(ctx, bson.D{{Key: "seenAt", Value: bson.D{{Key: "$lt", Value: now.Add(-forgetAfter * ttl)}}}}); err != nil {
		return 0, mapErr(ctx, "forget silent instances", err)
	}
	n, err := r.coll.CountDocuments(ctx, bson.D{{Key: "seenAt", Value: bson.D{{Key: "$gte", Value: now.Add(-ttl)}}}})
	if err != nil {
		return 0, mapErr(ctx, "count live instances", err)
	}
	return max(1, int(n)), nil
}

// Leave deletes id's document.
func (r *Instances) Leave(ctx context.Context, id string) error {
	ctx, cancel := r.s.op(ctx)
	defer cancel()
	_, err := r.coll.DeleteOne(ctx, bson.D{{Key: "_id", Value: id}})
	return mapErr(ctx, "leave instance "+id, err)
}
