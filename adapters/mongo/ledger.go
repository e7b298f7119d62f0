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

// LedgerRepository is the double-entry ledger (docs/adr/0001, 0007): one document per journal entry
// (the lines one change records in one step) in the ledger collection, numbered per account
// under a unique index, and the registry of PIX payments in the payments collection. Build it
// with Open; use it through Store.
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
// go back within a ledger, see domain.NextEntry). Journal is the id of the journal entry it
// belongs to (its own id when it is the first posting); it is absent from the postings a
// version before journals left pending (see pendingPostings).
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
	Journal    string    `bson:"journal,omitempty"`
}

func fromPosting(p domain.Posting) postingDoc {
	return postingDoc{ID: p.ID, Type: string(p.Type), AccountID: p.AccountID, Resource: string(p.Resource),
		ResourceID: p.ResourceID, Debit: string(p.Debit), Credit: string(p.Credit), Amount: int64(p.Amount),
		At: p.At.UTC().Truncate(time.Millisecond), Journal: p.JournalID()}
}

func (d postingDoc) toPosting() domain.Posting {
	p := domain.Posting{ID: d.ID, Type: domain.MovementType(d.Type), AccountID: d.AccountID,
		Resource: domain.ResourceKind(d.Resource), ResourceID: d.ResourceID, Debit: domain.LedgerAccount(d.Debit),
		Credit: domain.LedgerAccount(d.Credit), Amount: domain.Cents(d.Amount)}
	if !d.At.IsZero() {
		p.At = d.At.UTC()
	}
	if d.Journal != d.ID {
		p.Journal = d.Journal
	}
	return p
}

// pendingPostings are the postings of a ledgerPending array, each in its journal. Postings a
// version before journals left pending carry none: those of one document are taken as one
// journal, named after the first of them. They are all unchecked, of one account and one
// resource, and their changes are stored, so recording them in one step is what their changes
// would have wanted, and every reader of the array groups them alike (the old version adds no
// more of them).
func pendingPostings(pending []postingDoc) []domain.Posting {
	out := make([]domain.Posting, len(pending))
	legacy := ""
	for i, d := range pending {
		out[i] = d.toPosting()
		if d.Journal != "" {
			continue
		}
		if legacy == "" {
			legacy = d.ID
		} else {
			out[i].Journal = legacy
		}
	}
	return out
}

type balanceDoc struct {
	Available int64 `bson:"available"`
	Blocked   int64 `bson:"blocked"`
}

// entryDoc is one journal entry of the ledger: the lines one status change recorded in one
// step (docs/adr/0001). Its own fields are its first line, so a document written
// before journals is a journal of one line; Legs are the lines after it. Its _id is the first
// posting's id, so that a journal is stored once whoever posts it; (accountId, seq) is unique
// on the first line's number, so that an account's lines are numbered without gaps or
// doubles; Last is the number of its last line (seq + len(legs); absent before journals).
type entryDoc struct {
	ID         string     `bson:"_id"`
	AccountID  string     `bson:"accountId"`
	Seq        int64      `bson:"seq"`
	Last       int64      `bson:"last,omitempty"`
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
	Legs       []legDoc   `bson:"legs,omitempty"`
	// Open marks a journal posted before its status change was written (a checked posting),
	// until the write is known to be stored or the journal given back. It holds when the
	// journal was posted, by this adapter's clock: Recover looks at the open journals older
	// than RecoverAfter. (createdAt will not do: it is the transition's date, from the
	// application's clock.)
	Open *time.Time `bson:"open,omitempty"`
}

// legDoc is a line of a journal after its first: numbered seq+1, seq+2..., dated, and of the
// account and resource, as the first line is.
type legDoc struct {
	ID      string     `bson:"id"`
	Type    string     `bson:"type"`
	Debit   string     `bson:"debit"`
	Credit  string     `bson:"credit"`
	Amount  int64      `bson:"amount"`
	Checked bool       `bson:"checked,omitempty"`
	At      time.Time  `bson:"at,omitempty"`
	After   balanceDoc `bson:"after"`
}

