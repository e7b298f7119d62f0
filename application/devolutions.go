package application

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/pixgate/pixgate/domain"
	"github.com/pixgate/pixgate/ports"
)

// DevolutionSettings tune the devolution outbox.
type DevolutionSettings struct {
	// CheckEvery is how long the outbox waits before it reads back a devolution the acquirer
	// is still making (EM_PROCESSAMENTO), and the longest it waits before it tries again a
	// step whose outcome was unknown.
	CheckEvery time.Duration
	// Claim is how long one step holds a devolution: the step's calls to the acquirer all end
	// ClaimMargin before it. It must exceed ClaimMargin by the time one step's calls may take
	// (a read back, a send, a read back).
	Claim time.Duration
	// Batch bounds the devolutions of each kind one run looks at; 0 means 100.
	Batch int
}

// DevolutionReportLevel is how much a DevolutionReport matters.
type DevolutionReportLevel string

const (
	// DevolutionInfo: the acquirer refused a refund's devolution (the refund failed with its
	// reason, its money back in the merchant's balance).
	DevolutionInfo DevolutionReportLevel = "info"
	// DevolutionWarn: an unknown outcome or an unknown status, read back later.
	DevolutionWarn DevolutionReportLevel = "warn"
	// DevolutionError: money that stays where operations must look: a late payment's return
	// the acquirer refused or could not make (it stays in suspense), or an answer that
	// contradicts the refund's recorded result.
	DevolutionError DevolutionReportLevel = "error"
)

// DevolutionReport is what operators are told of a step of the devolution outbox that did not
// simply move the devolution on.
type DevolutionReport struct {
	Devolution    ports.Devolution
	TransactionID string // the refunded transaction, or the charge a late payment paid
	Step          domain.DevolutionStep
	Level         DevolutionReportLevel
	What          string // in words, for the log line
	Err           error  // the acquirer's or the store's error, when there is one
}

// DevolutionAttempt is what one step of the outbox learnt from the acquirer.
type DevolutionAttempt struct {
	// Taken is false when the devolution was not due (another instance holds it, or it is
	// done): nothing was asked.
	Taken bool
	// Result is the acquirer's answer when Err is nil.
	Result ports.DevolutionResult
	// Err is the acquirer's refusal (ports.ErrDevolutionRefused, read back and not found) or
	// an unknown outcome.
	Err error
}

// errNotTaken is a DevolutionAttempt's Err when the step was not taken by this call.
var errNotTaken = errors.New("the devolution is being sent by the outbox")

// SendDevolutions is the devolution outbox: it sends each devolution pixgate owes a payer (a
// merchant's refund; a late payment's, or a payment of another amount's, return) to the
// acquirer (ports.Acquirer) and applies the answers, until the devolution's result is known.
//
// Every devolution is recorded due before anything is sent: a refund with the transaction's
// refund (domain.Refund.Dispatch, written by the request that holds the amount), a late
// payment's return with its payment claim (ports.Ledger.MarkLate, before the money enters
// suspense). RunOnce finds the due ones and, for each, takes one step:
//
//  1. it claims the devolution with a versioned update of its record (the transaction, or the
//     payment claim), which holds it for Settings.Claim and counts the claim: of any number of
//     instances one claims, the others find it not due;
//  2. it calls the acquirer under the devolution's own id, within the claim: a first claim
//     sends (PUT); a later claim (the earlier step's outcome is unknown, or the acquirer was
//     processing it) reads back (GET) and sends again, under the same id, only when the
//     acquirer has no devolution under it; a send the acquirer refuses is read back too, as
//     API Pix refuses an id used before with the same answer as a request it will not carry
//     out: found, the devolution's status applies; not found, the refusal stands;
//  3. it applies the answer with another versioned update: EM_PROCESSAMENTO schedules the next
//     read back CheckEvery later; DEVOLVIDO completes the refund (ConfirmRefund: REFUNDED or
//     back to PAID, rtrId as its endToEndRefund) or takes the late payment out of suspense;
//     NAO_REALIZADO, or a refusal that stands, fails the refund (FailRefund: its amount back in
//     the available balance) or leaves the late payment in suspense for operations (reported).
//     An unknown outcome or an unknown status is reported and tried again later.
//
// The acquirer keeps one devolution per id and refuses a reused one, so the steps of instances
// that follow one another (a claim that ran out after a SIGKILL, a restart) make one
// devolution, however often it was sent. Results are facts and apply whoever learnt them, the
// acquirer's callback (ApplyPixNotifications) included, through the same state checks: a refund
// completes or fails once, and a late payment leaves suspense once (its posting is stored
// once). A schedule or a refusal applies only while the step that learnt it still holds the
// claim (the count did not move).
type SendDevolutions struct {
	repo     ports.TransactionRepository
	ledger   ports.Ledger
	acquirer ports.Acquirer
	clock    ports.Clock
	settings DevolutionSettings
	report   func(DevolutionReport)
}

