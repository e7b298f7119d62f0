package mongo

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	mdb "go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/pixgate/pixgate/domain"
	"github.com/pixgate/pixgate/ports"
)

// LedgerRepository is the double-entry ledger (see doc.go): one document per entry in the
// ledger collection, numbered per account under a unique index, and the registry of PIX
// payments in the payments collection. Build it with Open; use it through Store.
type LedgerRepository struct {
	s          *Store
	entries    *mdb.Collection
	payments   *mdb.Collection
	txColl     *mdb.Collection
	wdColl     *mdb.Collection
	migrations *mdb.Collection
}

var _ ports.Ledger = (*LedgerRepository)(nil)

// postingDoc is a posting waiting in a resource document's ledgerPending array. At is when its
// transition happened: the entry is dated then, however late it is posted (dates still never
// go back within a ledger, see domain.NextEntry).
type postingDoc struct {
	ID         string    `bson:"id"`
	Type       string    `bson:"type"`
	AccountID  string    `bson:"accountId"`
	Resource   string    `bson:"resource"`
	ResourceID string    `bson:"resourceId"`
	Debit      string    `bson:"debit"`
	Credit     string    `bson:"credit"`
	Amount     int64     `bson:"amount"`
	At         time.Time `bson:"at,omitempty"`
}

func fromPosting(p domain.Posting) postingDoc {
	return postingDoc{ID: p.ID, Type: string(p.Type), AccountID: p.AccountID, Resource: string(p.Resource),
		ResourceID: p.ResourceID, Debit: string(p.Debit), Credit: string(p.Credit), Amount: int64(p.Amount),
		At: p.At.UTC().Truncate(time.Millisecond)}
}

func (d postingDoc) toPosting() domain.Posting {
	p := domain.Posting{ID: d.ID, Type: domain.MovementType(d.Type), AccountID: d.AccountID,
		Resource: domain.ResourceKind(d.Resource), ResourceID: d.ResourceID, Debit: domain.LedgerAccount(d.Debit),
		Credit: domain.LedgerAccount(d.Credit), Amount: domain.Cents(d.Amount)}
	if !d.At.IsZero() {
		p.At = d.At.UTC()
	}
	return p
}

type balanceDoc struct {
	Available int64 `bson:"available"`
	Blocked   int64 `bson:"blocked"`
}

// entryDoc is one entry of the ledger. Its _id is the posting's id, so that a posting is
// stored once whoever posts it; (accountId, seq) is unique, so that an account's entries are
// numbered without gaps or doubles.
type entryDoc struct {
	ID         string     `bson:"_id"`
	AccountID  string     `bson:"accountId"`
	Seq        int64      `bson:"seq"`
	Type       string     `bson:"type"`
	Resource   string     `bson:"resource"`
	ResourceID string     `bson:"resourceId"`
	Debit      string     `bson:"debit"`
	Credit     string     `bson:"credit"`
	Amount     int64      `bson:"amount"`
	Checked    bool       `bson:"checked,omitempty"`
	At         time.Time  `bson:"at,omitempty"` // the posting's own date, when it had one
	CreatedAt  time.Time  `bson:"createdAt"`
	After      balanceDoc `bson:"after"`
	// Open marks an entry posted before its status change was written (a checked posting),
	// until the write is known to be stored or the entry given back. It holds when the entry
	// was posted, by this adapter's clock: Recover looks at the open entries older than
	// RecoverAfter. (createdAt will not do: it is the transition's date, from the
	// application's clock.)
	Open *time.Time `bson:"open,omitempty"`
}

func fromEntry(e domain.Entry) entryDoc {
	d := entryDoc{Seq: e.Seq, CreatedAt: e.CreatedAt.UTC(),
		After: balanceDoc{Available: int64(e.BalanceAfter.Available), Blocked: int64(e.BalanceAfter.Blocked)}}
	p := fromPosting(e.Posting)
	d.ID, d.AccountID, d.Type, d.Resource, d.ResourceID = p.ID, p.AccountID, p.Type, p.Resource, p.ResourceID
	d.Debit, d.Credit, d.Amount, d.Checked, d.At = p.Debit, p.Credit, p.Amount, e.Checked, p.At
	return d
}

