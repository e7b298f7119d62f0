package mongo

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	mdb "go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/pixgate/pixgate/domain"
	"github.com/pixgate/pixgate/ports"
)

// TransactionRepository stores transactions, one document each, with the deliveries of the
// events they raised in the same document. Build it with Open; use it through Store.
type TransactionRepository struct {
	s    *Store
	coll *mdb.Collection
}

var _ ports.TransactionRepository = (*TransactionRepository)(nil)

// withoutOutbox leaves the outbox out of aggregate reads: the application never reads it
// through the aggregate, and it carries a snapshot of the resource per event.
var withoutOutbox = bson.D{{Key: "outbox", Value: 0}}

// Create inserts the transaction's document, at version 1, with its raised events as pending
// deliveries and its raised postings (a new transaction has none, but one built further along
// may) posted as any change's are (see write.go); then it records the version on t and
// forgets the events and postings, as stored. The unique indexes on _id and (accountId, idem)
// answer the duplicates, and the unique payKey index a repeated payment token.
func (r *TransactionRepository) Create(ctx context.Context, t *domain.Transaction) error {
	snap := fromTransaction(t)
	snap.Fields.Version = 1
	return create(ctx, r.s, r.coll, "transaction", t,
		func(box outboxFields, pending ledgerFields) any {
			return txDoc{ID: snap.ID, Fields: snap.Fields, Box: box, Ledger: pending}
		},
		func(ctx context.Context) (bool, error) {
			return anyExists(ctx, r.coll, bson.D{{Key: "_id", Value: t.ID()}},
				bson.D{{Key: "accountId", Value: t.AccountID()}, {Key: "idem", Value: snap.Fields.Idem}},
				bson.D{{Key: "payKey", Value: snap.Fields.PayKey}})
		})
}

// Get returns the account's transaction id.
//
// It reads by _id alone and checks the account here: a filter of _id alone is the one lookup
// every server answers from its primary key (FerretDB v1 pushes no other filter down to its
// backend: _id and accountId together make it read the whole collection).
func (r *TransactionRepository) Get(ctx context.Context, accountID, id string) (*domain.Transaction, error) {
	ctx, cancel := r.s.op(ctx)
	defer cancel()
	t, err := r.findOne(ctx, bson.D{{Key: "_id", Value: id}})
	if err != nil {
		return nil, err
	}
	if t.AccountID() != accountID {
		return nil, fmt.Errorf("mongo get transaction: %w", domain.ErrNotFound)
	}
	return t, nil
}

// GetByIdempotencyKey returns the account's transaction created with key.
func (r *TransactionRepository) GetByIdempotencyKey(ctx context.Context, accountID, key string) (*domain.Transaction, error) {
	if key == "" {
		return nil, fmt.Errorf("mongo get transaction by idempotency key: %w", domain.ErrNotFound)
	}
	ctx, cancel := r.s.op(ctx)
	defer cancel()
	return r.findOne(ctx, bson.D{{Key: "accountId", Value: accountID}, {Key: "idem", Value: idemSlot(key, "")}})
}

// FindByPaymentToken finds a transaction of any account by its payment page token, through
// the unique payKey index (see payKey: what the index compares is a hash of the token).
func (r *TransactionRepository) FindByPaymentToken(ctx context.Context, token string) (*domain.Transaction, error) {
	if token == "" {
		return nil, fmt.Errorf("mongo find transaction by payment token: %w", domain.ErrNotFound)
	}
	ctx, cancel := r.s.op(ctx)
	defer cancel()
	return r.findOne(ctx, bson.D{{Key: "payKey", Value: payKey(token, "")}})
}

// Find returns transaction id of any account.
func (r *TransactionRepository) Find(ctx context.Context, id string) (*domain.Transaction, error) {
	ctx, cancel := r.s.op(ctx)
	defer cancel()
	return r.findOne(ctx, bson.D{{Key: "_id", Value: id}})
}

func (r *TransactionRepository) findOne(ctx context.Context, filter bson.D) (*domain.Transaction, error) {
	var d txSnapshot
	err := r.coll.FindOne(ctx, filter, options.FindOne().SetProjection(withoutOutbox)).Decode(&d)
	if err != nil {
		return nil, mapErr(ctx, "get transaction", err)
	}
	return d.toTransaction()
}