// NewSendDevolutions builds the outbox. report is told of every step that did not simply
// move a devolution on (for a log line).
func NewSendDevolutions(repo ports.TransactionRepository, ledger ports.Ledger, acquirer ports.Acquirer, clock ports.Clock, s DevolutionSettings, report func(DevolutionReport)) *SendDevolutions {
	requirePorts("NewSendDevolutions", repo, ledger, acquirer, clock, report)
	if s.CheckEvery <= 0 || s.Claim <= ClaimMargin {
		panic("application.NewSendDevolutions: CheckEvery must be positive and Claim longer than ClaimMargin")
	}
	if s.Batch <= 0 {
		s.Batch = 100
	}
	return &SendDevolutions{repo: repo, ledger: ledger, acquirer: acquirer, clock: clock, settings: s, report: report}
}

// RunOnce takes one step of every devolution due now (at most Settings.Batch refunds and as
// many late payments) and tells how many it took. A store that fails stops the run; the
// acquirer failing only reschedules its devolution.
func (uc *SendDevolutions) RunOnce(ctx context.Context) (int, error) {
	n := 0
	txs, err := uc.repo.ListDevolutionsDue(ctx, uc.clock.Now(), uc.settings.Batch)
	if err != nil {
		return 0, err
	}
	for _, t := range txs {
		a, err := uc.Refund(ctx, t.AccountID(), t.ID())
		if err != nil {
			return n, err
		}
		if a.Taken {
			n++
		}
	}
	claims, err := uc.ledger.LateDevolutionsDue(ctx, uc.clock.Now(), uc.settings.Batch)
	if err != nil {
		return n, err
	}
	for _, c := range claims {
		a, err := uc.Late(ctx, c.EndToEndID)
		if err != nil {
			return n, err
		}
		if a.Taken {
			n++
		}
	}
	return n, nil
}

// Refund takes one step of the devolution of the refund in progress of transaction id, when it
// is due (the refund's request takes the first at once, so that an acquirer that answers at
// once answers within the request). The error is the store's.
func (uc *SendDevolutions) Refund(ctx context.Context, accountID, id string) (DevolutionAttempt, error) {
	var r domain.Refund
	var step domain.DevolutionStep
	t, err := uc.repo.Update(ctx, accountID, id, func(t *domain.Transaction) error {
		now := uc.clock.Now()
		var err error
		r, step, err = t.ClaimDevolution(now, now.Add(uc.settings.Claim))
		return err
	})
	switch {
	case errors.Is(err, domain.ErrDevolutionNotDue), errors.Is(err, domain.ErrNotFound):
		return DevolutionAttempt{Err: errNotTaken}, nil
	case err != nil:
		return DevolutionAttempt{}, err
	}
	claim := r.Dispatch.Claims
	d := ports.Devolution{EndToEndID: t.EndToEnd(), ID: r.ID, Amount: r.Amount, Reason: r.Reason, Kind: ports.DevolutionRefund}
	a, refusal, ctxErr := uc.call(ctx, step, d)
	if ctxErr != nil {
		// Shutting down: the claim runs out and the next holder reads the devolution back.
		return a, ctxErr
	}
	report := DevolutionReport{Devolution: d, TransactionID: t.ID(), Step: step, Err: a.Err}
	_, err = uc.repo.Update(ctx, accountID, id, func(t *domain.Transaction) error {
		changed, err := uc.applyRefund(t, r.ID, claim, a, refusal, uc.clock.Now(), &report)
		if err == nil && !changed {
			return errUnchanged
		}
		return err
	})
	if err != nil && !errors.Is(err, errUnchanged) {
		return a, err
	}
	if report.Level != "" {
		uc.report(report)
	}
	return a, nil
}