func (d *entryDoc) posting() domain.Posting {
	p := postingDoc{ID: d.ID, Type: d.Type, AccountID: d.AccountID, Resource: d.Resource, ResourceID: d.ResourceID,
		Debit: d.Debit, Credit: d.Credit, Amount: d.Amount, At: d.At}.toPosting()
	p.Checked = d.Checked
	return p
}

func (d *entryDoc) toEntry() (domain.Entry, error) {
	return domain.Entry{Posting: d.posting(), Seq: d.Seq, CreatedAt: d.CreatedAt.UTC(),
		BalanceAfter: domain.LedgerBalance{Available: domain.Cents(d.After.Available), Blocked: domain.Cents(d.After.Blocked)}}, nil
}

// post stores p as the next entry of its account's ledger, unless an entry with p's id is
// stored already; it reports whether this call stored it. The entry is dated p.At, or at when
// p has no date. open marks the entry for Recover (see checkedPostings).
//
// One attempt reads the ledger's head (its highest seq, N), lets domain.NextEntry number,
// date and apply p after it, and inserts the entry as N+1. The unique index on (accountId,
// seq) admits one entry per number, and numbers are dense (N+1 is written only by someone who
// read N), so an insert that succeeds was computed from the entry right before it: the
// balance it carries, and a checked posting's check, saw every earlier movement of the
// account. A duplicate key means either that p is stored (its _id: done, nothing to do) or
// that another writer took N+1 (read again and retry, a bounded number of times, then
// ports.ErrVersionConflict). Which of the two unique indexes refused the insert is asked of
// the data, not of the error's text: FerretDB does not name the index.
//
// Inside one process the account's posts take turns (ledger locks), so that they do not race
// each other through the database; between processes the unique indexes decide, and unique
// indexes are atomic on FerretDB as on MongoDB, where conditional updates are not.
func (l *LedgerRepository) post(ctx context.Context, p domain.Posting, open bool, at time.Time) (bool, error) {
	unlock, err := l.s.lockLedger(ctx, p.AccountID)
	if err != nil {
		return false, err
	}
	defer unlock()
	what := "post " + p.ID
	for attempt := 0; attempt < l.s.cfg.MaxRetries; attempt++ {
		if attempt > 0 {
			if err := backoff(ctx, attempt); err != nil {
				return false, mapErr(ctx, what, err)
			}
		}
		head, err := l.head(ctx, p.AccountID)
		if err != nil {
			return false, err
		}
		e, err := domain.NextEntry(head, p, at)
		if err != nil {
			// A checked posting stored already is not refused for the money it took itself.
			if found, ferr := l.stored(ctx, p.ID); ferr != nil || found != nil {
				return false, ferr
			}
			return false, fmt.Errorf("mongo %s: %w", what, err)
		}
		doc := fromEntry(e)
		if open {
			now := l.s.cfg.Clock.Now().UTC()
			doc.Open = &now
		}
		_, err = l.entries.InsertOne(ctx, doc)
		if err == nil {
			return true, nil
		}
		if !mdb.IsDuplicateKeyError(err) {
			return false, mapErr(ctx, what, err)
		}
		if found, err := l.stored(ctx, p.ID); err != nil || found != nil {
			return false, err
		}
	}
	return false, fmt.Errorf("mongo %s: %w", what, ports.ErrVersionConflict)
}

// head is the account's latest entry, nil when it has none: one indexed read of the
// (accountId, seq) index from its end.
func (l *LedgerRepository) head(ctx context.Context, accountID string) (*domain.Entry, error) {
	var d entryDoc
	err := l.entries.FindOne(ctx, bson.D{{Key: "accountId", Value: accountID}},
		options.FindOne().SetSort(bson.D{{Key: "seq", Value: -1}})).Decode(&d)
	if errors.Is(err, mdb.ErrNoDocuments) {
		return nil, nil
	}
	if err != nil {
		return nil, mapErr(ctx, "read the ledger of "+accountID, err)
	}
	e, err := d.toEntry()
	return &e, err
}

