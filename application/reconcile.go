package application

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/pixgate/pixgate/domain"
	"github.com/pixgate/pixgate/ports"
)

// ReconcileSettings tune the reconciliation with the acquirer.
type ReconcileSettings struct {
	// Holder names this instance while it holds the reconciliation; unique per process.
	Holder string
	// Hold bounds one pass: the instance holds the reconciliation that long, and a pass that
	// has not finished by then stops (the next pass starts again from the time reached).
	Hold time.Duration
	// Overlap is how far before the time reached a pass starts, for PIX the acquirer lists
	// late (its clock, or its own processing, behind ours).
	Overlap time.Duration
	// FirstLookBack is where the first pass of a store starts when no charge awaits payment.
	FirstLookBack time.Duration
	// MaxPages bounds the pages of one pass.
	MaxPages int
}

// Reconciliation's defaults.
const (
	DefaultReconcileHold     = 5 * time.Minute
	ReconcileOverlap         = 10 * time.Minute
	ReconcileFirstLookBack   = time.Hour
	DefaultReconcileMaxPages = 10_000
)

// Reconciled tells of a payment, or a devolution (Refund set), that a pass applied: its
// callback never came (or has not yet), and reconciliation learned it first.
type Reconciled struct {
	Result PixNotificationResult
	Refund *PixRefundResult
}

// ReconcileWithAcquirer lists the PIX the acquirer received and applies each, with its
// devolutions, exactly as its callback would (through ApplyPixNotifications: what a callback
// applied already is already_applied, so nothing applies twice, whoever comes first). One
// instance at a time runs a pass, holding the reconciliation in the store; a pass covers from
// the time the last complete pass reached, less the overlap, to the start of the pass, and
// stores that time once every page applied. A pass that fails stores nothing, and the next
// starts from the same time.
type ReconcileWithAcquirer struct {
	pix      ports.ReceivedPixLister
	state    ports.Reconciliations
	repo     ports.TransactionRepository
	notes    *ApplyPixNotifications
	clock    ports.Clock
	settings ReconcileSettings
	report   func(Reconciled)
}

// NewReconcileWithAcquirer builds the job. report is told of every entry that changed
// something (for a log line and a metric).
func NewReconcileWithAcquirer(pix ports.ReceivedPixLister, state ports.Reconciliations, repo ports.TransactionRepository,
	notes *ApplyPixNotifications, clock ports.Clock, s ReconcileSettings, report func(Reconciled)) *ReconcileWithAcquirer {
	requirePorts("NewReconcileWithAcquirer", pix, state, repo, clock)
	if notes == nil || report == nil || s.Holder == "" {
		panic("application.NewReconcileWithAcquirer: notes, report and a holder are required")
	}
	if s.Hold <= 0 {
		s.Hold = DefaultReconcileHold
	}
	if s.Overlap <= 0 {
		s.Overlap = ReconcileOverlap
	}
	if s.FirstLookBack <= 0 {
		s.FirstLookBack = ReconcileFirstLookBack
	}
	if s.MaxPages <= 0 {
		s.MaxPages = DefaultReconcileMaxPages
	}
	return &ReconcileWithAcquirer{pix: pix, state: state, repo: repo, notes: notes, clock: clock, settings: s, report: report}
}