// fromJournal is the document of the lines es, which domain.NextJournal numbered after one
// another in one ledger.
func fromJournal(es []domain.Entry) entryDoc {
	e := es[0]
	d := entryDoc{Seq: e.Seq, Last: es[len(es)-1].Seq, CreatedAt: e.CreatedAt.UTC(), After: fromLedgerBalance(e.BalanceAfter)}
	p := fromPosting(e.Posting)
	d.ID, d.AccountID, d.Type, d.Resource, d.ResourceID = p.ID, p.AccountID, p.Type, p.Resource, p.ResourceID
	d.Debit, d.Credit, d.Amount, d.Checked, d.At = p.Debit, p.Credit, p.Amount, e.Checked, p.At
	for _, e := range es[1:] {
		q := fromPosting(e.Posting)
		d.Legs = append(d.Legs, legDoc{ID: q.ID, Type: q.Type, Debit: q.Debit, Credit: q.Credit, Amount: q.Amount,
			Checked: e.Checked, At: q.At, After: fromLedgerBalance(e.BalanceAfter)})
	}
	return d
}

// lines are the journal's lines as the domain knows them, oldest first: the document's own
// fields, then its legs, numbered on from seq and naming the journal.
func (d *entryDoc) lines() []domain.Entry {
	out := make([]domain.Entry, 0, 1+len(d.Legs))
	first := postingDoc{ID: d.ID, Type: d.Type, AccountID: d.AccountID, Resource: d.Resource, ResourceID: d.ResourceID,
		Debit: d.Debit, Credit: d.Credit, Amount: d.Amount, At: d.At}.toPosting()
	first.Checked = d.Checked
	out = append(out, domain.Entry{Posting: first, Seq: d.Seq, CreatedAt: d.CreatedAt.UTC(), BalanceAfter: toLedgerBalance(d.After)})
	for i, g := range d.Legs {
		p := postingDoc{ID: g.ID, Type: g.Type, AccountID: d.AccountID, Resource: d.Resource, ResourceID: d.ResourceID,
			Debit: g.Debit, Credit: g.Credit, Amount: g.Amount, At: g.At, Journal: d.ID}.toPosting()
		p.Checked = g.Checked
		out = append(out, domain.Entry{Posting: p, Seq: d.Seq + int64(i) + 1, CreatedAt: d.CreatedAt.UTC(), BalanceAfter: toLedgerBalance(g.After)})
	}
	return out
}

// post stores the postings ps as one journal entry of their account's ledger (docs/adr/0001,
// 0007), unless they are stored already; it reports how many lines this call stored. The
// lines are dated by their postings' At, or at when they have none. open marks the journal
// for Recover (see checkedPostings).
//
// ps must be one journal (domain.Journals): postings of one change, of one account and one
// resource, the first naming the journal. Anything else — postings of several journals, or
// what is left of a journal part of which is stored (see postLocked) — is posted one posting
// to a journal, so that a document holding several lines is always named by the journal of
// every one of them, which is where missing looks.
//
// Inside one process the account's posts take turns (ledger locks), so that they do not race
// each other through the database; between processes the unique indexes decide, and unique
// indexes are atomic on FerretDB as on MongoDB, where conditional updates are not.
func (l *LedgerRepository) post(ctx context.Context, ps []domain.Posting, open bool, at time.Time) (int, error) {
	if len(ps) == 0 {
		return 0, nil
	}
	unlock, err := l.s.lockLedger(ctx, ps[0].AccountID)
	if err != nil {
		return 0, err
	}
	defer unlock()
	if !oneJournal(ps) {
		return l.postEach(ctx, ps, open, at)
	}
	return l.postLocked(ctx, ps, open, at)
}

// oneJournal tells whether ps are the postings of one journal, its first posting first (a
// journal that is not of one account and one resource is domain.NextJournal's to refuse).
func oneJournal(ps []domain.Posting) bool {
	first := ps[0]
	if first.JournalID() != first.ID && len(ps) > 1 {
		return false
	}
	for _, p := range ps[1:] {
		if p.JournalID() != first.ID {
			return false
		}
	}
	return true
}