// stored returns the entry of posting id, nil when there is none.
func (l *LedgerRepository) stored(ctx context.Context, id string) (*entryDoc, error) {
	var d entryDoc
	err := l.entries.FindOne(ctx, bson.D{{Key: "_id", Value: id}}).Decode(&d)
	if errors.Is(err, mdb.ErrNoDocuments) {
		return nil, nil
	}
	if err != nil {
		return nil, mapErr(ctx, "read entry "+id, err)
	}
	return &d, nil
}

// Balance is the account's latest entry's balance, and the sum of its charges awaiting
// payment: two indexed reads, whatever the length of the ledger. The sum walks the (accountId,
// status) index of transactions over the charges awaiting payment only.
func (l *LedgerRepository) Balance(ctx context.Context, accountID string) (domain.Balance, error) {
	ctx, cancel := l.s.op(ctx)
	defer cancel()
	var (
		wg              sync.WaitGroup
		head            *domain.Entry
		pending         int64
		headErr, sumErr error
	)
	wg.Go(func() { head, headErr = l.head(ctx, accountID) })
	wg.Go(func() { pending, sumErr = l.pending(ctx, accountID) })
	wg.Wait()
	if err := errors.Join(headErr, sumErr); err != nil {
		return domain.Balance{}, err
	}
	b := domain.Balance{Pending: domain.Cents(pending)}
	if head != nil {
		b.Available, b.Blocked = head.BalanceAfter.Available, head.BalanceAfter.Blocked
	}
	return b, nil
}

// pending sums the amounts of the account's charges awaiting payment. One $sum per $group:
// FerretDB v1 computes only the first accumulator of a $group.
func (l *LedgerRepository) pending(ctx context.Context, accountID string) (int64, error) {
	cur, err := l.txColl.Aggregate(ctx, mdb.Pipeline{
		{{Key: "$match", Value: bson.D{{Key: "accountId", Value: accountID}, {Key: "status", Value: string(domain.TxPixQRCodeGenerated)}}}},
		{{Key: "$group", Value: bson.D{{Key: "_id", Value: nil}, {Key: "sum", Value: bson.D{{Key: "$sum", Value: "$amount"}}}}}},
	})
	if err != nil {
		return 0, mapErr(ctx, "sum pending charges", err)
	}
	var rows []struct {
		Sum int64 `bson:"sum"`
	}
	if err := cur.All(ctx, &rows); err != nil {
		return 0, mapErr(ctx, "sum pending charges", err)
	}
	if len(rows) == 0 {
		return 0, nil
	}
	return rows[0].Sum, nil
}

// newestEntries is the order of a statement: by number, newest first. It is written on
// (createdAt, seq) because dates never go back within a ledger (domain.NextEntry), so that the
// (accountId, createdAt, seq) index serves the date filters and the order at once.
var newestEntries = bson.D{{Key: "createdAt", Value: -1}, {Key: "seq", Value: -1}}

// Entries walks the (accountId, createdAt, seq) index backwards from the newest entry the
// filter admits: the end date, and the cursor f.Before turned into a date bound (the date of
// entry Before-1, one point read), so that a page deep in a long ledger costs what the first
// one does. Types are checked on the entries the walk meets.
func (l *LedgerRepository) Entries(ctx context.Context, f ports.EntryFilter, limit int) ([]domain.Entry, error) {
	if limit <= 0 || f.Before == 1 {
		return []domain.Entry{}, nil
	}
	ctx, cancel := l.s.op(ctx)
	defer cancel()
	end := f.EndDate
	if f.Before > 0 {
		var prev entryDoc
		err := l.entries.FindOne(ctx, bson.D{{Key: "accountId", Value: f.AccountID}, {Key: "seq", Value: f.Before - 1}},
			options.FindOne().SetProjection(bson.D{{Key: "createdAt", Value: 1}})).Decode(&prev)
		switch {
		case errors.Is(err, mdb.ErrNoDocuments):
			// A cursor past the head: nothing to bound.
		case err != nil:
			return nil, mapErr(ctx, "read the statement's cursor", err)
		case end == nil || prev.CreatedAt.Before(*end):
			end = &prev.CreatedAt
		}
	}
	return findAll(ctx, l.entries, "list entries", entryFilter(f, end),
		options.Find().SetSort(newestEntries).SetLimit(int64(limit)), (*entryDoc).toEntry)
}

