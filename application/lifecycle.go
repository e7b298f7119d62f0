package application

import (
	"context"
	"errors"

	"github.com/pixgate/pixgate/domain"
	"github.com/pixgate/pixgate/ports"
)

// ExpireTransactions fails the transactions whose QR code expired unpaid
// (PIX_QRCODE_GENERATED → FAILED, "PIX QR code expired"). Several instances may run it against
// one store: the version-checked update lets one of them win, and the others find the
// transaction FAILED already and leave it alone, so there is one transition and one event.
//
// With a reconciliation (AfterReconciliation), a charge is failed only once a complete pass
// of the reconciliation has covered its expiry: a payment the acquirer accepted in time whose
// callback was lost is then applied by reconciliation, never turned into a late payment by
// pixgate's own clock.
type ExpireTransactions struct {
	repo       ports.TransactionRepository
	clock      ports.Clock
	batch      int
	reconciled ports.Reconciliations
}

// NewExpireTransactions builds the sweeper.
func NewExpireTransactions(repo ports.TransactionRepository, clock ports.Clock) *ExpireTransactions {
	requirePorts("NewExpireTransactions", repo, clock)
	return &ExpireTransactions{repo: repo, clock: clock, batch: 500}
}

// AfterReconciliation makes the sweeper wait, for each charge, until the reconciliation with
// the acquirer reached its expiry. It answers uc.
func (uc *ExpireTransactions) AfterReconciliation(r ports.Reconciliations) *ExpireTransactions {
	uc.reconciled = r
	return uc
}

// RunOnce expires what is due now (and covered by the reconciliation, when there is one) and
// tells how many transactions it moved.
func (uc *ExpireTransactions) RunOnce(ctx context.Context) (int, error) {
	now := uc.clock.Now()
	if uc.reconciled != nil {
		st, err := uc.reconciled.ReconciliationState(ctx)
		if err != nil {
			return 0, err
		}
		if st.Reached.Before(now) {
			now = st.Reached // zero before the first pass: nothing is due yet
		}
	}
	due, err := uc.repo.ListExpired(ctx, now, uc.batch)
	if err != nil {
		return 0, err
	}
	moved := 0
	for _, t := range due {
		_, err := uc.repo.Update(ctx, t.AccountID(), t.ID(), func(t *domain.Transaction) error {
			return t.Expire(uc.clock.Now())
		})
		switch {
		case err == nil:
			moved++
		case errors.Is(err, domain.ErrInvalidTransition), errors.Is(err, domain.ErrNotExpired):
			// Paid or expired by another instance meanwhile.
		default:
			return moved, err
		}
	}
	return moved, nil
}
