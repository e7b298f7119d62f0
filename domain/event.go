package domain

import (
	"crypto/rand"
	"fmt"
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

// newEventID makes a random UUID v4. Events are born inside transitions, where no generator
// port reaches, and their ids need nothing but uniqueness.
func newEventID() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(fmt.Sprintf("crypto/rand failed: %v", err)) // never happens on a supported OS
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}