// EntryFilter builds the query of a statement page, for the tests that read the query's plan;
// EntryOrder is its sort. Nothing else needs them. (Entries also bounds the date by the
// cursor's entry; this leaves that out.)
func EntryFilter(f ports.EntryFilter) bson.D { return entryFilter(f, f.EndDate) }

// EntryOrder is the sort of a statement page, exported beside EntryFilter.
func EntryOrder() bson.D { return append(bson.D{}, newestEntries...) }

// entryFilter is the query of a statement page, with end as the upper date bound.
func entryFilter(f ports.EntryFilter, end *time.Time) bson.D {
	q := bson.D{{Key: "accountId", Value: f.AccountID}}
	if f.Before > 0 {
		q = append(q, bson.E{Key: "seq", Value: bson.D{{Key: "$lt", Value: f.Before}}})
	}
	if f.StartDate != nil || end != nil {
		r := bson.D{}
		if f.StartDate != nil {
			r = append(r, bson.E{Key: "$gte", Value: f.StartDate.UTC()})
		}
		if end != nil {
			r = append(r, bson.E{Key: "$lte", Value: end.UTC()})
		}
		q = append(q, bson.E{Key: "createdAt", Value: r})
	}
	if len(f.Types) > 0 {
		in := make(bson.A, len(f.Types))
		for i, t := range f.Types {
			in[i] = string(t)
		}
		q = append(q, bson.E{Key: "type", Value: bson.D{{Key: "$in", Value: in}}})
	}
	return q
}

// scanBatch is how many entries Scan reads per query.
const scanBatch = 500

// Scan reads the ledger in batches by number, each batch its own query under the operation
// timeout, and calls fn between them: an audit of a long ledger is not bounded by one
// operation's timeout, and fn may take its time (or call the store) without holding a cursor.
func (l *LedgerRepository) Scan(ctx context.Context, accountID string, fn func(domain.Entry) error) error {
	var after int64
	for {
		batch, err := l.scanFrom(ctx, accountID, after)
		if err != nil {
			return err
		}
		for _, e := range batch {
			if err := fn(e); err != nil {
				return err
			}
		}
		if len(batch) < scanBatch {
			return nil
		}
		after = batch[len(batch)-1].Seq
	}
}

func (l *LedgerRepository) scanFrom(ctx context.Context, accountID string, after int64) ([]domain.Entry, error) {
	ctx, cancel := l.s.op(ctx)
	defer cancel()
	return findAll(ctx, l.entries, "scan the ledger of "+accountID,
		bson.D{{Key: "accountId", Value: accountID}, {Key: "seq", Value: bson.D{{Key: "$gt", Value: after}}}},
		options.Find().SetSort(bson.D{{Key: "seq", Value: 1}}).SetLimit(scanBatch), (*entryDoc).toEntry)
}

// Ledgers lists the distinct account ids of the ledger, sorted.
func (l *LedgerRepository) Ledgers(ctx context.Context) ([]string, error) {
	ctx, cancel := l.s.op(ctx)
	defer cancel()
	return accountIDs(ctx, l.entries)
}

// accountIDs lists the distinct account ids of coll, sorted. It groups rather than asking the
// distinct command, which FerretDB v1 refuses when it carries a time limit (maxTimeMS, which
// the driver adds under a deadline); sorted first, MongoDB walks an index starting with
// accountId.
func accountIDs(ctx context.Context, coll *mdb.Collection) ([]string, error) {
	cur, err := coll.Aggregate(ctx, mdb.Pipeline{
		{{Key: "$sort", Value: bson.D{{Key: "accountId", Value: 1}}}},
		{{Key: "$group", Value: bson.D{{Key: "_id", Value: "$accountId"}}}},
	})
	if err != nil {
		return nil, mapErr(ctx, "list the accounts of "+coll.Name(), err)
	}
	var rows []struct {
		ID string `bson:"_id"`
	}
	if err := cur.All(ctx, &rows); err != nil {
		return nil, mapErr(ctx, "list the accounts of "+coll.Name(), err)
	}
	ids := make([]string, len(rows))
	for i, r := range rows {
		ids[i] = r.ID
	}
	slices.Sort(ids)
	return ids, nil
}