// RunOnce runs a pass when no other instance is running one, and tells how many entries it
// found that changed something (0 when another instance holds the reconciliation).
func (uc *ReconcileWithAcquirer) RunOnce(ctx context.Context) (int, error) {
	now := uc.clock.Now().UTC()
	held, err := uc.state.HoldReconciliation(ctx, uc.settings.Holder, now, now.Add(uc.settings.Hold))
	if err != nil || !held {
		return 0, err
	}
	// The pass ends before the hold does, so that no other instance runs one beside it. A
	// context's deadline is on the wall clock, which the injected clock need not be: the
	// pass gets the hold's length, not a date read from uc.clock.
	pass, cancel := context.WithTimeout(ctx, uc.settings.Hold-ClaimMargin)
	defer cancel()
	changed, err := uc.pass(pass, now)
	if err == nil {
		err = uc.state.CompleteReconciliation(ctx, uc.settings.Holder, now)
	}
	if err != nil {
		if rerr := uc.state.ReleaseReconciliation(context.WithoutCancel(ctx), uc.settings.Holder); rerr != nil && !errors.Is(rerr, ports.ErrReconciliationNotHeld) {
			err = errors.Join(err, rerr)
		}
		return changed, fmt.Errorf("reconciliation: %w", err)
	}
	return changed, nil
}

// pass applies every page of the window that ends at end.
func (uc *ReconcileWithAcquirer) pass(ctx context.Context, end time.Time) (int, error) {
	start, err := uc.start(ctx, end)
	if err != nil {
		return 0, err
	}
	changed := 0
	for page := 0; ; page++ {
		if page == uc.settings.MaxPages {
			return changed, fmt.Errorf("the acquirer lists more than %d pages from %s to %s", page,
				start.Format(time.RFC3339), end.Format(time.RFC3339))
		}
		got, err := uc.pix.ListReceivedPix(ctx, ports.ReceivedPixQuery{Start: start, End: end, Page: page})
		if err != nil {
			return changed, err
		}
		entries := make([]PixNotification, len(got.Pix))
		for i, p := range got.Pix {
			entries[i] = notificationOf(p)
		}
		results, err := uc.notes.Execute(ctx, entries)
		if err != nil {
			return changed, err
		}
		for _, res := range results {
			changed += uc.told(res)
		}
		if page+1 >= got.Pages {
			return changed, nil
		}
	}
}

// start is where a pass ending at end starts: the time reached less the overlap; on a store
// that never reconciled, the creation of the oldest charge awaiting payment, or FirstLookBack
// before end.
func (uc *ReconcileWithAcquirer) start(ctx context.Context, end time.Time) (time.Time, error) {
	st, err := uc.state.ReconciliationState(ctx)
	if err != nil {
		return time.Time{}, err
	}
	if !st.Reached.IsZero() {
		return minTime(st.Reached.Add(-uc.settings.Overlap), end), nil
	}
	oldest, err := uc.repo.ListByStatus(ctx, domain.TxPixQRCodeGenerated, end, 1)
	if err != nil {
		return time.Time{}, err
	}
	start := end.Add(-uc.settings.FirstLookBack)
	if len(oldest) == 1 && oldest[0].CreatedAt().Before(start) {
		start = oldest[0].CreatedAt()
	}
	return start.UTC(), nil
}

// told reports the payment and the devolutions an entry applied, and counts them. Money that
// paid no charge (late_payment_refunded, amount_mismatch) is not told here: the late-payment
// hook of ApplyPixNotifications tells it once, whichever delivery stored it first.
func (uc *ReconcileWithAcquirer) told(res PixNotificationResult) int {
	n := 0
	if res.Outcome == OutcomeApplied {
		uc.report(Reconciled{Result: res})
		n++
	}
	for i := range res.Refunds {
		if res.Refunds[i].Outcome == OutcomeApplied {
			uc.report(Reconciled{Result: res, Refund: &res.Refunds[i]})
			n++
		}
	}
	return n
}

func notificationOf(p ports.ReceivedPix) PixNotification {
	n := PixNotification{EndToEndID: p.EndToEndID, TxID: p.TxID, Amount: p.Amount, PaidAt: p.PaidAt, Invalid: p.Invalid}
	for _, d := range p.Devolutions {
		n.Refunds = append(n.Refunds, PixRefund{ID: d.ID, ReturnID: d.ReturnID, Amount: d.Amount,
			Status: PixRefundStatus(d.Status), Reason: d.Reason, Nature: d.Nature})
	}
	return n
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}
