package mongo

import (
	"context"

	"go.mongodb.org/mongo-driver/v2/bson"
	mdb "go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// Index names are fixed, so that an explain plan can be checked against them and a changed
// definition fails loudly at start (MongoDB refuses a second index of the same name with
// other keys) instead of piling up beside the old one.
const (
	// IndexTxDefault serves the default list order, the date filters and the id filter.
	IndexTxDefault = "tx_account_created"
	// IndexTxStatus serves the status filter and the balance aggregation.
	IndexTxStatus         = "tx_account_status"
	IndexTxPaymentMethod  = "tx_account_method"
	IndexTxEmail          = "tx_account_email"
	IndexTxName           = "tx_account_name"
	IndexTxDocument       = "tx_account_document"
	IndexTxPhone          = "tx_account_phone"
	IndexTxEndToEnd       = "tx_account_e2e"
	IndexTxEndToEndRefund = "tx_account_e2e_refund"
	IndexTxExternalCode   = "tx_account_external"
	IndexTxAmount         = "tx_account_amount"
	IndexTxIdempotency    = "tx_account_idem"
)

// newest is the suffix of every list index: the default order, so that a filtered page comes
// out of the index already sorted.
var newest = bson.D{{Key: "createdAt", Value: -1}, {Key: "_id", Value: -1}}

func keys(prefix bson.D, suffix bson.D) bson.D {
	out := append(bson.D{}, prefix...)
	return append(out, suffix...)
}

func index(name string, k bson.D) mdb.IndexModel {
	return mdb.IndexModel{Keys: k, Options: options.Index().SetName(name)}
}

func unique(name string, k bson.D) mdb.IndexModel {
	return mdb.IndexModel{Keys: k, Options: options.Index().SetName(name).SetUnique(true)}
}

func account(field string) bson.D {
	return bson.D{{Key: "accountId", Value: 1}, {Key: field, Value: 1}}
}

// outboxIndexes serve the outbox, in both collections: Claim looks for documents whose
// earliest pending delivery is due; RecordAttempt finds an event by id; Release finds the
// leases of one owner. The last two are multikey (over the outbox array).
func outboxIndexes(prefix string) []mdb.IndexModel {
	return []mdb.IndexModel{
		index(prefix+"_outbox_due", bson.D{{Key: "outboxDue", Value: 1}}),
		index(prefix+"_outbox_event", bson.D{{Key: "outbox.id", Value: 1}}),
		index(prefix+"_outbox_owner", bson.D{{Key: "outbox.owner", Value: 1}}),
	}
}

// createIndexes creates every index of every collection; creating an existing index with the
// same definition is a no-op, so this runs at every start.
func (s *Store) createIndexes(ctx context.Context) error {
	byAccount := bson.D{{Key: "accountId", Value: 1}}
	tx := []mdb.IndexModel{
		index(IndexTxDefault, keys(byAccount, newest)),
		index(IndexTxStatus, keys(account("status"), newest)),
		index(IndexTxPaymentMethod, keys(account("paymentMethod"), newest)),
		index(IndexTxEmail, keys(account("search.email"), newest)),
		// A case-insensitive substring is matched by a regular expression, which MongoDB
		// evaluates over the index keys of the account instead of over whole documents.
		index(IndexTxName, account("search.name")),
		index(IndexTxDocument, keys(account("customer.document.value"), newest)),
		index(IndexTxPhone, keys(account("search.phones"), newest)),
		index(IndexTxEndToEnd, account("endToEnd")),
		index(IndexTxEndToEndRefund, account("endToEndRefund")),
		index(IndexTxExternalCode, keys(account("externalCode"), newest)),
		index(IndexTxAmount, account("amount")),
		unique(IndexTxIdempotency, account("idem")),
		// The sweepers: QR codes that expired, and statuses settled after a while.
		index("tx_expiry", bson.D{{Key: "status", Value: 1}, {Key: "pix.expiresAt", Value: 1}}),
		index("tx_status_updated", bson.D{{Key: "status", Value: 1}, {Key: "updatedAt", Value: 1}, {Key: "_id", Value: 1}}),
	}
	tx = append(tx, outboxIndexes("tx")...)
	wd := []mdb.IndexModel{
		// The reservation token: one withdrawal per (account, seq). See doc.go.
		unique("wd_account_seq", bson.D{{Key: "accountId", Value: 1}, {Key: "seq", Value: -1}}),
		unique("wd_account_idem", account("idem")),
		index("wd_account_status", account("status")),
		index("wd_status_updated", bson.D{{Key: "status", Value: 1}, {Key: "updatedAt", Value: 1}, {Key: "_id", Value: 1}}),
	}
	wd = append(wd, outboxIndexes("wd")...)
	all := map[string][]mdb.IndexModel{
		collTransactions: tx,
		collWithdrawals:  wd,
		collAccounts:     {index("account_created", bson.D{{Key: "createdAt", Value: 1}, {Key: "_id", Value: 1}})},
		collCredentials: {index("credential_account_created", bson.D{
			{Key: "accountId", Value: 1}, {Key: "createdAt", Value: 1}, {Key: "_id", Value: 1}})},
	}
	// One createIndexes command per index: FerretDB v1 crashes the connection when one
	// command names several indexes that all exist already (every restart), while a single
	// existing index is a no-op there as on MongoDB.
	for _, name := range []string{collTransactions, collWithdrawals, collAccounts, collCredentials} {
		for _, m := range all[name] {
			if _, err := s.db.Collection(name).Indexes().CreateOne(ctx, m); err != nil {
				return mapErr(ctx, "create indexes on "+name, err)
			}
		}
	}
	return nil
}
