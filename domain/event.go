package domain

import (
	"strings"
	"time"
)

// ResourceKind names the aggregate an event is about.
type ResourceKind string

const (
	ResourceTransaction ResourceKind = "transaction"
	ResourceWithdrawal  ResourceKind = "withdrawal"
	// ResourceAccount is a merchant account itself: the resource of its opening balance.
	ResourceAccount ResourceKind = "account"
)

// Event is raised by a transition into a status after PENDING, for a resource that has a
// webhook URL. It carries a snapshot of the resource right after the transition, because the
// notification's data is the resource as it was at that moment. Exactly one of Transaction and
// Withdrawal is set.
type Event struct {
	ID          string // UUID v4; the webhook-id of every delivery attempt
	Type        string // resource and status in lower case: "transaction.paid"
	AccountID   string
	ResourceID  string
	Kind        ResourceKind
	WebhookURL  string
	CreatedAt   time.Time
	Transaction *Transaction
	Withdrawal  *Withdrawal
}

// EventType is the type name of the event a resource raises when it enters status.
func EventType(kind ResourceKind, status string) string {
	return string(kind) + "." + strings.ToLower(status)
}