// List counts the matching transactions and reads one page of them, newest first. The two
// reads are not one snapshot: a transaction created in between may show in one and not the
// other, as on any paged API.
func (r *TransactionRepository) List(ctx context.Context, f ports.TransactionFilter, p ports.Page) (ports.TransactionPage, error) {
	ctx, cancel := r.s.op(ctx)
	defer cancel()
	skip, p := int64(p.Skip()), p.Clamped()
	filter := listFilter(f)
	total, err := r.coll.CountDocuments(ctx, filter)
	if err != nil {
		return ports.TransactionPage{}, mapErr(ctx, "count transactions", err)
	}
	page := ports.TransactionPage{Items: []*domain.Transaction{}, Total: int(total)}
	if skip >= total {
		return page, nil
	}
	opts := options.Find().SetSort(listOrder).SetSkip(skip).SetLimit(int64(p.Size)).SetProjection(withoutOutbox)
	page.Items, err = r.findMany(ctx, filter, opts)
	return page, err
}

// listOrder is the order of every list: newest first, ties by id, as the indexes keep it.
var listOrder = bson.D{{Key: "createdAt", Value: -1}, {Key: "_id", Value: -1}}

func listFilter(f ports.TransactionFilter) bson.D {
	q := bson.D{{Key: "accountId", Value: f.AccountID}}
	if f.StartDate != nil || f.EndDate != nil {
		r := bson.D{}
		if f.StartDate != nil {
			r = append(r, bson.E{Key: "$gte", Value: f.StartDate.UTC()})
		}
		if f.EndDate != nil {
			r = append(r, bson.E{Key: "$lte", Value: f.EndDate.UTC()})
		}
		q = append(q, bson.E{Key: "createdAt", Value: r})
	}
	if len(f.Statuses) > 0 {
		in := make(bson.A, len(f.Statuses))
		for i, s := range f.Statuses {
			in[i] = string(s)
		}
		q = append(q, bson.E{Key: "status", Value: bson.D{{Key: "$in", Value: in}}})
	}
	if len(f.PaymentMethods) > 0 {
		in := make(bson.A, len(f.PaymentMethods))
		for i, m := range f.PaymentMethods {
			in[i] = string(m)
		}
		q = append(q, bson.E{Key: "paymentMethod", Value: bson.D{{Key: "$in", Value: in}}})
	}
	if f.CustomerEmail != "" {
		q = append(q, bson.E{Key: "search.email", Value: strings.ToLower(f.CustomerEmail)})
	}
	if f.CustomerName != "" {
		// Both sides lower-cased in Go rather than the regex's "i" option: the server's
		// case folding of non-ASCII letters differs between MongoDB and FerretDB.
		q = append(q, bson.E{Key: "search.name", Value: bson.D{{Key: "$regex", Value: regexp.QuoteMeta(strings.ToLower(f.CustomerName))}}})
	}
	if f.CustomerDocument != "" {
		q = append(q, bson.E{Key: "customer.document.value", Value: f.CustomerDocument})
	}
	if f.CustomerPhone != "" {
		q = append(q, bson.E{Key: "search.phones", Value: f.CustomerPhone})
	}
	if f.ID != "" {
		q = append(q, bson.E{Key: "_id", Value: f.ID})
	}
	if f.EndToEnd != "" {
		q = append(q, bson.E{Key: "endToEnd", Value: f.EndToEnd})
	}
	if f.EndToEndRefund != "" {
		q = append(q, bson.E{Key: "endToEndRefund", Value: f.EndToEndRefund})
	}
	if f.ExternalCode != "" {
		q = append(q, bson.E{Key: "externalCode", Value: f.ExternalCode})
	}
	if f.MinAmount != nil || f.MaxAmount != nil {
		r := bson.D{}
		if f.MinAmount != nil {
			r = append(r, bson.E{Key: "$gte", Value: int64(*f.MinAmount)})
		}
		if f.MaxAmount != nil {
			r = append(r, bson.E{Key: "$lte", Value: int64(*f.MaxAmount)})
		}
		q = append(q, bson.E{Key: "amount", Value: r})
	}
	return q
}

func (r *TransactionRepository) findMany(ctx context.Context, filter bson.D, opts *options.FindOptionsBuilder) ([]*domain.Transaction, error) {
	return findAll(ctx, r.coll, "find transactions", filter, opts, (*txSnapshot).toTransaction)
}

