package mongo

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	mdb "go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/pixgate/pixgate/domain"
	"github.com/pixgate/pixgate/ports"
)

// Outbox hands out the deliveries kept in the outbox arrays of transaction and withdrawal
// documents (docs/adr/0006 has the design). Build it with Open; use it through Store.
//
// Every write to an outbox is a conditional updateOne guarded by the document's outboxRev,
// the revision of its outbox: it sets the fields of the chosen array elements by position
// ("outbox.3.owner") and recomputes outboxDue, the earliest moment one of the document's
// pending deliveries may be claimed. A writer that read an older revision matches nothing and
// knows someone else got in between. Aggregate updates leave the existing elements alone (they
// only append, and move outboxRev when they do), so dispatchers and status changes never
// overwrite each other.
type Outbox struct {
	s      *Store
	txColl *mdb.Collection
	wdColl *mdb.Collection

	// held remembers which document holds each event this process leased, so that recording
	// the attempt reads that document by _id instead of looking for the event in every
	// document: a filter on an array element ("outbox.id"), which FerretDB v1 answers by
	// reading the whole collection, snapshots and QR images included, once or twice per
	// delivery. It is a hint: an event it does not know (leased through another Store, or
	// forgotten) is looked for as before.
	mu   sync.Mutex
	held map[string]heldEvent
	// everywhereAt is when Claim last looked past outboxOpen (lookEverywhere).
	everywhereAt time.Time
}

// heldEvent is where a leased event lives, and who leased it.
type heldEvent struct {
	src   source
	docID string
	owner string
}

// maxHeld bounds the hints: deliveries leased and never recorded (their circuit held them
// back, their lease ran out) leave theirs behind until the map is cleared.
const maxHeld = 4096

var _ ports.Outbox = (*Outbox)(nil)

// outboxDoc is the part of a transaction or withdrawal document the outbox reads.
type outboxDoc struct {
	ID        string       `bson:"_id"`
	AccountID string       `bson:"accountId"`
	Version   int64        `bson:"version"`
	Box       outboxFields `bson:",inline"`
}

var outboxProjection = bson.D{{Key: "accountId", Value: 1}, {Key: "version", Value: 1}, {Key: "outbox", Value: 1}, {Key: "outboxDue", Value: 1}, {Key: "outboxRev", Value: 1}}

// source is one collection holding outboxes, and the kind of resource it holds.
type source struct {
	coll *mdb.Collection
	kind domain.ResourceKind
}

func (o *Outbox) sources() []source {
	return []source{{o.txColl, domain.ResourceTransaction}, {o.wdColl, domain.ResourceWithdrawal}}
}

// candidate is a claimable delivery: element i of doc's outbox.
type candidate struct {
	src source
	doc *outboxDoc
	i   int
	at  time.Time
}

// claimRounds bounds how often Claim looks again after losing documents to other dispatchers.
const claimRounds = 3

// Claim finds the documents whose outboxDue has come (an index on outboxDue), up to limit
// from each collection, earliest first; picks their claimable deliveries, earliest first, up
// to limit in all; and leases them with one conditional update per document. Documents taken
// by another dispatcher in between are looked for again, a few times.
//
// Taking the limit earliest documents of each collection is enough to find the limit earliest
// deliveries: every document holding one of them is due no later than it, and at most limit
// documents hold them.
func (o *Outbox) Claim(ctx context.Context, owner string, now time.Time, lease time.Duration, limit int, skipAccounts []string) ([]ports.Delivery, error) {
	out := []ports.Delivery{}
	if limit <= 0 {
		return out, nil
	}
	ctx, cancel := o.s.op(ctx)
	defer cancel()
	// BSON dates hold milliseconds: compare in Go at the precision the server compares.
	now = now.UTC().Truncate(time.Millisecond)
	until := now.Add(lease).Truncate(time.Millisecond)
	for round := 0; round < claimRounds && len(out) < limit; round++ {
		cands, err := o.candidates(ctx, now, limit-len(out), skipAccounts)
		if err != nil {
			return nil, err
		}
		if len(cands) == 0 {
			break
		}
		lost := false
		for _, group := range byDocument(cands) {
			got, ok, err := o.lease(ctx, group, owner, until)
			if err != nil {
				return nil, err
			}
			lost = lost || !ok
			out = append(out, got...)
		}
		if !lost {
			break
		}
	}
	slices.SortStableFunc(out, func(a, b ports.Delivery) int { return a.NextAttemptAt.Compare(b.NextAttemptAt) })
	return out, nil
}

