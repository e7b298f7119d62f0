package domain

import (
	"errors"
	"fmt"
	"time"
)

// A devolution (a refund's, or a late payment's return) is sent to the acquirer by an outbox
// that lives in the record that asked for it: a refund in its transaction, a late payment in
// its payment claim. The record is stored due before anything is sent, and the outbox claims
// it, sends it, reads it back, and applies the acquirer's answer, each step a version-checked
// update of that record (as a withdrawal's payout is sent, see withdrawal_payout.go).
//
// The acquirer keeps one devolution per id and refuses an id used before, so every attempt of
// one devolution goes under the same id, and a devolution whose outcome is unknown is read
// back before it is sent again.

// DevolutionDispatch is where the sending of one devolution stands.
type DevolutionDispatch struct {
	// Due is when the outbox next looks at the devolution: at once for a new one, the end of a
	// claim while a step is in flight, the next read back while the acquirer processes it; nil
	// once nothing is left to send or read back (the devolution's result applied, or a record
	// stored before devolutions had an outbox).
	Due *time.Time
	// Claims counts the outbox's claims. The first happens before the devolution is first
	// sent: from then on it may have reached the acquirer, and a step that finds the count
	// moved on after its own claim leaves what it learnt to the new holder.
	Claims int
}

// NewDevolutionDispatch is the dispatch of a devolution recorded at now: due at once.
func NewDevolutionDispatch(now time.Time) DevolutionDispatch {
	at := now.UTC().Truncate(time.Millisecond)
	return DevolutionDispatch{Due: &at}
}

// DevolutionStep is what the devolution outbox does with a devolution it claimed.
type DevolutionStep string

const (
	// DevolutionSend sends the devolution for the first time.
	DevolutionSend DevolutionStep = "send"
	// DevolutionReadBack reads back a devolution that may have been sent (an earlier step's
	// outcome is unknown, or the acquirer was processing it); one the acquirer never received
	// is sent again under the same id.
	DevolutionReadBack DevolutionStep = "read_back"
)

// ErrDevolutionNotDue is the answer of a claim of a devolution that needs nothing now: another
// instance holds it, its next look is later, or it is done.
var ErrDevolutionNotDue = errors.New("the devolution is not due")

// Claim takes the devolution, due at or before now, for one step of the outbox until until
// (the step's calls to the acquirer end by then): it is due again only then, so that no other
// instance takes it meanwhile. It answers the step to take.
func (d *DevolutionDispatch) Claim(now, until time.Time) (DevolutionStep, error) {
	if d.Due == nil || d.Due.After(now) {
		return "", ErrDevolutionNotDue
	}
	step := DevolutionSend
	if d.Claims > 0 {
		step = DevolutionReadBack
	}
	at := until.UTC().Truncate(time.Millisecond)
	d.Due, d.Claims = &at, d.Claims+1
	return step, nil
}

// Schedule makes the outbox look at the devolution again at at; it changes nothing once the
// devolution is done.
func (d *DevolutionDispatch) Schedule(at time.Time) {
	if d.Due != nil {
		at = at.UTC().Truncate(time.Millisecond)
		d.Due = &at
	}
}

// Done records that nothing is left to send or read back.
func (d *DevolutionDispatch) Done() { d.Due = nil }

// ClaimDevolution claims the devolution of the refund in progress for one step of the outbox
// (see DevolutionDispatch.Claim) and answers that refund as claimed. A transaction with no
// refund in progress, or whose refund's devolution is not due, is ErrDevolutionNotDue and
// changes nothing.
func (t *Transaction) ClaimDevolution(now, until time.Time) (Refund, DevolutionStep, error) {
	for i, r := range t.refunds {
		if r.Status != RefundProcessing || t.status != TxProcessingRefund {
			continue
		}
		step, err := t.refunds[i].Dispatch.Claim(now, until)
		if err != nil {
			return Refund{}, "", fmt.Errorf("transaction %s refund %s: %w", t.id, r.ID, err)
		}
		return cloneRefunds(t.refunds[i : i+1])[0], step, nil
	}
	return Refund{}, "", fmt.Errorf("transaction %s: %w", t.id, ErrDevolutionNotDue)
}

// ScheduleDevolution makes the outbox look at the devolution of refund id again at at, while
// the refund is in progress; it tells whether it did.
func (t *Transaction) ScheduleDevolution(id string, at time.Time) bool {
	for i, r := range t.refunds {
		if r.ID == id && r.Status == RefundProcessing && r.Dispatch.Due != nil {
			t.refunds[i].Dispatch.Schedule(at)
			return true
		}
	}
	return false
}

// DevolutionDue is when the outbox next looks at the devolution of the refund in progress; nil
// when there is none, or nothing is left to do. Stores index it to find the due work.
func (t *Transaction) DevolutionDue() *time.Time {
	for _, r := range t.refunds {
		if r.Status == RefundProcessing {
			return clonePtr(r.Dispatch.Due)
		}
	}
	return nil
}
