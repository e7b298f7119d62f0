package mongo

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"
	mdb "go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// IndexTxPayKey finds a transaction by its hosted payment page token (see payKey). It is
// unique: two transactions never share a token.
const IndexTxPayKey = "tx_pay_key"

// payTokensMigrated is the marker of a database whose transactions all have a payment token.
const payTokensMigrated = "paytokens"

// The payment token migration. Versions before the hosted payment page wrote transactions
// without a payment token, hence without payKey; a unique index over a field that documents
// lack counts them all as null and refuses the second (FerretDB v1 has no partial index to
// leave them out). MigratePaymentTokens gives each such document a fresh random token, so
// that its charge gets a payment page too, and only then creates the unique index.
//
// It is safe to run again, or from several instances at once: a document is changed only
// while it still has no payKey, and its version grows with the change, so that an Update that
// read it before works from a conflict, reads again and keeps the token. When two instances
// race on one document (FerretDB's conditional update is not atomic), the last token written
// stays: either is random and unique. A marker document records that the work is done; later
// starts read that one document and only ensure the index. As with the ledger migration, the
// old version must not run beside this one: its new documents would lack the key.
//
// It returns how many documents it gave a token.
func (s *Store) MigratePaymentTokens(ctx context.Context) (int, error) {
	done, err := s.ledger.marker(ctx, payTokensMigrated)
	if err != nil {
		return 0, err
	}
	n := 0
	if done == nil {
		if n, err = s.givePaymentTokens(ctx); err != nil {
			return n, err
		}
	}
	opCtx, cancel := s.op(ctx)
	defer cancel()
	m := unique(IndexTxPayKey, bson.D{{Key: "payKey", Value: 1}})
	if _, err := s.db.Collection(collTransactions).Indexes().CreateOne(opCtx, m); err != nil {
		return n, mapErr(opCtx, "create index "+IndexTxPayKey, err)
	}
	if done == nil {
		_, err = s.ledger.migrations.InsertOne(opCtx, migrationDoc{ID: payTokensMigrated, Done: true, CreatedAt: s.cfg.Clock.Now().UTC()})
		if err != nil && !mdb.IsDuplicateKeyError(err) {
			return n, mapErr(opCtx, "mark the payment tokens migrated", err)
		}
	}
	return n, nil
}

// givePaymentTokens writes a token on every transaction document that has no payKey.
func (s *Store) givePaymentTokens(ctx context.Context) (int, error) {
	coll := s.db.Collection(collTransactions)
	missing := bson.D{{Key: "payKey", Value: bson.D{{Key: "$exists", Value: false}}}}
	cur, err := coll.Find(ctx, missing, options.Find().SetProjection(bson.D{{Key: "_id", Value: 1}}).SetBatchSize(500))
	if err != nil {
		return 0, mapErr(ctx, "find transactions without a payment token", err)
	}
	defer cur.Close(context.WithoutCancel(ctx))
	n := 0
	for cur.Next(ctx) {
		var d struct {
			ID string `bson:"_id"`
		}
		if err := cur.Decode(&d); err != nil {
			return n, mapErr(ctx, "find transactions without a payment token", err)
		}
		token := newPaymentToken()
		opCtx, cancel := s.op(ctx)
		res, err := coll.UpdateOne(opCtx, append(bson.D{{Key: "_id", Value: d.ID}}, missing...), bson.D{
			{Key: "$set", Value: bson.D{{Key: "payToken", Value: token}, {Key: "payKey", Value: payKey(token, d.ID)}}},
			{Key: "$inc", Value: bson.D{{Key: "version", Value: int64(1)}}},
		})
		cancel()
		if err != nil {
			return n, mapErr(ctx, "give transaction "+d.ID+" a payment token", err)
		}
		n += int(res.ModifiedCount)
	}
	return n, mapErr(ctx, "find transactions without a payment token", cur.Err())
}

// newPaymentToken makes a token as system.Capabilities does (192 random bits, URL-safe
// base64). The migration runs inside the adapter, before any port is wired, so it draws its
// own randomness.
func newPaymentToken() string {
	var b [24]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(fmt.Sprintf("crypto/rand failed: %v", err))
	}
	return base64.RawURLEncoding.EncodeToString(b[:])
}
