package mongo

import (
	"context"
	"errors"
	"slices"

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
	// IndexWdAccountCreated serves an account's withdrawals oldest first.
	IndexWdAccountCreated = "wd_account_created"
	// IndexWdPayoutDue finds the withdrawals whose payout is due (ListPayoutsDue).
	IndexWdPayoutDue = "wd_payout_due"
	// IndexTxDevolutionDue finds the refunds whose devolution is due (ListDevolutionsDue).
	IndexTxDevolutionDue = "tx_devolution_due"
	// IndexLedgerSeq numbers each account's journals (by their first line); it finds the head.
	IndexLedgerSeq = "ledger_account_seq"
	// IndexLedgerCreated serves statements: their order and their date filters.
	IndexLedgerCreated = "ledger_account_created"
	// IndexCredentialSlot keeps the cap on an account's active credentials.
	IndexCredentialSlot = "credential_slot"
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
	tx = append(tx, pixLocationIndexes()...)
	tx = append(tx, outboxIndexes("tx")...)
	tx = append(tx, index("tx_ledger_due", bson.D{{Key: "ledgerDue", Value: 1}}))
	// The devolution outbox's due refunds; a transaction with none holds null, outside the range.
	tx = append(tx, index(IndexTxDevolutionDue, bson.D{{Key: "devolutionDue", Value: 1}, {Key: "_id", Value: 1}}))
	wd := []mdb.IndexModel{
		unique("wd_account_idem", account("idem")),
		// ListByAccount, and the ledger migration, walk an account's withdrawals oldest first.
		index(IndexWdAccountCreated, bson.D{{Key: "accountId", Value: 1}, {Key: "createdAt", Value: 1}, {Key: "_id", Value: 1}}),
		index("wd_status_updated", bson.D{{Key: "status", Value: 1}, {Key: "updatedAt", Value: 1}, {Key: "_id", Value: 1}}),
		index("wd_ledger_due", bson.D{{Key: "ledgerDue", Value: 1}}),
		// The payout outbox's due work; done payouts hold null, outside its range.
		index(IndexWdPayoutDue, bson.D{{Key: "payoutDue", Value: 1}, {Key: "_id", Value: 1}}),
	}
	wd = append(wd, outboxIndexes("wd")...)
	all := map[string][]mdb.IndexModel{
		collTransactions: tx,
		collWithdrawals:  wd,
		collAccounts:     {index("account_created", bson.D{{Key: "createdAt", Value: 1}, {Key: "_id", Value: 1}})},
		collCredentials: {
			index("credential_account_created", bson.D{
				{Key: "accountId", Value: 1}, {Key: "createdAt", Value: 1}, {Key: "_id", Value: 1}}),
			// The places of an account's active credentials (the cap). Sparse, so that revoked
			// credentials and those stored before the cap, which have no slot, never collide.
			// FerretDB v1 ignores the option but indexes a missing field as SQL NULL, and NULLs
			// never collide in a unique index there either.
			{Keys: bson.D{{Key: "slot", Value: 1}}, Options: options.Index().SetName(IndexCredentialSlot).SetUnique(true).SetSparse(true)},
		},
		collLedger: {
			// The line numbers: one journal per (account, first line). The head, Scan and Ledgers read it.
			unique(IndexLedgerSeq, bson.D{{Key: "accountId", Value: 1}, {Key: "seq", Value: 1}}),
			// Statements: newest first, cut by dates (see Entries).
			index(IndexLedgerCreated, bson.D{{Key: "accountId", Value: 1}, {Key: "createdAt", Value: 1}, {Key: "seq", Value: 1}}),
			// Recover's open journals.
			index("ledger_open", bson.D{{Key: "open", Value: 1}}),
		},
		collPayments: {
			index("payment_late", bson.D{{Key: "late", Value: 1}, {Key: "createdAt", Value: 1}, {Key: "_id", Value: 1}}),
			// The devolution outbox's due late payments (LateDevolutionsDue).
			index("payment_devolution_due", bson.D{{Key: "devolutionDue", Value: 1}, {Key: "_id", Value: 1}}),
		},
	}
	// One createIndexes command per index: FerretDB v1 crashes the connection when one
	// command names several indexes that all exist already (every restart), while a single
	// existing index is a no-op there as on MongoDB.
	for _, name := range []string{collTransactions, collWithdrawals, collAccounts, collCredentials, collLedger, collPayments} {
		for _, m := range all[name] {
			if _, err := s.db.Collection(name).Indexes().CreateOne(ctx, m); err != nil {
				return mapErr(ctx, "create indexes on "+name, err)
			}
		}
	}
	return s.dropObsoleteIndexes(ctx)
}

// obsoleteIndexes are indexes earlier versions created and this one no longer uses: the
// withdrawals' sequence numbers (the balance check before the ledger; new withdrawals have no
// seq, and a unique index over a missing field would let an account have one withdrawal only)
// and the withdrawals' balance sums by status.
var obsoleteIndexes = map[string][]string{collWithdrawals: {"wd_account_seq", "wd_account_status"}}

// dropObsoleteIndexes drops the obsolete indexes a database still has. Two instances starting
// at once may both try; the index one of them did not find is gone either way.
func (s *Store) dropObsoleteIndexes(ctx context.Context) error {
	for coll, names := range obsoleteIndexes {
		specs, err := s.db.Collection(coll).Indexes().ListSpecifications(ctx)
		if err != nil {
			return mapErr(ctx, "list indexes of "+coll, err)
		}
		for _, spec := range specs {
			if !slices.Contains(names, spec.Name) {
				continue
			}
			err := s.db.Collection(coll).Indexes().DropOne(ctx, spec.Name)
			var se mdb.ServerError
			if err != nil && !(errors.As(err, &se) && se.HasErrorCode(indexNotFound)) {
				return mapErr(ctx, "drop index "+spec.Name, err)
			}
		}
	}
	return nil
}

// indexNotFound is the server's IndexNotFound error code.
const indexNotFound = 27
