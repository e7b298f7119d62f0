package mongo

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"
	mdb "go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/pixgate/pixgate/domain"
)

// Index names of a dynamic charge's look-ups.
const (
	// IndexTxPixLocation finds a transaction by its charge's location id (see locKey).
	IndexTxPixLocation = "tx_pix_location"
	// IndexTxCobTxID finds a transaction by its charge's txid, for the acquirer's callback.
	IndexTxCobTxID = "tx_pix_cob_txid"
)

// pixLocationIndexes are unique, so that two charges never share a location or a txid (Create
// answers ErrDuplicate; on FerretDB too, whose unique indexes are atomic), and sparse, so that
// static charges and the documents written before dynamic charges existed, which have neither
// field, never collide: they need no migration. FerretDB v1 ignores the option but indexes a
// missing field as SQL NULL, and NULLs never collide in a unique index there either.
func pixLocationIndexes() []mdb.IndexModel {
	sparse := func(name, field string) mdb.IndexModel {
		return mdb.IndexModel{Keys: bson.D{{Key: field, Value: 1}}, Options: options.Index().SetName(name).SetUnique(true).SetSparse(true)}
	}
	return []mdb.IndexModel{sparse(IndexTxPixLocation, "pix.locKey"), sparse(IndexTxCobTxID, "pix.cobTxid")}
}

// locKey is the indexed form of a location id: the SHA-256 of the capability, as payKey is of
// the payment token, so that the index compares a hash of the secret and never the secret
// itself. "" (a static charge) stays "" and is left out of the document.
func locKey(id string) string {
	if id == "" {
		return ""
	}
	sum := sha256.Sum256([]byte(id))
	return hex.EncodeToString(sum[:])
}

// FindByPixLocation finds a transaction of any account by its charge's location id, through
// the unique tx_pix_location index.
func (r *TransactionRepository) FindByPixLocation(ctx context.Context, id string) (*domain.Transaction, error) {
	if id == "" {
		return nil, fmt.Errorf("mongo find transaction by pix location: %w", domain.ErrNotFound)
	}
	ctx, cancel := r.s.op(ctx)
	defer cancel()
	return r.findOne(ctx, bson.D{{Key: "pix.locKey", Value: locKey(id)}})
}

// FindByCobTxID finds a transaction of any account by its charge's txid, through the unique
// tx_pix_cob_txid index.
func (r *TransactionRepository) FindByCobTxID(ctx context.Context, txid string) (*domain.Transaction, error) {
	if txid == "" {
		return nil, fmt.Errorf("mongo find transaction by cob txid: %w", domain.ErrNotFound)
	}
	ctx, cancel := r.s.op(ctx)
	defer cancel()
	return r.findOne(ctx, bson.D{{Key: "pix.cobTxid", Value: txid}})
}
