package ports

import (
	"context"
	"errors"
	"time"

	"github.com/pixgate/pixgate/domain"
)

// ReceivedPixQuery asks for one page of the PIX the acquirer received whose time lies from
// Start to End, both included.
type ReceivedPixQuery struct {
	Start, End time.Time
	Page       int // 0 is the first page
}

// ReceivedPix is one PIX the acquirer received, as Banco Central's API Pix lists it (GET
// /pix): the same facts as a callback's entry.
type ReceivedPix struct {
	EndToEndID  string
	TxID        string // empty when the PIX named none
	Amount      domain.Cents
	PaidAt      time.Time
	Devolutions []ReceivedDevolution
	// Invalid, when set, says why the listing's entry is malformed by the specification; the
	// other fields may then be empty. One malformed entry never hides the others.
	Invalid string
}

// ReceivedDevolution is one devolution of a ReceivedPix.
type ReceivedDevolution struct {
	ID       string // the devolution id pixgate (or the acquirer, for a MED) gave it
	ReturnID string // rtrId
	Amount   domain.Cents
	Status   DevolutionStatus
	Reason   string // motivo
	Nature   string // natureza as listed; empty when absent
}

// ReceivedPixPage is one page of the listing.
type ReceivedPixPage struct {
	Pix   []ReceivedPix
	Page  int // the page answered
	Pages int // how many pages the query has (at least 1)
}

// ReceivedPixLister lists the PIX that the acquirer received for pixgate's key, so that a
// payment whose callback never arrived is still learned (reconciliation).
//
// ListReceivedPix answers one page of the PIX received from q.Start to q.End, in the
// acquirer's order (pages are stable while nothing new arrives in the window; a PIX may move
// between pages when one does, which is why a reconciliation applies entries idempotently and
// ends its window at the time it asked). It is a read, safe to retry and safe for concurrent
// use. Errors: ErrAcquirerUnavailable (wrapped) when the acquirer could not be reached or kept
// failing; any other error is a refusal of the query.
type ReceivedPixLister interface {
	ListReceivedPix(ctx context.Context, q ReceivedPixQuery) (ReceivedPixPage, error)
}

// ErrAcquirerUnavailable: the acquirer could not answer now; the same call may succeed later.
var ErrAcquirerUnavailable = errors.New("the acquirer is unavailable")

// ReconciliationState is what instances sharing a store know of the reconciliation with the
// acquirer: the time its last complete pass reached, and who runs a pass now.
type ReconciliationState struct {
	// Reached is the end of the last pass that applied every page: every PIX the acquirer
	// listed up to it was applied. Zero before the first pass.
	Reached time.Time
	// Holder is the instance that runs a pass now, until HeldUntil; empty when none.
	Holder    string
	HeldUntil time.Time
}

// ErrReconciliationNotHeld: the caller does not hold the reconciliation (its hold ran out and
// another instance took it); what it wanted to store was not stored.
var ErrReconciliationNotHeld = errors.New("the reconciliation is not held by this instance")

// Reconciliations keeps the reconciliation's shared state, so that one instance at a time
// runs a pass, and the time reached survives restarts and is shared by every instance.
//
// Hold makes holder the one instance that reconciles, until until, when nobody holds it at
// now (a hold whose until has passed is nobody's), or when holder holds it already (a renewal);
// it answers false, and changes nothing, when another instance holds it. Among instances
// calling Hold at once, on any store, one wins: adapters build it on what their store
// enforces atomically. Complete stores reached (only ever later than the stored one) and ends
// holder's hold; Release ends it without storing anything; both answer
// ErrReconciliationNotHeld when holder does not hold it (then nothing changes). State reads
// the shared state. All are safe for concurrent use; store failures are errors of their own.
type Reconciliations interface {
	ReconciliationState(ctx context.Context) (ReconciliationState, error)
	HoldReconciliation(ctx context.Context, holder string, now, until time.Time) (bool, error)
	CompleteReconciliation(ctx context.Context, holder string, reached time.Time) error
	ReleaseReconciliation(ctx context.Context, holder string) error
}
