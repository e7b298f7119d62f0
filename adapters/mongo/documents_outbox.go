package mongo

import (
	"fmt"
	"time"

	"github.com/pixgate/pixgate/domain"
	"github.com/pixgate/pixgate/ports"
)

// outboxFields are the pending deliveries of the events a resource raised, kept in the
// resource's own document (docs/adr/0006). Only the outbox code changes them after creation,
// except that Update appends new deliveries.
type outboxFields struct {
	Outbox []deliveryDoc `bson:"outbox,omitempty"`
	// OutboxDue is the earliest time one of the pending deliveries may be claimed; absent when
	// none is pending. Claim finds work through its index.
	OutboxDue *time.Time `bson:"outboxDue,omitempty"`
	// OutboxOpen is true, beside OutboxDue, while a delivery is pending, and absent otherwise:
	// an equality on a boolean, which FerretDB on PostgreSQL filters in the database, where it
	// reads the whole collection for a range on OutboxDue (see Outbox.Claim).
	OutboxOpen bool `bson:"outboxOpen,omitempty"`
	// OutboxRev counts the changes of Outbox and OutboxDue; every outbox write is guarded by it.
	OutboxRev int64 `bson:"outboxRev"`
}

type attemptDoc struct {
	At         time.Time `bson:"at"`
	StatusCode int       `bson:"statusCode"`
	Error      string    `bson:"error,omitempty"`
	DurationNS int64     `bson:"durationNs"`
}

// deliveryDoc is one element of a document's outbox array: an event and the state of its
// delivery. The event's account, resource and kind are the enclosing document's.
type deliveryDoc struct {
	EventID     string      `bson:"id"`
	Type        string      `bson:"type"`
	CreatedAt   time.Time   `bson:"createdAt"`
	WebhookURL  string      `bson:"webhookUrl"`
	Transaction *txSnapshot `bson:"transaction,omitempty"`
	Withdrawal  *wdSnapshot `bson:"withdrawal,omitempty"`

	Status        string       `bson:"status"`
	NextAttemptAt time.Time    `bson:"nextAttemptAt"`
	Owner         string       `bson:"owner,omitempty"`
	LeaseUntil    *time.Time   `bson:"leaseUntil,omitempty"`
	Attempts      []attemptDoc `bson:"attempts"`
}

// newDelivery stores an event pending and due at once: at the time of the transition that
// raised it (the adapter has no clock of its own, and the event's time comes from the
// application's clock, which tests control).
func newDelivery(e domain.Event) deliveryDoc {
	d := deliveryDoc{
		EventID: e.ID, Type: e.Type, CreatedAt: e.CreatedAt.UTC(), WebhookURL: e.WebhookURL,
		Status: string(ports.DeliveryPending), NextAttemptAt: e.CreatedAt.UTC(), Attempts: []attemptDoc{},
	}
	if e.Transaction != nil {
		s := fromTransaction(e.Transaction)
		d.Transaction = &s
	}
	if e.Withdrawal != nil {
		s := fromWithdrawal(e.Withdrawal)
		d.Withdrawal = &s
	}
	return d
}

// claimableAt is when the delivery may next be claimed: its next attempt time, or the end of
// the lease someone holds on it, whichever is later. Nil when it is not pending.
func (d *deliveryDoc) claimableAt() *time.Time {
	if d.Status != string(ports.DeliveryPending) {
		return nil
	}
	at := d.NextAttemptAt
	if d.Owner != "" && d.LeaseUntil != nil && d.LeaseUntil.After(at) {
		at = *d.LeaseUntil
	}
	return &at
}

// outboxDue is the earliest claimableAt of the deliveries, nil when none is pending.
func outboxDue(ds []deliveryDoc) *time.Time {
	var due *time.Time
	for i := range ds {
		if at := ds[i].claimableAt(); at != nil && (due == nil || at.Before(*due)) {
			due = at
		}
	}
	return due
}

func newOutbox(events []domain.Event) outboxFields {
	var o outboxFields
	for _, e := range events {
		o.Outbox = append(o.Outbox, newDelivery(e))
	}
	o.OutboxDue = outboxDue(o.Outbox)
	o.OutboxOpen = o.OutboxDue != nil
	return o
}

func (d *deliveryDoc) toDelivery(accountID, resourceID string, kind domain.ResourceKind) (ports.Delivery, error) {
	e := domain.Event{
		ID: d.EventID, Type: d.Type, AccountID: accountID, ResourceID: resourceID, Kind: kind,
		WebhookURL: d.WebhookURL, CreatedAt: d.CreatedAt.UTC(),
	}
	var err error
	if d.Transaction != nil {
		if e.Transaction, err = d.Transaction.toTransaction(); err != nil {
			return ports.Delivery{}, err
		}
	}
	if d.Withdrawal != nil {
		if e.Withdrawal, err = d.Withdrawal.toWithdrawal(); err != nil {
			return ports.Delivery{}, err
		}
	}
	status, err := ports.ParseDeliveryStatus(d.Status)
	if err != nil {
		return ports.Delivery{}, fmt.Errorf("stored delivery of event %s: %w", d.EventID, err)
	}
	out := ports.Delivery{Event: e, Status: status, NextAttemptAt: d.NextAttemptAt.UTC()}
	for _, a := range d.Attempts {
		out.Attempts = append(out.Attempts, ports.Attempt{
			At: a.At.UTC(), StatusCode: a.StatusCode, Error: a.Error, Duration: time.Duration(a.DurationNS),
		})
	}
	return out, nil
}
