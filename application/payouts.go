package application

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/pixgate/pixgate/domain"
	"github.com/pixgate/pixgate/ports"
)

// PayoutSettings tune the payout outbox.
type PayoutSettings struct {
	// CheckEvery is how long the outbox waits before it reads back a payout the PSP is still
	// making, and the longest it waits before it tries again a step whose outcome was unknown.
	CheckEvery time.Duration
	// Claim is how long one step holds a payout (domain.Withdrawal.ClaimPayout): the step's
	// calls to the PSP all end ClaimMargin before it, so that no other instance takes the
	// payout while a call of this one may still reach the PSP. It must exceed ClaimMargin by
	// the time the PSP's calls of one step may take (a read back, a send, a read back).
	Claim time.Duration
	// Batch bounds the withdrawals one run looks at; 0 means 100.
	Batch int
}

// ClaimMargin is the time a step keeps, at the end of its claim, for storing what it learnt.
const ClaimMargin = 5 * time.Second

// PayoutReport is what operators are told of a step of the outbox, or of a PSP's notice, that
// did not simply move the withdrawal on: an outcome that is unknown, a status pixgate does not
// know, a refusal, or an answer that contradicts the withdrawal's status.
type PayoutReport struct {
	WithdrawalID string
	PayoutID     string
	Step         domain.PayoutStep // empty for a PSP's notice
	Level        PayoutReportLevel
	// What happened, in words, for the log line.
	What string
	// Err is the PSP's or the store's error, when there is one.
	Err error
}

// PayoutReportLevel is how much a PayoutReport matters.
type PayoutReportLevel string

const (
	// PayoutInfo: a payout the PSP refused (the withdrawal failed with its reason).
	PayoutInfo PayoutReportLevel = "info"
	// PayoutWarn: an unknown outcome or an unknown status, read back later.
	PayoutWarn PayoutReportLevel = "warn"
	// PayoutError: the PSP's answer contradicts the withdrawal (a payout made for a withdrawal
	// that was given back): operations must look.
	PayoutError PayoutReportLevel = "error"
)

// PayOutWithdrawals is the payout outbox: it sends each withdrawal's payout to the PSP
// (ports.Payouts) and applies the PSP's answers, until the withdrawal is PROCESSED or FAILED.
//
// Every withdrawal is stored with its withdrawal entry before anything is sent, due at once
// (domain.Withdrawal.PayoutDue). RunOnce finds the due ones (ListPayoutsDue) and, for each,
// takes one step:
//
//  1. it claims the payout with a versioned update (domain.Withdrawal.ClaimPayout), which
//     holds it for Settings.Claim and counts the claim. The store never runs two updates of
//     one withdrawal at once, from any number of instances: of two instances, one claims and
//     the other finds the payout not due; a merchant's cancel either comes first (the claim
//     finds the withdrawal CANCELED and nothing is sent) or is refused (a claimed payout may
//     have reached the PSP);
//  2. it calls the PSP under the id domain.PayoutID, within the claim: a first send sends; a
//     payout claimed before (whose outcome is unknown: a timeout, a crash, a SIGKILL) is read
//     back, and sent again, under the same id, only when the PSP says it never got it; a send
//     the PSP answers "id taken" is read back; a payout in progress is read back;
//  3. it applies the answer with another versioned update: EM_PROCESSAMENTO moves PENDING to
//     PROCESSING and schedules the next read back CheckEvery later; REALIZADO completes it
//     (PROCESSED, its endToEnd); NAO_REALIZADO fails it (FAILED with the PSP's reason, the
//     withdrawal_reversal entry giving the money back); a refusal of the request itself
//     fails a PENDING one (PENDING → FAILED). An unknown outcome, a status pixgate does not
//     know, or a read back that finds nothing for a payout in progress is reported and tried
//     again later, never taken for a refusal or guessed.
//
// The PSP keeps one payout per id, so the steps of instances that follow one another (a
// claim that ran out, a restart) make one payout, however often it was sent. A step that finds
// its claim taken over by another (the count moved on) leaves the refusal or the schedule it
// learnt to the new holder; a status the PSP reports is a fact and applies whoever learnt it,
// in the state table's order only (an answer older than the withdrawal's status changes
// nothing).
//
// Each status change raises the withdrawal's event, delivered to its webhook like any other.
type PayOutWithdrawals struct {
	repo     ports.WithdrawalRepository
	payouts  ports.Payouts
	clock    ports.Clock
	settings PayoutSettings
	report   func(PayoutReport)
}

