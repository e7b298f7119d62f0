package ports

import (
	"context"
	"fmt"
	"time"

	"github.com/pixgate/pixgate/domain"
)

// DeliveryStatus is where the delivery of one event stands.
type DeliveryStatus string

const (
	DeliveryPending   DeliveryStatus = "pending"   // waiting for its next attempt
	DeliveryDelivered DeliveryStatus = "delivered" // a 2xx answer came back
	DeliveryFailed    DeliveryStatus = "failed"    // the schedule ran out, or 410 Gone; kept
)

// ParseDeliveryStatus accepts exactly one of the delivery statuses; storage adapters check
// with it what they read.
func ParseDeliveryStatus(s string) (DeliveryStatus, error) {
	switch st := DeliveryStatus(s); st {
	case DeliveryPending, DeliveryDelivered, DeliveryFailed:
		return st, nil
	}
	return "", fmt.Errorf("unknown delivery status %q", s)
}

// Attempt records one delivery attempt.
type Attempt struct {
	At         time.Time
	StatusCode int    // 0 when no answer came
	Error      string // transport error, empty on an answer
	Duration   time.Duration
}

// Delivery is an event and the state of its delivery.
type Delivery struct {
	Event         domain.Event
	Status        DeliveryStatus
	Attempts      []Attempt
	NextAttemptAt time.Time
}

// Outbox hands stored events to webhook dispatchers. Repositories put events into it in the
// same write as the status change that raised them (pending, due at once).
//
// Several dispatchers, in several processes, share one outbox: Claim takes a lease with a
// conditional update, so one delivery is held by one owner at a time; a lease that expires
// (its owner died) makes the delivery claimable again. Safe for concurrent use.
type Outbox interface {
	// Claim leases up to limit pending deliveries due at or before now, that nobody holds or
	// whose lease expired, to owner until now+lease, oldest due first. Deliveries of the
	// accounts in skipAccounts are left for a later claim, as if they were not due: a
	// dispatcher names the accounts that hold their share of its workers already, so that
	// another account's delivery is not queued behind theirs.
	Claim(ctx context.Context, owner string, now time.Time, lease time.Duration, limit int, skipAccounts []string) ([]Delivery, error)

	// RecordAttempt appends attempt to the event's delivery, sets its status and next attempt
	// time, and releases the lease, only while owner still holds it; otherwise it answers
	// ErrVersionConflict and changes nothing.
	RecordAttempt(ctx context.Context, eventID, owner string, attempt Attempt, status DeliveryStatus, next time.Time) error

	// Release gives up every lease owner holds (graceful shutdown), leaving the deliveries
	// pending for any dispatcher.
	Release(ctx context.Context, owner string) error

	// Deliveries lists the deliveries of one resource of an account, oldest event first.
	Deliveries(ctx context.Context, accountID string, kind domain.ResourceKind, resourceID string) ([]Delivery, error)
}
