package memory

import (
	"container/heap"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/pixgate/pixgate/domain"
	"github.com/pixgate/pixgate/ports"
)

var _ ports.Outbox = (*Outbox)(nil)

// Outbox is the ports.Outbox of a Store; get it with Store.Outbox. The repositories of the same
// store fill it under the lock that writes the status change.
type Outbox struct{ store *Store }

// delivery is one stored event and the state of its delivery. Every delivery sits in exactly
// one place: the due queue (pending and held by nobody), the leased set (pending and held), or
// neither (delivered or failed, kept for Deliveries).
type delivery struct {
	event domain.Event // without its snapshot: tx or wd holds it
	tx    *domain.TransactionRecord
	wd    *domain.WithdrawalRecord

	status   ports.DeliveryStatus
	attempts []ports.Attempt
	next     time.Time
	owner    string    // who holds the lease; empty when nobody does
	until    time.Time // when the lease ends
	seq      uint64    // storage order, which breaks ties of next
}

type resourceKey struct {
	kind domain.ResourceKind
	id   string
}

// eventQueue is the outbox's state inside the Store.
type eventQueue struct {
	byEvent    map[string]*delivery
	byResource map[resourceKey][]*delivery
	due        dueQueue
	leased     map[*delivery]struct{}
	seq        uint64
}

func newEventQueue() eventQueue {
	return eventQueue{
		byEvent:    make(map[string]*delivery),
		byResource: make(map[resourceKey][]*delivery),
		leased:     make(map[*delivery]struct{}),
	}
}

// admit refuses events whose id is already stored, before anything of the write happens.
func (q *eventQueue) admit(events []domain.Event) error {
	for _, e := range events {
		if _, ok := q.byEvent[e.ID]; ok {
			return fmt.Errorf("event %s: %w", e.ID, ports.ErrDuplicate)
		}
	}
	return nil
}

// add stores events as pending deliveries due when they were raised. A transaction's snapshots
// share the order and PIX data of the stored transaction that raised them, which never change
// once set (domain/clone.go).
func (q *eventQueue) add(events []domain.Event) {
	for _, e := range events {
		d := &delivery{status: ports.DeliveryPending, next: e.CreatedAt, seq: q.seq}
		q.seq++
		if e.Transaction != nil {
			snap := e.Transaction.Record()
			d.tx = &snap
		}
		if e.Withdrawal != nil {
			snap := e.Withdrawal.Record()
			d.wd = &snap
		}
		e.Transaction, e.Withdrawal = nil, nil
		d.event = e
		q.byEvent[e.ID] = d
		key := resourceKey{e.Kind, e.ResourceID}
		q.byResource[key] = append(q.byResource[key], d)
		heap.Push(&q.due, d)
	}
}

// public is the delivery as the caller's own value.
func (d *delivery) public() ports.Delivery {
	e := d.event
	if d.tx != nil {
		e.Transaction = domain.UnmarshalTransactionFromDatabase(*d.tx)
	}
	if d.wd != nil {
		e.Withdrawal = domain.UnmarshalWithdrawalFromDatabase(*d.wd)
	}
	return ports.Delivery{Event: e, Status: d.status, Attempts: slices.Clone(d.attempts), NextAttemptAt: d.next}
}

// Claim implements ports.Outbox. Leases that ended at or before now go back to the due queue
// first, so that they compete by due time with the rest; their former owner no longer holds
// them.
func (o *Outbox) Claim(ctx context.Context, owner string, now time.Time, lease time.Duration, limit int, skipAccounts []string) ([]ports.Delivery, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if owner == "" {
		return nil, errors.New("memory: claim without an owner")
	}
	s := o.store
	s.mu.Lock()
	defer s.mu.Unlock()
	q := &s.events
	for d := range q.leased {
		if !d.until.After(now) {
			delete(q.leased, d)
			d.owner, d.until = "", time.Time{}
			heap.Push(&q.due, d)
		}
	}
	out := []ports.Delivery{}
	var skipped []*delivery
	for len(out) < limit && q.due.Len() > 0 && !q.due[0].next.After(now) {
		d := heap.Pop(&q.due).(*delivery)
		if slices.Contains(skipAccounts, d.event.AccountID) {
			skipped = append(skipped, d)
			continue
		}
		d.owner, d.until = owner, now.Add(lease)
		q.leased[d] = struct{}{}
		out = append(out, d.public())
	}
	for _, d := range skipped {
		heap.Push(&q.due, d)
	}
	return out, nil
}

// RecordAttempt implements ports.Outbox.
func (o *Outbox) RecordAttempt(ctx context.Context, eventID, owner string, attempt ports.Attempt, status ports.DeliveryStatus, next time.Time) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	switch status {
	case ports.DeliveryPending, ports.DeliveryDelivered, ports.DeliveryFailed:
	default:
		return fmt.Errorf("memory: unknown delivery status %q", status)
	}
	s := o.store
	s.mu.Lock()
	defer s.mu.Unlock()
	q := &s.events
	d := q.byEvent[eventID]
	if d == nil || d.owner == "" || d.owner != owner {
		return fmt.Errorf("delivery of event %s is not held by %s: %w", eventID, owner, ports.ErrVersionConflict)
	}
	delete(q.leased, d)
	d.owner, d.until = "", time.Time{}
	d.attempts = append(d.attempts, attempt)
	d.status, d.next = status, next
	if status == ports.DeliveryPending {
		heap.Push(&q.due, d)
	}
	return nil
}

// Release implements ports.Outbox.
func (o *Outbox) Release(ctx context.Context, owner string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s := o.store
	s.mu.Lock()
	defer s.mu.Unlock()
	q := &s.events
	for d := range q.leased {
		if d.owner == owner {
			delete(q.leased, d)
			d.owner, d.until = "", time.Time{}
			heap.Push(&q.due, d)
		}
	}
	return nil
}

// Deliveries implements ports.Outbox. Another account's resource has none.
func (o *Outbox) Deliveries(ctx context.Context, accountID string, kind domain.ResourceKind, resourceID string) ([]ports.Delivery, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s := o.store
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := []ports.Delivery{}
	for _, d := range s.events.byResource[resourceKey{kind, resourceID}] {
		if d.event.AccountID == accountID {
			out = append(out, d.public())
		}
	}
	// Stored in the order they were raised already; the sort only guards ties of storage.
	slices.SortStableFunc(out, func(a, b ports.Delivery) int { return a.Event.CreatedAt.Compare(b.Event.CreatedAt) })
	return out, nil
}

// dueQueue is a min-heap of pending deliveries nobody holds, by due time then storage order.
type dueQueue []*delivery

func (h dueQueue) Len() int { return len(h) }
func (h dueQueue) Less(i, j int) bool {
	if c := h[i].next.Compare(h[j].next); c != 0 {
		return c < 0
	}
	return h[i].seq < h[j].seq
}
func (h dueQueue) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *dueQueue) Push(x any)   { *h = append(*h, x.(*delivery)) }
func (h *dueQueue) Pop() any {
	old := *h
	d := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	return d
}
