package domain

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// A withdrawal's payout is sent to the PSP by an outbox that lives in the withdrawal itself:
// the withdrawal is stored (with its checked withdrawal entry) PENDING and due, and the outbox
// claims it, sends it, reads it back, and applies the PSP's answer, each step a version-checked
// update of the withdrawal. The state that outbox keeps is payoutDispatch:
//
//   - due: when the outbox next looks at the payout (at once for a new withdrawal; the end of
//     a claim while a step is in flight; the next poll while the PSP processes it); nil once
//     nothing is left to send or read (PROCESSED and every final status). Stores find the due
//     work through an index on it.
//   - claims: how many times the outbox claimed the payout. The first claim happens before the
//     payout is first sent, so from then on it may have reached the PSP: a cancel is refused,
//     and a step that finds the payout claimed again after its own claim leaves what it learnt
//     to the new holder.
//
// A claim is a write of the withdrawal, so a claim and a cancel of one withdrawal are
// serialised by the store like any two updates: either the cancel comes first (the claim finds
// the withdrawal CANCELED and sends nothing) or the claim does (the cancel is refused).

// payoutDispatch is where the sending of a withdrawal's payout stands.
type payoutDispatch struct {
	due    *time.Time
	claims int
}

// PayoutStep is what the payout outbox does with a withdrawal it claimed.
type PayoutStep string

const (
	// PayoutSend sends the payout for the first time.
	PayoutSend PayoutStep = "send"
	// PayoutReadBack reads back a payout that may have been sent (an earlier step's outcome is
	// unknown): the PSP's answer decides, and a payout the PSP never received is sent again
	// under the same id.
	PayoutReadBack PayoutStep = "read_back"
	// PayoutCheck reads the status of a payout the PSP is processing.
	PayoutCheck PayoutStep = "check"
)

// ErrPayoutNotDue is the answer of ClaimPayout for a withdrawal whose payout needs nothing now:
// another instance claimed it, its next look is later, or it is done.
var ErrPayoutNotDue = errors.New("the payout is not due")

// payoutLive tells whether a withdrawal in s may still need its payout sent or read back.
func (s WithdrawalStatus) payoutLive() bool { return s == WdPending || s == WdProcessing }

// PayoutDue is when the payout outbox next looks at the withdrawal; nil when nothing is left to
// send or read back.
func (w *Withdrawal) PayoutDue() *time.Time { return clonePtr(w.dispatch.due) }

// PayoutClaims is how many times the payout outbox claimed the withdrawal's payout; from the
// first, the payout may have reached the PSP.
func (w *Withdrawal) PayoutClaims() int { return w.dispatch.claims }

// ClaimPayout takes the payout, due at or before now, for one step of the outbox until until
// (by then the step has ended, whatever happened to it: its calls to the PSP run under that
// deadline): the payout is due again only then, so that no other instance takes it meanwhile.
// It answers the step to take: PayoutSend for a PENDING withdrawal never claimed,
// PayoutReadBack for a PENDING one claimed before (that step's outcome is unknown),
// PayoutCheck for a PROCESSING one. A payout not due (another holds it, or it is done) is
// ErrPayoutNotDue and changes nothing.
func (w *Withdrawal) ClaimPayout(now, until time.Time) (PayoutStep, error) {
	if !w.status.payoutLive() || w.dispatch.due == nil || w.dispatch.due.After(now) {
		return "", fmt.Errorf("withdrawal %s: %w", w.id, ErrPayoutNotDue)
	}
	step := PayoutCheck
	if w.status == WdPending {
		step = PayoutSend
		if w.dispatch.claims > 0 {
			step = PayoutReadBack
		}
	}
	at := until.UTC().Truncate(time.Millisecond)
	w.dispatch.due, w.dispatch.claims = &at, w.dispatch.claims+1
	return step, nil
}

// SchedulePayout makes the outbox look at the payout again at at (after an answer that leaves
// the payout in progress, or an unknown outcome). It changes nothing once the payout is done.
func (w *Withdrawal) SchedulePayout(at time.Time) {
	if w.status.payoutLive() {
		at = at.UTC().Truncate(time.Millisecond)
		w.dispatch.due = &at
	}
}

// PayoutTakenAtOnce records that the payout provider took the payout in the request that
// created the withdrawal (the sandbox, which moves no money): PENDING → PROCESSING at once, the
// payout counted as claimed, and its status first read back at check.
func (w *Withdrawal) PayoutTakenAtOnce(now, check time.Time) error {
	if err := w.StartProcessing(now); err != nil {
		return err
	}
	w.dispatch.claims++
	w.SchedulePayout(check)
	return nil
}

// PayoutID is the id under which a withdrawal's payout is sent to the PSP: the withdrawal's id
// without its dashes (a UUID makes 32 characters [a-f0-9], what PSPs accept as a payout id).
func PayoutID(withdrawalID string) string { return strings.ReplaceAll(withdrawalID, "-", "") }

// WithdrawalIDOfPayout is the withdrawal id whose PayoutID is payoutID, or "" when payoutID is
// not one pixgate makes (32 lowercase hexadecimal characters).
func WithdrawalIDOfPayout(payoutID string) string {
	if len(payoutID) != 32 || strings.Trim(payoutID, "0123456789abcdef") != "" {
		return ""
	}
	p := payoutID
	return p[:8] + "-" + p[8:12] + "-" + p[12:16] + "-" + p[16:20] + "-" + p[20:]
}