// NewPayOutWithdrawals builds the outbox. report is told of every step that did not simply
// move a withdrawal on (for a log line).
func NewPayOutWithdrawals(repo ports.WithdrawalRepository, payouts ports.Payouts, clock ports.Clock, s PayoutSettings, report func(PayoutReport)) *PayOutWithdrawals {
	requirePorts("NewPayOutWithdrawals", repo, payouts, clock, report)
	if s.CheckEvery <= 0 || s.Claim <= ClaimMargin {
		panic("application.NewPayOutWithdrawals: CheckEvery must be positive and Claim longer than ClaimMargin")
	}
	if s.Batch <= 0 {
		s.Batch = 100
	}
	return &PayOutWithdrawals{repo: repo, payouts: payouts, clock: clock, settings: s, report: report}
}

// RunOnce takes one step of every payout due now (at most Settings.Batch) and tells how many
// it took. A store that fails stops the run; the PSP failing only reschedules its payout.
func (uc *PayOutWithdrawals) RunOnce(ctx context.Context) (int, error) {
	due, err := uc.repo.ListPayoutsDue(ctx, uc.clock.Now(), uc.settings.Batch)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, w := range due {
		took, err := uc.step(ctx, w.AccountID(), w.ID())
		if err != nil {
			return n, err
		}
		if took {
			n++
		}
	}
	return n, nil
}

// step claims one payout, asks the PSP, and applies the answer. It tells whether it took the
// step (false: another instance holds the payout, or it is no longer due).
func (uc *PayOutWithdrawals) step(ctx context.Context, accountID, id string) (bool, error) {
	var step domain.PayoutStep
	w, err := uc.repo.Update(ctx, accountID, id, func(w *domain.Withdrawal) error {
		now := uc.clock.Now()
		var err error
		step, err = w.ClaimPayout(now, now.Add(uc.settings.Claim))
		return err
	})
	switch {
	case errors.Is(err, domain.ErrPayoutNotDue), errors.Is(err, domain.ErrNotFound):
		return false, nil
	case err != nil:
		return false, err
	}
	claim := w.PayoutClaims()
	call, cancel := context.WithTimeout(ctx, uc.settings.Claim-ClaimMargin)
	res, sendRefused, err := uc.ask(call, step, orderOf(w))
	cancel()
	if ctx.Err() != nil {
		// Shutting down: the claim runs out and the next holder reads the payout back.
		return true, ctx.Err()
	}
	report := PayoutReport{WithdrawalID: w.ID(), PayoutID: domain.PayoutID(w.ID()), Step: step, Err: err}
	var move func(w *domain.Withdrawal, now time.Time) (bool, error)
	switch {
	case err == nil:
		move = func(w *domain.Withdrawal, now time.Time) (bool, error) {
			return uc.apply(w, res, now, &report, w.PayoutClaims() == claim)
		}
	case sendRefused:
		move = func(w *domain.Withdrawal, now time.Time) (bool, error) {
			if w.PayoutClaims() != claim || w.Status() != domain.WdPending {
				return false, nil // another step holds it now, and learns the truth itself
			}
			report.Level, report.What = PayoutInfo, "the PSP refused the payout; the withdrawal failed and its money is back"
			return true, w.RefusePayout(refusalReason(err), now)
		}
	default:
		report.Level, report.What = PayoutWarn, "the payout's outcome is unknown; it is read back later"
		move = func(w *domain.Withdrawal, now time.Time) (bool, error) {
			if w.PayoutClaims() != claim {
				return false, nil
			}
			w.SchedulePayout(now.Add(uc.retryDelay(claim)))
			return true, nil
		}
	}
	if err := uc.store(ctx, w, move); err != nil {
		return true, err
	}
	if report.Level != "" {
		uc.report(report)
	}
	return true, nil
}