func (o *Outbox) candidates(ctx context.Context, now time.Time, limit int, skipAccounts []string) ([]candidate, error) {
	var cands []candidate
	filter := bson.D{{Key: "outboxDue", Value: bson.D{{Key: "$lte", Value: now}}}}
	if !o.lookEverywhere(now) {
		filter = append(filter, bson.E{Key: "outboxOpen", Value: true})
	}
	if len(skipAccounts) > 0 {
		// A document holds one resource, so one account: skipping it skips its deliveries.
		filter = append(filter, bson.E{Key: "accountId", Value: bson.D{{Key: "$nin", Value: skipAccounts}}})
	}
	for _, src := range o.sources() {
		cur, err := src.coll.Find(ctx, filter,
			options.Find().SetSort(bson.D{{Key: "outboxDue", Value: 1}}).SetLimit(int64(limit)).SetProjection(outboxProjection))
		if err != nil {
			return nil, mapErr(ctx, "find due deliveries", err)
		}
		var docs []*outboxDoc
		if err := cur.All(ctx, &docs); err != nil {
			return nil, mapErr(ctx, "read due deliveries", err)
		}
		for _, d := range docs {
			for i := range d.Box.Outbox {
				if at := d.Box.Outbox[i].claimableAt(); at != nil && !at.After(now) {
					cands = append(cands, candidate{src: src, doc: d, i: i, at: *at})
				}
			}
		}
	}
	slices.SortFunc(cands, func(a, b candidate) int {
		return cmp.Or(a.at.Compare(b.at),
			a.doc.Box.Outbox[a.i].CreatedAt.Compare(b.doc.Box.Outbox[b.i].CreatedAt),
			cmp.Compare(a.doc.Box.Outbox[a.i].EventID, b.doc.Box.Outbox[b.i].EventID))
	})
	return cands[:min(limit, len(cands))], nil
}

// everywhereEvery is how often Claim looks for due deliveries in documents without
// outboxOpen: those stored before the field existed, or by an instance of that version still
// running beside this one. Those are claimed within this, plus the usual poll; every other
// look filters on outboxOpen, which FerretDB on PostgreSQL answers from the rows that have it
// (an equality on a boolean is filtered in the database; a range on a date is not, and reads
// every document of the collection, snapshots and QR images included, once per claim).
const everywhereEvery = 30 * time.Second

// lookEverywhere reports whether this claim looks past outboxOpen (everywhereEvery), and
// notes that it does.
func (o *Outbox) lookEverywhere(now time.Time) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	if !o.everywhereAt.IsZero() && now.Sub(o.everywhereAt) < everywhereEvery && !now.Before(o.everywhereAt) {
		return false
	}
	o.everywhereAt = now
	return true
}

// byDocument groups candidates by document, keeping their order.
func byDocument(cands []candidate) [][]candidate {
	var groups [][]candidate
	index := map[*outboxDoc]int{}
	for _, c := range cands {
		g, ok := index[c.doc]
		if !ok {
			g = len(groups)
			index[c.doc] = g
			groups = append(groups, nil)
		}
		groups[g] = append(groups[g], c)
	}
	return groups
}

// lease leases the group's deliveries, all in one document, to owner until until. It reports
// false when the document's outbox changed since it was read (nothing is leased then).
func (o *Outbox) lease(ctx context.Context, group []candidate, owner string, until time.Time) ([]ports.Delivery, bool, error) {
	doc, src := group[0].doc, group[0].src
	set := bson.D{}
	for _, c := range group {
		el := &doc.Box.Outbox[c.i]
		el.Owner, el.LeaseUntil = owner, &until
		set = append(set,
			bson.E{Key: elem(c.i, "owner"), Value: owner},
			bson.E{Key: elem(c.i, "leaseUntil"), Value: until})
	}
	ok, err := o.writeOutbox(ctx, src, doc, set, nil, nil)
	if err != nil || !ok {
		return nil, ok, err
	}
	out := make([]ports.Delivery, 0, len(group))
	for _, c := range group {
		d, err := doc.Box.Outbox[c.i].toDelivery(doc.AccountID, doc.ID, src.kind)
		if err != nil {
			return nil, false, err
		}
		out = append(out, d)
	}
	o.remember(out, src, doc.ID, owner)
	return out, true, nil
}

// remember notes where the events of leased deliveries live (Outbox.held).
func (o *Outbox) remember(leased []ports.Delivery, src source, docID, owner string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.held == nil || len(o.held)+len(leased) > maxHeld {
		o.held = map[string]heldEvent{}
	}
	for _, d := range leased {
		o.held[d.Event.ID] = heldEvent{src: src, docID: docID, owner: owner}
	}
}