// postEach posts each of ps as a journal of its own; the caller holds the ledger lock.
func (l *LedgerRepository) postEach(ctx context.Context, ps []domain.Posting, open bool, at time.Time) (int, error) {
	n := 0
	for _, p := range ps {
		k, err := l.postLocked(ctx, []domain.Posting{p}, open, at)
		n += k
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// postLocked is post's work, under the account's ledger lock.
//
// One attempt reads the ledger's head (the journal with the highest seq; its last line is
// number N), lets domain.NextJournal number, date and apply the postings after it (lines
// N+1...N+k, each with its balance after, a checked posting checked against the lines before
// it), and inserts them as one document with seq N+1. The unique index on (accountId, seq)
// admits one journal per first number, and first numbers follow one another densely (by
// induction: N+1 is computed only from a head whose last line is N, docs/adr/0007), so an insert that succeeds was computed from the journal right before it: the
// balances it carries, and its checks, saw every earlier movement of the account.
//
// A duplicate key means either that the journal is stored (its _id) or that another writer
// took N+1 (read again and retry, a bounded number of times, then ports.ErrVersionConflict).
// Which of the two unique indexes refused the insert is asked of the data, not of the error's
// text: FerretDB does not name the index. The data may also say that part of the journal is
// stored: a version before journals stored a payment as a document of its own and crashed
// before its fee. The postings still missing are then posted, each on its own. So are they
// when NextJournal refuses the journal: postings stored already are not refused for the money
// they took themselves.
func (l *LedgerRepository) postLocked(ctx context.Context, ps []domain.Posting, open bool, at time.Time) (int, error) {
	account, what := ps[0].AccountID, "post "+ps[0].ID
	for attempt := 0; attempt < l.s.cfg.MaxRetries; attempt++ {
		if attempt > 0 {
			if err := backoff(ctx, attempt); err != nil {
				return 0, mapErr(ctx, what, err)
			}
		}
		head, err := l.head(ctx, account)
		if err != nil {
			return 0, err
		}
		es, err := domain.NextJournal(head, ps, at)
		if err != nil {
			rest, ferr := l.missing(ctx, ps)
			switch {
			case ferr != nil:
				return 0, ferr
			case len(rest) == len(ps):
				return 0, fmt.Errorf("mongo %s: %w", what, err)
			}
			return l.postEach(ctx, rest, open, at)
		}
		doc := fromJournal(es)
		if open {
			now := l.s.cfg.Clock.Now().UTC()
			doc.Open = &now
		}
		_, err = l.entries.InsertOne(ctx, doc)
		if err == nil {
			return len(ps), nil
		}
		if !mdb.IsDuplicateKeyError(err) {
			return 0, mapErr(ctx, what, err)
		}
		rest, err := l.missing(ctx, ps)
		switch {
		case err != nil:
			return 0, err
		case len(rest) < len(ps):
			return l.postEach(ctx, rest, open, at)
		}
	}
	return 0, fmt.Errorf("mongo %s: %w", what, ports.ErrVersionConflict)
}

// missing returns those of ps the ledger does not hold. A posting is stored either as the
// first line of the document named by its own id, or as a later line of the document named
// by its journal (see post), so reads by _id answer for all of them: the journal's document
// first, which holds them all unless a version before journals stored them one by one. Each
// read is a lone _id equality, the one query FerretDB hands down to its backend's index.
func (l *LedgerRepository) missing(ctx context.Context, ps []domain.Posting) ([]domain.Posting, error) {
	stored, looked := map[string]bool{}, map[string]bool{}
	for _, p := range ps {
		for _, id := range []string{p.JournalID(), p.ID} {
			if stored[p.ID] || looked[id] {
				continue
			}
			looked[id] = true
			var d storedIDs
			err := l.entries.FindOne(ctx, bson.D{{Key: "_id", Value: id}}, options.FindOne().SetProjection(bson.D{{Key: "legs.id", Value: 1}})).Decode(&d)
			if errors.Is(err, mdb.ErrNoDocuments) {
				continue
			}
			if err != nil {
				return nil, mapErr(ctx, "read entry "+id, err)
			}
			stored[d.ID] = true
			for _, g := range d.Legs {
				stored[g.ID] = true
			}
		}
	}
	var out []domain.Posting
	for _, p := range ps {
		if !stored[p.ID] {
			out = append(out, p)
		}
	}
	return out, nil
}

// storedIDs are the posting ids a journal document holds.
type storedIDs struct {
	ID   string `bson:"_id"`
	Legs []struct {
		ID string `bson:"id"`
	} `bson:"legs"`
}

// head is the account's latest line, nil when it has none: the last line of the journal with
// the highest seq, one indexed read of the (accountId, seq) index from its end.
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
	lines := d.lines()
	return &lines[len(lines)-1], nil
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

// Entries walks the (accountId, createdAt, seq) index backwards from the newest journal the
// filter admits: the end date, and the cursor f.Before turned into a date bound (the date of
// the journal holding line Before-1, one indexed read), so that a page deep in a long ledger
// costs what the first one does. Types are checked on the journals the walk meets, on any of
// their lines.
//
// The filter selects journals and the page is of lines: a journal's lines share its date, so
// a journal in the date range has all its lines in it; one whose first line is below the
// cursor, or of a type asked for, has at least that line to show. limit journals then hold at
// least limit lines to show, and the lines below the cursor and of the types asked for are
// kept, newest first.
func (l *LedgerRepository) Entries(ctx context.Context, f ports.EntryFilter, limit int) ([]domain.Entry, error) {
	if limit <= 0 || f.Before == 1 {
		return []domain.Entry{}, nil
	}
	ctx, cancel := l.s.op(ctx)
	defer cancel()
	end := f.EndDate
	if f.Before > 0 {
		var prev entryDoc
		err := l.entries.FindOne(ctx, bson.D{{Key: "accountId", Value: f.AccountID}, {Key: "seq", Value: bson.D{{Key: "$lte", Value: f.Before - 1}}}},
			options.FindOne().SetSort(bson.D{{Key: "seq", Value: -1}}).SetProjection(bson.D{{Key: "createdAt", Value: 1}})).Decode(&prev)
		switch {
		case errors.Is(err, mdb.ErrNoDocuments):
			// No line below the cursor: nothing to bound (the walk finds nothing either).
		case err != nil:
			return nil, mapErr(ctx, "read the statement's cursor", err)
		case end == nil || prev.CreatedAt.Before(*end):
			end = &prev.CreatedAt
		}
	}
	journals, err := findAll(ctx, l.entries, "list entries", entryFilter(f, end),
		options.Find().SetSort(newestEntries).SetLimit(int64(limit)), func(d *entryDoc) (entryDoc, error) { return *d, nil })
	if err != nil {
		return nil, err
	}
	out := make([]domain.Entry, 0, limit)
	for _, d := range journals {
		lines := d.lines()
		for i := len(lines) - 1; i >= 0 && len(out) < limit; i-- {
			e := lines[i]
			if (f.Before > 0 && e.Seq >= f.Before) || (len(f.Types) > 0 && !slices.Contains(f.Types, e.Type)) {
				continue
			}
			out = append(out, e)
		}
	}
	return out, nil
}

// EntryFilter builds the query of a statement page, for the tests that read the query's plan;
// EntryOrder is its sort. Nothing else needs them. (Entries also bounds the date by the
// cursor's entry; this leaves that out.)
func EntryFilter(f ports.EntryFilter) bson.D { return entryFilter(f, f.EndDate) }

// EntryOrder is the sort of a statement page, exported beside EntryFilter.
func EntryOrder() bson.D { return append(bson.D{}, newestEntries...) }

// entryFilter is the query of a statement page, with end as the upper date bound: the
// journals with a line the page may show (see Entries).
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
		q = append(q, bson.E{Key: "$or", Value: bson.A{
			bson.D{{Key: "type", Value: bson.D{{Key: "$in", Value: in}}}},
			bson.D{{Key: "legs.type", Value: bson.D{{Key: "$in", Value: in}}}},
		}})
	}
	return q
}