// ask makes the PSP's calls of one step. sendRefused tells that err is the PSP's refusal of a
// send (the only refusal that fails a withdrawal: a read back the PSP refuses is an unknown).
func (uc *PayOutWithdrawals) ask(ctx context.Context, step domain.PayoutStep, o ports.PayoutOrder) (res ports.PayoutResult, sendRefused bool, err error) {
	if step != domain.PayoutSend {
		res, err = uc.payouts.Status(ctx, o.ID)
		if step == domain.PayoutCheck || !errors.Is(err, ports.ErrPayoutNotFound) {
			return res, false, readBackErr(err)
		}
		// A payout claimed before whose send never reached the PSP: the first and only one
		// is sent now, under the same id.
	}
	res, err = uc.payouts.Send(ctx, o)
	if errors.Is(err, ports.ErrPayoutIDTaken) {
		res, err = uc.payouts.Status(ctx, o.ID)
		return res, false, readBackErr(err)
	}
	return res, errors.Is(err, ports.ErrPayoutRefused), err
}

// readBackErr is a read back's error as an unknown outcome, whatever it says: only a send can
// be refused.
func readBackErr(err error) error {
	if err != nil && errors.Is(err, ports.ErrPayoutRefused) {
		return fmt.Errorf("reading the payout back: %v", err)
	}
	return err
}

// apply moves w by the PSP's answer res, in the state table's order only, and tells whether w
// changed. holding says whether the step that learnt res still holds the payout: only then
// does it schedule the next look (another holder schedules its own).
func (uc *PayOutWithdrawals) apply(w *domain.Withdrawal, res ports.PayoutResult, now time.Time, report *PayoutReport, holding bool) (bool, error) {
	status := w.Status()
	live := status == domain.WdPending || status == domain.WdProcessing
	switch res.Status {
	case ports.PayoutInProgress, ports.PayoutDone, ports.PayoutNotDone:
	default:
		report.Level = PayoutWarn
		report.What = fmt.Sprintf("the PSP answered the status %q, which pixgate does not know; it is read back later", clip(string(res.Status)))
		if live && holding {
			w.SchedulePayout(now.Add(uc.settings.CheckEvery))
			return true, nil
		}
		return false, nil
	}
	if !live {
		// An answer older than the withdrawal's status changes nothing; one that contradicts
		// its end (money paid out for a withdrawal that gave it back, or the other way round)
		// is for operations to look at.
		paid := status == domain.WdProcessed || status == domain.WdRefunded
		if res.Status == ports.PayoutDone && !paid || res.Status == ports.PayoutNotDone && paid {
			report.Level = PayoutError
			report.What = fmt.Sprintf("the PSP says the payout is %s but the withdrawal is %s: look at it at the PSP", res.Status, status)
		}
		return false, nil
	}
	if status == domain.WdPending {
		// The PSP took it: it is processing, whatever comes next.
		if err := w.StartProcessing(now); err != nil {
			return false, err
		}
	}
	switch res.Status {
	case ports.PayoutDone:
		return true, w.Complete(res.EndToEndID, now)
	case ports.PayoutNotDone:
		reason := res.Reason
		if reason == "" {
			reason = "the PSP could not make the payout (" + string(ports.PayoutNotDone) + ")"
		}
		return true, w.Fail(reason, now)
	}
	if holding {
		w.SchedulePayout(now.Add(uc.settings.CheckEvery))
	}
	return status == domain.WdPending || holding, nil
}

// store applies move to the withdrawal as stored now; a move that changes nothing writes
// nothing.
func (uc *PayOutWithdrawals) store(ctx context.Context, w *domain.Withdrawal, move func(*domain.Withdrawal, time.Time) (bool, error)) error {
	_, err := uc.repo.Update(ctx, w.AccountID(), w.ID(), func(w *domain.Withdrawal) error {
		changed, err := move(w, uc.clock.Now())
		if err == nil && !changed {
			return errUnchanged
		}
		return err
	})
	if errors.Is(err, errUnchanged) {
		return nil
	}
	return err
}

// retryDelay is the wait before a payout whose step's outcome was unknown is tried again:
// doubling from a second with each claim, CheckEvery at most.
func (uc *PayOutWithdrawals) retryDelay(claims int) time.Duration {
	return min(time.Second<<min(max(claims-1, 0), 16), uc.settings.CheckEvery)
}

// PayoutNoticeOutcome is what became of a PSP's notice about one payout.
type PayoutNoticeOutcome string