// applyRefund moves t by what the step that claimed the devolution of refund id learnt (claim:
// the claims count then), and tells whether t changed.
func (uc *SendDevolutions) applyRefund(t *domain.Transaction, id string, claim int, a DevolutionAttempt, refusal bool, now time.Time, report *DevolutionReport) (bool, error) {
	var r domain.Refund
	for _, rf := range t.Refunds() {
		if rf.ID == id {
			r = rf
		}
	}
	live := r.Status == domain.RefundProcessing && t.Status() == domain.TxProcessingRefund
	holding := live && r.Dispatch.Claims == claim
	switch {
	case refusal:
		if !holding {
			return false, nil // another step holds it now, and learns the truth itself
		}
		report.Level, report.What = DevolutionInfo, "the acquirer refused the refund's devolution; the refund failed and its amount is back in the balance"
		return true, t.FailRefund(id, refundFailure(devolutionRefusal(a.Err)), now)
	case a.Err != nil:
		report.Level, report.What = DevolutionWarn, "the devolution's outcome is unknown; it is read back later"
		return holding && t.ScheduleDevolution(id, now.Add(uc.retryDelay(claim))), nil
	}
	switch a.Result.Status {
	case ports.DevolutionInProgress:
		return holding && t.ScheduleDevolution(id, now.Add(uc.settings.CheckEvery)), nil
	case ports.DevolutionReturned:
		if live {
			return true, t.ConfirmRefund(id, a.Result.ReturnID, now)
		}
		if r.Status == domain.RefundFailed {
			report.Level, report.What = DevolutionError, "the acquirer says the devolution was made but the refund failed: look at it at the acquirer"
		}
		return false, nil
	case ports.DevolutionNotDone:
		if live {
			return true, t.FailRefund(id, refundFailure(a.Result.Reason), now)
		}
		if r.Status == domain.RefundRefunded {
			report.Level, report.What = DevolutionError, "the acquirer says the devolution was not made but the refund is REFUNDED: look at it at the acquirer"
		}
		return false, nil
	}
	report.Level = DevolutionWarn
	report.What = fmt.Sprintf("the acquirer answered the devolution status %q, which pixgate does not know; it is read back later", clip(string(a.Result.Status)))
	return holding && t.ScheduleDevolution(id, now.Add(uc.settings.CheckEvery)), nil
}

// Late takes one step of the devolution of the late payment endToEndID, when it is due (the
// callback that recorded the payment takes the first at once). The error is the store's.
func (uc *SendDevolutions) Late(ctx context.Context, endToEndID string) (DevolutionAttempt, error) {
	var step domain.DevolutionStep
	c, err := uc.ledger.UpdateLateDevolution(ctx, endToEndID, func(c *ports.PaymentClaim) error {
		if !c.Late {
			return domain.ErrDevolutionNotDue
		}
		now := uc.clock.Now()
		var err error
		step, err = c.Devolution.Claim(now, now.Add(uc.settings.Claim))
		return err
	})
	switch {
	case errors.Is(err, domain.ErrDevolutionNotDue), errors.Is(err, domain.ErrNotFound):
		return DevolutionAttempt{Err: errNotTaken}, nil
	case err != nil:
		return DevolutionAttempt{}, err
	}
	claim := c.Devolution.Claims
	d := LateDevolution(c)
	a, refusal, ctxErr := uc.call(ctx, step, d)
	if ctxErr != nil {
		return a, ctxErr
	}
	report := DevolutionReport{Devolution: d, TransactionID: c.TransactionID, Step: step, Err: a.Err}
	if a.Err == nil && a.Result.Status == ports.DevolutionReturned {
		// The money left for the payer: out of suspense (once, whoever learnt it), and only
		// then is the devolution done, so that a crash in between reads it back again.
		arrive, leave := domain.LatePaymentPostings(c.EndToEndID, c.TransactionID, c.Amount)
		arrive.At, leave.At = uc.clock.Now(), uc.clock.Now()
		if _, err := uc.ledger.Post(ctx, arrive, leave); err != nil {
			return a, err
		}
	}
	_, err = uc.ledger.UpdateLateDevolution(ctx, endToEndID, func(c *ports.PaymentClaim) error {
		if !uc.applyLate(&c.Devolution, claim, a, refusal, uc.clock.Now(), &report) {
			return errUnchanged
		}
		return nil
	})
	if err != nil && !errors.Is(err, errUnchanged) {
		return a, err
	}
	if report.Level != "" {
		uc.report(report)
	}
	return a, nil
}