// whereHeld is where a leased event lives, if this process remembers.
func (o *Outbox) whereHeld(eventID string) (heldEvent, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	h, ok := o.held[eventID]
	return h, ok
}

// forget drops the hints of eventID, or of every event owner leased when eventID is "".
func (o *Outbox) forget(eventID, owner string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if eventID != "" {
		delete(o.held, eventID)
		return
	}
	for id, h := range o.held {
		if h.owner == owner {
			delete(o.held, id)
		}
	}
}

// elem is the path of a field of element i of the outbox array.
func elem(i int, field string) string { return "outbox." + strconv.Itoa(i) + "." + field }

// writeOutbox applies set, unset and push to doc's outbox elements, with outboxDue recomputed
// from doc.Box.Outbox (which the caller has already changed the same way), if the document is
// still in the state read (its outbox revision, and its version: see stateFilter), under the
// claim of that state (claims.go). It reports whether it was; a claim someone else holds is a
// lost race too.
func (o *Outbox) writeOutbox(ctx context.Context, src source, doc *outboxDoc, set, unset, push bson.D) (bool, error) {
	if due := outboxDue(doc.Box.Outbox); due != nil {
		set = append(set, bson.E{Key: "outboxDue", Value: *due}, bson.E{Key: "outboxOpen", Value: true})
	} else {
		unset = append(unset, bson.E{Key: "outboxDue", Value: ""}, bson.E{Key: "outboxOpen", Value: ""})
	}
	update := bson.D{{Key: "$inc", Value: bson.D{{Key: "outboxRev", Value: int64(1)}}}}
	if len(set) > 0 {
		update = append(update, bson.E{Key: "$set", Value: set})
	}
	if len(unset) > 0 {
		update = append(update, bson.E{Key: "$unset", Value: unset})
	}
	if len(push) > 0 {
		update = append(update, bson.E{Key: "$push", Value: push})
	}
	unlock, err := o.s.lock(ctx, src.coll.Name()+"/"+doc.ID)
	if err != nil {
		return false, err
	}
	defer unlock()
	return o.s.writeClaimed(ctx, stateKey(src.coll.Name(), doc.ID, doc.Version, doc.Box.OutboxRev), "write outbox",
		func(ctx context.Context) (*mdb.UpdateResult, error) {
			return src.coll.UpdateOne(ctx, stateFilter(doc.ID, doc.Version, doc.Box.OutboxRev), update)
		})
}

// findEvent returns the document holding event id and the event's position in its outbox:
// by _id when this process leased the event (Outbox.held), else by looking for the event.
func (o *Outbox) findEvent(ctx context.Context, eventID string) (source, *outboxDoc, int, error) {
	if h, ok := o.whereHeld(eventID); ok {
		var d outboxDoc
		err := h.src.coll.FindOne(ctx, bson.D{{Key: "_id", Value: h.docID}}, options.FindOne().SetProjection(outboxProjection)).Decode(&d)
		if err != nil && !errors.Is(err, mdb.ErrNoDocuments) {
			return source{}, nil, 0, mapErr(ctx, "find event", err)
		}
		for i := range d.Box.Outbox {
			if err == nil && d.Box.Outbox[i].EventID == eventID {
				return h.src, &d, i, nil
			}
		}
	}
	for _, src := range o.sources() {
		var d outboxDoc
		err := src.coll.FindOne(ctx, bson.D{{Key: "outbox.id", Value: eventID}}, options.FindOne().SetProjection(outboxProjection)).Decode(&d)
		if errors.Is(err, mdb.ErrNoDocuments) {
			continue
		}
		if err != nil {
			return source{}, nil, 0, mapErr(ctx, "find event", err)
		}
		for i := range d.Box.Outbox {
			if d.Box.Outbox[i].EventID == eventID {
				return src, &d, i, nil
			}
		}
	}
	// Nobody holds a lease on an event that does not exist.
	return source{}, nil, 0, fmt.Errorf("mongo record attempt of unknown event %s: %w", eventID, ports.ErrVersionConflict)
}