// Post stores each posting in its account's ledger (see post), in order, skipping those
// stored already; the entry's _id, the posting id, makes exactly one of concurrent posts of
// one id store it, on every server. It stops at the first refusal; the postings before it
// stay stored, and a retry of the same call stores the rest once.
func (l *LedgerRepository) Post(ctx context.Context, postings ...domain.Posting) (int, error) {
	ctx, cancel := l.s.op(ctx)
	defer cancel()
	stored := 0
	for _, p := range postings {
		fresh, err := l.post(ctx, p, false, l.s.cfg.Clock.Now())
		if err != nil {
			return stored, err
		}
		if fresh {
			stored++
		}
	}
	return stored, nil
}

// paymentDoc is a claimed PIX payment; its _id, the end-to-end id, makes the first claim win.
type paymentDoc struct {
	EndToEndID    string    `bson:"_id"`
	TransactionID string    `bson:"transactionId"`
	AccountID     string    `bson:"accountId"`
	Amount        int64     `bson:"amount"`
	Late          bool      `bson:"late"`
	CreatedAt     time.Time `bson:"createdAt"`
}

func (d *paymentDoc) toClaim() ports.PaymentClaim {
	return ports.PaymentClaim{EndToEndID: d.EndToEndID, TransactionID: d.TransactionID, AccountID: d.AccountID,
		Amount: domain.Cents(d.Amount), Late: d.Late, CreatedAt: d.CreatedAt.UTC()}
}

// ClaimPayment inserts the claim; the unique _id refuses a second claim of one end-to-end id,
// atomically on every server, and the claim stored first is read and returned instead. Times
// are kept to the millisecond, as BSON dates hold them.
func (l *LedgerRepository) ClaimPayment(ctx context.Context, c ports.PaymentClaim) (ports.PaymentClaim, error) {
	ctx, cancel := l.s.op(ctx)
	defer cancel()
	d := paymentDoc{EndToEndID: c.EndToEndID, TransactionID: c.TransactionID, AccountID: c.AccountID,
		Amount: int64(c.Amount), Late: c.Late, CreatedAt: c.CreatedAt.UTC().Truncate(time.Millisecond)}
	_, err := l.payments.InsertOne(ctx, d)
	if err == nil {
		return d.toClaim(), nil
	}
	if !mdb.IsDuplicateKeyError(err) {
		return ports.PaymentClaim{}, mapErr(ctx, "claim payment "+c.EndToEndID, err)
	}
	var prior paymentDoc
	if err := l.payments.FindOne(ctx, bson.D{{Key: "_id", Value: c.EndToEndID}}).Decode(&prior); err != nil {
		return ports.PaymentClaim{}, mapErr(ctx, "read payment "+c.EndToEndID, err)
	}
	return prior.toClaim(), nil
}

// MarkLate sets late on the claim; an unknown end-to-end id is domain.ErrNotFound.
func (l *LedgerRepository) MarkLate(ctx context.Context, endToEndID string) error {
	ctx, cancel := l.s.op(ctx)
	defer cancel()
	res, err := l.payments.UpdateOne(ctx, bson.D{{Key: "_id", Value: endToEndID}},
		bson.D{{Key: "$set", Value: bson.D{{Key: "late", Value: true}}}})
	if err != nil {
		return mapErr(ctx, "mark payment "+endToEndID+" late", err)
	}
	if res.MatchedCount == 0 {
		return fmt.Errorf("mongo mark payment %s late: %w", endToEndID, domain.ErrNotFound)
	}
	return nil
}

// LatePayments reads the late claims through the (late, createdAt, _id) index, oldest first.
func (l *LedgerRepository) LatePayments(ctx context.Context) ([]ports.PaymentClaim, error) {
	ctx, cancel := l.s.op(ctx)
	defer cancel()
	return findAll(ctx, l.payments, "list late payments", bson.D{{Key: "late", Value: true}},
		options.Find().SetSort(bson.D{{Key: "createdAt", Value: 1}, {Key: "_id", Value: 1}}),
		func(d *paymentDoc) (ports.PaymentClaim, error) { return d.toClaim(), nil })
}