// Update reads the transaction, applies fn and writes the result only if the stored version is
// still the one read: updateOne({_id, version: v}, {$set: fields and version v+1, $push: the new
// deliveries and pending postings}). Losing that race (nothing matched) means another writer
// got in between: read again and apply fn again, a bounded number of times. The aggregate's
// fields, its new deliveries and its unchecked postings go in one single-document write, so a
// status change, its notification and its entries are stored together or not at all; a
// checked posting (a refund's hold) is posted before that write, and given back if the write
// does not happen (see write.go).
func (r *TransactionRepository) Update(ctx context.Context, accountID, id string, fn func(*domain.Transaction) error) (*domain.Transaction, error) {
	return updateVersioned(ctx, r.s, r.coll, accountID, id, r.findForUpdate, fn,
		func(t *domain.Transaction) any { return fromTransaction(t).Fields })
}

// findForUpdate reads a transaction and the postings its document holds pending.
func (r *TransactionRepository) findForUpdate(ctx context.Context, filter bson.D) (*domain.Transaction, docState, error) {
	var d txDoc
	if err := r.coll.FindOne(ctx, filter, options.FindOne().SetProjection(withoutOutbox)).Decode(&d); err != nil {
		return nil, docState{}, mapErr(ctx, "get transaction", err)
	}
	t, err := (&txSnapshot{ID: d.ID, Fields: d.Fields}).toTransaction()
	return t, docState{pending: d.Ledger.LedgerPending, outboxRev: d.Box.OutboxRev}, err
}

// ListExpired returns transactions awaiting payment whose QR code expired at or before now,
// the earliest expiry first.
func (r *TransactionRepository) ListExpired(ctx context.Context, now time.Time, limit int) ([]*domain.Transaction, error) {
	if limit <= 0 {
		return []*domain.Transaction{}, nil
	}
	ctx, cancel := r.s.op(ctx)
	defer cancel()
	filter := bson.D{
		{Key: "status", Value: string(domain.TxPixQRCodeGenerated)},
		{Key: "pix.expiresAt", Value: bson.D{{Key: "$lte", Value: now.UTC()}}},
	}
	opts := options.Find().SetSort(bson.D{{Key: "pix.expiresAt", Value: 1}, {Key: "_id", Value: 1}}).
		SetLimit(int64(limit)).SetProjection(withoutOutbox)
	return r.findMany(ctx, filter, opts)
}

// ListDevolutionsDue returns the transactions whose devolutionDue is at or before until, the
// earliest first, through the (devolutionDue, _id) index: a transaction with no devolution due
// holds null there, outside the range.
func (r *TransactionRepository) ListDevolutionsDue(ctx context.Context, until time.Time, limit int) ([]*domain.Transaction, error) {
	if limit <= 0 {
		return []*domain.Transaction{}, nil
	}
	ctx, cancel := r.s.op(ctx)
	defer cancel()
	filter := bson.D{{Key: "devolutionDue", Value: bson.D{{Key: "$lte", Value: until.UTC()}}}}
	opts := options.Find().SetSort(bson.D{{Key: "devolutionDue", Value: 1}, {Key: "_id", Value: 1}}).
		SetLimit(int64(limit)).SetProjection(withoutOutbox)
	return r.findMany(ctx, filter, opts)
}

// ListByStatus returns transactions in status whose last change happened at or before until,
// oldest change first.
func (r *TransactionRepository) ListByStatus(ctx context.Context, status domain.TransactionStatus, until time.Time, limit int) ([]*domain.Transaction, error) {
	if limit <= 0 {
		return []*domain.Transaction{}, nil
	}
	ctx, cancel := r.s.op(ctx)
	defer cancel()
	opts := options.Find().SetSort(byLastChange).SetLimit(int64(limit)).SetProjection(withoutOutbox)
	return r.findMany(ctx, statusUntil(string(status), until), opts)
}

var byLastChange = bson.D{{Key: "updatedAt", Value: 1}, {Key: "_id", Value: 1}}

func statusUntil(status string, until time.Time) bson.D {
	return bson.D{{Key: "status", Value: status}, {Key: "updatedAt", Value: bson.D{{Key: "$lte", Value: until.UTC()}}}}
}
