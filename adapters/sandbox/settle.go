package sandbox

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/pixgate/pixgate/domain"
	"github.com/pixgate/pixgate/ports"
)

// SettleTransactions is the sandbox acquirer's back office, run every few hundred milliseconds: a
// refund in progress (PROCESSING_REFUND) or an accepted MED dispute (PROCESSING_INFRACTION)
// whose last change is at least the settle delay old completes, REFUNDED or INFRACTION, with an
// endToEndRefund in Banco Central's format ('D', the sandbox ISPB, the minute, 11 random
// characters).
//
// It touches the sandbox acquirer's transactions only. Several instances may run it against
// one store: each move is a version-checked update that re-checks the status and the delay on
// the stored transaction, so there is one transition and one event, whoever wins.
type SettleTransactions struct {
	repo     ports.TransactionRepository
	clock    ports.Clock
	acquirer string
	delay    time.Duration
	batch    int
}

// NewSettleTransactions builds the job for the transactions of acquirer (the sandbox emitter's
// name) with the settle delay.
func NewSettleTransactions(repo ports.TransactionRepository, clock ports.Clock, acquirer string, delay time.Duration) *SettleTransactions {
	if repo == nil || clock == nil {
		panic("sandbox.NewSettleTransactions: a repository and a clock are required")
	}
	if acquirer == "" || delay < 0 {
		panic("sandbox.NewSettleTransactions: an acquirer and a delay of at least 0 are required")
	}
	return &SettleTransactions{repo: repo, clock: clock, acquirer: acquirer, delay: delay, batch: 500}
}

// errNotDue leaves a transaction that changed since it was listed.
var errNotDue = errors.New("not due yet")

// RunOnce completes what is due now and tells how many transactions it moved.
func (uc *SettleTransactions) RunOnce(ctx context.Context) (int, error) {
	moved := 0
	for _, status := range []domain.TransactionStatus{domain.TxProcessingRefund, domain.TxProcessingInfraction} {
		due, err := uc.repo.ListByStatus(ctx, status, uc.clock.Now().Add(-uc.delay), uc.batch)
		if err != nil {
			return moved, err
		}
		for _, t := range due {
			if t.Acquirer() != uc.acquirer {
				continue
			}
			_, err := uc.repo.Update(ctx, t.AccountID(), t.ID(), func(t *domain.Transaction) error {
				return uc.settle(t, status)
			})
			switch {
			case err == nil:
				moved++
			case errors.Is(err, domain.ErrInvalidTransition), errors.Is(err, errNotDue):
				// Settled by another instance, or steered (refund/fail) meanwhile.
			default:
				return moved, err
			}
		}
	}
	return moved, nil
}

func (uc *SettleTransactions) settle(t *domain.Transaction, listed domain.TransactionStatus) error {
	now := uc.clock.Now()
	if t.Status() == listed && t.UpdatedAt().After(now.Add(-uc.delay)) {
		// It left the status and came back (a failed refund asked again) after the listing.
		return fmt.Errorf("transaction %s: %w", t.ID(), errNotDue)
	}
	e2e := domain.NewEndToEndID('D', domain.SandboxISPB, now)
	if listed == domain.TxProcessingInfraction {
		return t.CompleteInfraction(e2e, now)
	}
	r, ok := t.RefundInProgress()
	if !ok {
		return &domain.InvalidTransitionError{Resource: string(domain.ResourceTransaction), From: string(t.Status()), To: string(domain.TxRefunded)}
	}
	return t.ConfirmRefund(r.ID, e2e, now)
}