// RecordAttempt appends attempt to the event's delivery, sets its status and next attempt and
// ends the lease, while owner holds it: a delivery someone else leased since, or nobody holds,
// or an unknown event, answers ports.ErrVersionConflict.
func (o *Outbox) RecordAttempt(ctx context.Context, eventID, owner string, attempt ports.Attempt, status ports.DeliveryStatus, next time.Time) error {
	ctx, cancel := o.s.op(ctx)
	defer cancel()
	defer o.forget(eventID, owner)
	for try := 0; try < o.s.cfg.MaxRetries; try++ {
		if try > 0 {
			if err := backoff(ctx, try); err != nil {
				return mapErr(ctx, "record attempt", err)
			}
		}
		src, doc, i, err := o.findEvent(ctx, eventID)
		if err != nil {
			return err
		}
		el := &doc.Box.Outbox[i]
		if el.Owner != owner {
			return fmt.Errorf("mongo record attempt of %s: not held by %s: %w", eventID, owner, ports.ErrVersionConflict)
		}
		a := attemptDoc{At: attempt.At.UTC(), StatusCode: attempt.StatusCode, Error: attempt.Error, DurationNS: int64(attempt.Duration)}
		el.Status, el.NextAttemptAt, el.Owner, el.LeaseUntil = string(status), next.UTC(), "", nil
		el.Attempts = append(el.Attempts, a)
		ok, err := o.writeOutbox(ctx, src, doc,
			bson.D{{Key: elem(i, "status"), Value: string(status)}, {Key: elem(i, "nextAttemptAt"), Value: next.UTC()}},
			bson.D{{Key: elem(i, "owner"), Value: ""}, {Key: elem(i, "leaseUntil"), Value: ""}},
			bson.D{{Key: elem(i, "attempts"), Value: a}})
		if err != nil {
			return err
		}
		if ok {
			return nil
		}
	}
	return fmt.Errorf("mongo record attempt of %s: %w", eventID, ports.ErrVersionConflict)
}

// Release ends every lease owner holds, leaving the deliveries pending and claimable.
func (o *Outbox) Release(ctx context.Context, owner string) error {
	ctx, cancel := o.s.op(ctx)
	defer cancel()
	o.forget("", owner)
	for _, src := range o.sources() {
		for try := 0; ; try++ {
			if try == o.s.cfg.MaxRetries {
				return fmt.Errorf("mongo release leases of %s: %w", owner, ports.ErrVersionConflict)
			}
			if try > 0 {
				if err := backoff(ctx, try); err != nil {
					return mapErr(ctx, "release leases", err)
				}
			}
			cur, err := src.coll.Find(ctx, bson.D{{Key: "outbox.owner", Value: owner}}, options.Find().SetProjection(outboxProjection))
			if err != nil {
				return mapErr(ctx, "find leases", err)
			}
			var docs []*outboxDoc
			if err := cur.All(ctx, &docs); err != nil {
				return mapErr(ctx, "read leases", err)
			}
			lost := false
			for _, doc := range docs {
				var unset bson.D
				for i := range doc.Box.Outbox {
					if el := &doc.Box.Outbox[i]; el.Owner == owner {
						el.Owner, el.LeaseUntil = "", nil
						unset = append(unset, bson.E{Key: elem(i, "owner"), Value: ""}, bson.E{Key: elem(i, "leaseUntil"), Value: ""})
					}
				}
				ok, err := o.writeOutbox(ctx, src, doc, nil, unset, nil)
				if err != nil {
					return err
				}
				lost = lost || !ok
			}
			if !lost {
				break
			}
		}
	}
	return nil
}

// Deliveries lists the deliveries of one resource, oldest event first; an unknown resource,
// or one of another account, has none.
func (o *Outbox) Deliveries(ctx context.Context, accountID string, kind domain.ResourceKind, resourceID string) ([]ports.Delivery, error) {
	ctx, cancel := o.s.op(ctx)
	defer cancel()
	out := []ports.Delivery{}
	var src source
	for _, s := range o.sources() {
		if s.kind == kind {
			src = s
		}
	}
	if src.coll == nil {
		return out, nil
	}
	var doc outboxDoc
	err := src.coll.FindOne(ctx, bson.D{{Key: "_id", Value: resourceID}, {Key: "accountId", Value: accountID}},
		options.FindOne().SetProjection(outboxProjection)).Decode(&doc)
	if errors.Is(err, mdb.ErrNoDocuments) {
		return out, nil
	}
	if err != nil {
		return nil, mapErr(ctx, "read deliveries", err)
	}
	for i := range doc.Box.Outbox {
		d, err := doc.Box.Outbox[i].toDelivery(doc.AccountID, doc.ID, kind)
		if err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	slices.SortStableFunc(out, func(a, b ports.Delivery) int { return a.Event.CreatedAt.Compare(b.Event.CreatedAt) })
	return out, nil
}