// scanBatch is how many journals Scan reads per query.
const scanBatch = 500

// Scan reads the ledger in batches of journals by number, each batch its own query under the
// operation timeout, and calls fn with each line between them: an audit of a long ledger is
// not bounded by one operation's timeout, and fn may take its time (or call the store)
// without holding a cursor.
func (l *LedgerRepository) Scan(ctx context.Context, accountID string, fn func(domain.Entry) error) error {
	var after int64
	for {
		batch, err := l.scanFrom(ctx, accountID, after)
		if err != nil {
			return err
		}
		for _, d := range batch {
			for _, e := range d.lines() {
				if err := fn(e); err != nil {
					return err
				}
				after = e.Seq
			}
		}
		if len(batch) < scanBatch {
			return nil
		}
	}
}

func (l *LedgerRepository) scanFrom(ctx context.Context, accountID string, after int64) ([]entryDoc, error) {
	ctx, cancel := l.s.op(ctx)
	defer cancel()
	return findAll(ctx, l.entries, "scan the ledger of "+accountID,
		bson.D{{Key: "accountId", Value: accountID}, {Key: "seq", Value: bson.D{{Key: "$gt", Value: after}}}},
		options.Find().SetSort(bson.D{{Key: "seq", Value: 1}}).SetLimit(scanBatch), func(d *entryDoc) (entryDoc, error) { return *d, nil })
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

// Post stores each journal entry among postings (domain.Journals) in its account's ledger in
// one step (see post), in order, skipping what is stored already; the entry's _id, the first
// posting's id, makes exactly one of concurrent posts of one journal store it, on every server.
// It stops at the first refusal; the journals before it stay stored, and a retry of the same
// call stores the rest once. It tells how many postings this call stored.
func (l *LedgerRepository) Post(ctx context.Context, postings ...domain.Posting) (int, error) {
	ctx, cancel := l.s.op(ctx)
	defer cancel()
	stored := 0
	for _, j := range domain.Journals(postings) {
		n, err := l.post(ctx, j, false, l.s.cfg.Clock.Now())
		stored += n
		if err != nil {
			return stored, err
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
	// The devolution outbox's state of a late payment (domain.DevolutionDispatch), and the
	// version that UpdateLateDevolution checks; absent from claims stored before.
	DevolutionDue    *time.Time `bson:"devolutionDue"`
	DevolutionClaims int        `bson:"devolutionClaims"`
	Version          int64      `bson:"version"`
}

func (d *paymentDoc) toClaim() ports.PaymentClaim {
	return ports.PaymentClaim{EndToEndID: d.EndToEndID, TransactionID: d.TransactionID, AccountID: d.AccountID,
		Amount: domain.Cents(d.Amount), Late: d.Late, CreatedAt: d.CreatedAt.UTC(),
		Devolution: domain.DevolutionDispatch{Due: utcPtr(d.DevolutionDue), Claims: d.DevolutionClaims}}
}

// ClaimPayment inserts the claim; the unique _id refuses a second claim of one end-to-end id,
// atomically on every server, and the claim stored first is read and returned instead. Times
// are kept to the millisecond, as BSON dates hold them.
func (l *LedgerRepository) ClaimPayment(ctx context.Context, c ports.PaymentClaim) (ports.PaymentClaim, error) {
	ctx, cancel := l.s.op(ctx)
	defer cancel()
	d := paymentDoc{EndToEndID: c.EndToEndID, TransactionID: c.TransactionID, AccountID: c.AccountID,
		Amount: int64(c.Amount), Late: c.Late, CreatedAt: c.CreatedAt.UTC().Truncate(time.Millisecond),
		DevolutionDue: msPtr(c.Devolution.Due), DevolutionClaims: c.Devolution.Claims}
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

// MarkLate sets late on a claim not late yet, with its devolution due, in one write; an
// unknown end-to-end id is domain.ErrNotFound. The write moves the claim's version, so that an
// UpdateLateDevolution working from an older read retries. (On a server whose conditional
// updates are not atomic, two first markings may both write: the second only makes the
// devolution due again early, and a devolution read back early is read back, never sent twice.)
func (l *LedgerRepository) MarkLate(ctx context.Context, endToEndID string, due time.Time) error {
	ctx, cancel := l.s.op(ctx)
	defer cancel()
	what := "mark payment " + endToEndID + " late"
	_, err := l.payments.UpdateOne(ctx,
		bson.D{{Key: "_id", Value: endToEndID}, {Key: "late", Value: bson.D{{Key: "$ne", Value: true}}}},
		bson.D{
			{Key: "$set", Value: bson.D{{Key: "late", Value: true}, {Key: "devolutionDue", Value: msPtr(&due)}, {Key: "devolutionClaims", Value: 0}}},
			{Key: "$inc", Value: bson.D{{Key: "version", Value: 1}}},
		})
	if err != nil {
		return mapErr(ctx, what, err)
	}
	n, err := l.payments.CountDocuments(ctx, bson.D{{Key: "_id", Value: endToEndID}})
	if err != nil {
		return mapErr(ctx, what, err)
	}
	if n == 0 {
		return fmt.Errorf("mongo %s: %w", what, domain.ErrNotFound)
	}
	return nil
}

// UpdateLateDevolution reads the claim, applies fn, and writes its devolution over the version
// read, under a write claim of that version (claims.go): one writer per version, on every
// server. A lost race reads again and retries.
func (l *LedgerRepository) UpdateLateDevolution(ctx context.Context, endToEndID string, fn func(*ports.PaymentClaim) error) (ports.PaymentClaim, error) {
	ctx, cancel := l.s.op(ctx)
	defer cancel()
	what := "update the devolution of payment " + endToEndID
	for attempt := 0; attempt < l.s.cfg.MaxRetries; attempt++ {
		if attempt > 0 {
			if err := backoff(ctx, attempt); err != nil {
				return ports.PaymentClaim{}, mapErr(ctx, what, err)
			}
		}
		var d paymentDoc
		err := l.payments.FindOne(ctx, bson.D{{Key: "_id", Value: endToEndID}}).Decode(&d)
		if errors.Is(err, mdb.ErrNoDocuments) {
			return ports.PaymentClaim{}, fmt.Errorf("mongo %s: %w", what, domain.ErrNotFound)
		}
		if err != nil {
			return ports.PaymentClaim{}, mapErr(ctx, what, err)
		}
		c := d.toClaim()
		if err := fn(&c); err != nil {
			return ports.PaymentClaim{}, err
		}
		due := msPtr(c.Devolution.Due)
		var version any = d.Version
		if d.Version == 0 {
			// A claim stored before claims had a version has none: null matches it too.
			version = bson.D{{Key: "$in", Value: bson.A{int64(0), nil}}}
		}
		written, err := l.s.writeClaimed(ctx, stateKey(collPayments, endToEndID, d.Version, 0), what,
			func(ctx context.Context) (*mdb.UpdateResult, error) {
				return l.payments.UpdateOne(ctx,
					bson.D{{Key: "_id", Value: endToEndID}, {Key: "version", Value: version}},
					bson.D{{Key: "$set", Value: bson.D{
						{Key: "devolutionDue", Value: due}, {Key: "devolutionClaims", Value: c.Devolution.Claims},
						{Key: "version", Value: d.Version + 1},
					}}})
			})
		if err != nil {
			return ports.PaymentClaim{}, err
		}
		if written {
			d.DevolutionDue, d.DevolutionClaims, d.Version = due, c.Devolution.Claims, d.Version+1
			return d.toClaim(), nil
		}
	}
	return ports.PaymentClaim{}, fmt.Errorf("mongo %s: %w", what, ports.ErrVersionConflict)
}

// LateDevolutionsDue reads the late claims whose devolution is due through the
// (devolutionDue, _id) index: a claim with none holds null or nothing there, outside the range.
func (l *LedgerRepository) LateDevolutionsDue(ctx context.Context, until time.Time, limit int) ([]ports.PaymentClaim, error) {
	if limit <= 0 {
		return []ports.PaymentClaim{}, nil
	}
	ctx, cancel := l.s.op(ctx)
	defer cancel()
	return findAll(ctx, l.payments, "list late devolutions due",
		bson.D{{Key: "late", Value: true}, {Key: "devolutionDue", Value: bson.D{{Key: "$lte", Value: until.UTC()}}}},
		options.Find().SetSort(bson.D{{Key: "devolutionDue", Value: 1}, {Key: "_id", Value: 1}}).SetLimit(int64(limit)),
		func(d *paymentDoc) (ports.PaymentClaim, error) { return d.toClaim(), nil })
}

// msPtr is *t in UTC to the millisecond, as BSON dates hold it.
func msPtr(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	v := t.UTC().Truncate(time.Millisecond)
	return &v
}

// LatePayments reads the late claims through the (late, createdAt, _id) index, oldest first.
func (l *LedgerRepository) LatePayments(ctx context.Context) ([]ports.PaymentClaim, error) {
	ctx, cancel := l.s.op(ctx)
	defer cancel()
	return findAll(ctx, l.payments, "list late payments", bson.D{{Key: "late", Value: true}},
		options.Find().SetSort(bson.D{{Key: "createdAt", Value: 1}, {Key: "_id", Value: 1}}),
		func(d *paymentDoc) (ports.PaymentClaim, error) { return d.toClaim(), nil })
}