// applyLate moves the devolution of a late payment by what the step that claimed it learnt,
// and tells whether it changed.
func (uc *SendDevolutions) applyLate(d *domain.DevolutionDispatch, claim int, a DevolutionAttempt, refusal bool, now time.Time, report *DevolutionReport) bool {
	holding := d.Due != nil && d.Claims == claim
	switch {
	case refusal:
		if !holding {
			return false
		}
		report.Level, report.What = DevolutionError, "the acquirer refused the late payment's devolution; the money stays in suspense for operations"
		d.Done()
		return true
	case a.Err != nil:
		report.Level, report.What = DevolutionWarn, "the devolution's outcome is unknown; it is read back later"
		if holding {
			d.Schedule(now.Add(uc.retryDelay(claim)))
		}
		return holding
	}
	switch a.Result.Status {
	case ports.DevolutionInProgress:
		if holding {
			d.Schedule(now.Add(uc.settings.CheckEvery))
		}
		return holding
	case ports.DevolutionReturned, ports.DevolutionNotDone:
		if a.Result.Status == ports.DevolutionNotDone {
			report.Level, report.What = DevolutionError, "the acquirer could not make the late payment's devolution ("+clip(a.Result.Reason)+"); the money stays in suspense for operations"
		}
		if d.Due == nil {
			return false
		}
		d.Done()
		return true
	}
	report.Level = DevolutionWarn
	report.What = fmt.Sprintf("the acquirer answered the devolution status %q, which pixgate does not know; it is read back later", clip(string(a.Result.Status)))
	if holding {
		d.Schedule(now.Add(uc.settings.CheckEvery))
	}
	return holding
}

// call makes the acquirer's calls of one step within its claim. refusal tells that a.Err is a
// refusal that stands (the acquirer refused the send and, read back, has no devolution under
// the id). The error is the caller's context ending.
func (uc *SendDevolutions) call(ctx context.Context, step domain.DevolutionStep, d ports.Devolution) (DevolutionAttempt, bool, error) {
	call, cancel := context.WithTimeout(ctx, uc.settings.Claim-ClaimMargin)
	defer cancel()
	res, refusal, err := uc.ask(call, step, d)
	if ctx.Err() != nil {
		return DevolutionAttempt{Taken: true, Err: err}, false, ctx.Err()
	}
	return DevolutionAttempt{Taken: true, Result: res, Err: err}, refusal, nil
}

// ask sends or reads back d as step says.
func (uc *SendDevolutions) ask(ctx context.Context, step domain.DevolutionStep, d ports.Devolution) (ports.DevolutionResult, bool, error) {
	if step == domain.DevolutionReadBack {
		res, err := uc.acquirer.Devolution(ctx, d.EndToEndID, d.ID)
		if !errors.Is(err, ports.ErrDevolutionNotFound) {
			return res, false, readBackError(err)
		}
		// Claimed before, never received: the first and only one is sent now, under the id.
	}
	res, err := uc.acquirer.RequestDevolution(ctx, d)
	if !errors.Is(err, ports.ErrDevolutionRefused) {
		return res, false, err
	}
	// API Pix answers an id used before (a send that reached it, whose answer was lost) with
	// the same 400 as a request it will not carry out: only reading it back tells them apart.
	refused := err
	res, err = uc.acquirer.Devolution(ctx, d.EndToEndID, d.ID)
	if errors.Is(err, ports.ErrDevolutionNotFound) {
		return ports.DevolutionResult{}, true, refused
	}
	return res, false, readBackError(err)
}

// readBackError is a read back's error as an unknown outcome, whatever it says: only a send
// can be refused.
func readBackError(err error) error {
	if err != nil && errors.Is(err, ports.ErrDevolutionRefused) {
		return fmt.Errorf("reading the devolution back: %v", err)
	}
	return err
}

// retryDelay is the wait before a devolution whose step's outcome was unknown is tried again:
// doubling from a second with each claim, CheckEvery at most.
func (uc *SendDevolutions) retryDelay(claims int) time.Duration {
	return min(time.Second<<min(max(claims-1, 0), 16), uc.settings.CheckEvery)
}

// devolutionRefusal is the acquirer's reason for refusing a devolution.
func devolutionRefusal(err error) string {
	var re *ports.DevolutionRefusedError
	if errors.As(err, &re) && re.Reason != "" {
		return clip(re.Reason)
	}
	return "the acquirer refused the devolution"
}

// LateDevolution is the devolution that returns the late payment of claim c in full: its id is
// LateDevolutionID, derived from the payment, so that a payment is returned at most once.
func LateDevolution(c ports.PaymentClaim) ports.Devolution {
	return ports.Devolution{EndToEndID: c.EndToEndID, ID: LateDevolutionID(c.EndToEndID), Amount: c.Amount,
		Reason: "payment that paid no charge", Kind: ports.DevolutionLatePayment}
}