const (
	// NoticeApplied: the payout was read back from the PSP and moved the withdrawal.
	NoticeApplied PayoutNoticeOutcome = "applied"
	// NoticeUnchanged: read back, it told nothing new (the withdrawal has that status
	// already, or the payout is still in progress).
	NoticeUnchanged PayoutNoticeOutcome = "unchanged"
	// NoticeUnknownPayout: no withdrawal of pixgate's has this payout id.
	NoticeUnknownPayout PayoutNoticeOutcome = "unknown_payout"
	// NoticeDeferred: the PSP could not be read now (or does not show the payout yet); the
	// outbox reads it back on its own schedule.
	NoticeDeferred PayoutNoticeOutcome = "deferred"
)

// PayoutNotice is the outcome of a notice, with the withdrawal's status after it (empty for
// NoticeUnknownPayout).
type PayoutNotice struct {
	PayoutID     string
	WithdrawalID string
	Outcome      PayoutNoticeOutcome
	Status       domain.WithdrawalStatus
}

// Notice is a PSP's word that the payout payoutID changed (its callback). The callback's
// content is not trusted: the payout is read back from the PSP at once, over the PSP's own
// authenticated API, and what it says applies as a step of the outbox would apply it. Nothing
// is claimed: a read back changes nothing at the PSP, and its answer applies in the state
// table's order only, whatever the outbox is doing meanwhile.
func (uc *PayOutWithdrawals) Notice(ctx context.Context, payoutID string) (PayoutNotice, error) {
	n := PayoutNotice{PayoutID: payoutID, Outcome: NoticeUnknownPayout}
	id := domain.WithdrawalIDOfPayout(payoutID)
	if id == "" {
		return n, nil
	}
	w, err := uc.repo.Find(ctx, id)
	if errors.Is(err, domain.ErrNotFound) {
		return n, nil
	}
	if err != nil {
		return n, err
	}
	n.WithdrawalID, n.Status, n.Outcome = w.ID(), w.Status(), NoticeUnchanged
	// Read back even when the withdrawal's payout is done: nothing can move it any more, but an
	// answer that contradicts it (a payout made for a withdrawal that gave the money back) is
	// for operations to know.
	call, cancel := context.WithTimeout(ctx, uc.settings.Claim-ClaimMargin)
	res, err := uc.payouts.Status(call, payoutID)
	cancel()
	if err != nil {
		n.Outcome = NoticeDeferred
		if !errors.Is(err, ports.ErrPayoutNotFound) {
			uc.report(PayoutReport{WithdrawalID: w.ID(), PayoutID: payoutID, Level: PayoutWarn, Err: err,
				What: "the PSP's notice could not be read back; the outbox reads the payout back later"})
		}
		return n, nil
	}
	report := PayoutReport{WithdrawalID: w.ID(), PayoutID: payoutID}
	stored, err := uc.repo.Update(ctx, w.AccountID(), w.ID(), func(w *domain.Withdrawal) error {
		before := w.Status()
		changed, err := uc.apply(w, res, uc.clock.Now(), &report, false)
		if err == nil && (!changed || w.Status() == before) {
			return errUnchanged
		}
		return err
	})
	switch {
	case errors.Is(err, errUnchanged):
	case err != nil:
		return n, err
	default:
		n.Outcome, n.Status = NoticeApplied, stored.Status()
	}
	if report.Level != "" {
		uc.report(report)
	}
	return n, nil
}

// orderOf is the payout of w as the PSP is asked to make it.
func orderOf(w *domain.Withdrawal) ports.PayoutOrder {
	return ports.PayoutOrder{ID: domain.PayoutID(w.ID()), Amount: w.Amount(), Key: w.Payout().PixKey}
}

// refusalReason is the PSP's reason for refusing a payout, for the withdrawal's errorMessage.
func refusalReason(err error) string {
	var re *ports.PayoutRefusedError
	if errors.As(err, &re) && re.Reason != "" {
		return clip(re.Reason)
	}
	return "the PSP refused the payout"
}

// clip bounds a text from the PSP that pixgate keeps or logs.
func clip(s string) string {
	const most = 300
	if r := []rune(s); len(r) > most {
		return string(r[:most]) + "…"
	}
	return s
}
