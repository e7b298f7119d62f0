package main

import (
	"context"
	"log/slog"
	"time"

	"github.com/pixgate/pixgate/adapters/httpapi"
	"github.com/pixgate/pixgate/adapters/metrics"
	"github.com/pixgate/pixgate/application"
)

// ReconcileConfig is how often the acquirer's received PIX are reconciled.
type ReconcileConfig struct {
	// Interval is the time between two passes; 0: never.
	Interval time.Duration
}

func (r *ReconcileConfig) settings() []setting {
	return []setting{
		{"PIXGATE_ACQUIRER_RECONCILE_SECONDS", "60", "Seconds between reconciliations with the acquirer's API Pix (GET /pix: payments whose callback was lost are applied as the callback would have; one instance at a time; also at start); an unpaid charge fails only once a reconciliation covered its expiry. 0 turns it off, at start too (charges then fail at their expiry). Only with PIXGATE_ACQUIRER_API_URL.", seconds(&r.Interval, 0, 86400)},
	}
}

// wireReconcile adds the reconciliation job when the acquirer's API Pix can list what it
// received and PIXGATE_ACQUIRER_RECONCILE_SECONDS is not 0. In the sandbox, and without it,
// charges fail at their expiry as before.
func (a *app) wireReconcile(*httpapi.Deps) error {
	if a.cfg.Sandbox.On || a.cfg.Reconcile.Interval == 0 {
		return nil
	}
	if a.receivedPix == nil {
		lister, err := a.newReceivedPixLister()
		if err != nil || lister == nil {
			return err
		}
		a.receivedPix = lister
	}
	pass := application.NewReconcileWithAcquirer(a.receivedPix, a.stores.reconciliations, a.stores.transactions,
		a.pixNotifications(), a.clock, application.ReconcileSettings{Holder: a.ids.NewID()}, a.reconciled)
	a.reconcile = pass
	a.expirer.AfterReconciliation(a.stores.reconciliations)
	a.jobs = append(a.jobs, job{name: reconcileJobName, pace: application.Pace{Interval: a.cfg.Reconcile.Interval, Bound: a.cfg.Reconcile.Interval},
		run: func(ctx context.Context) (int, error) {
			_, err := pass.RunOnce(ctx)
			return 0, err // every pass waits its interval, whatever it found
		}})
	return nil
}

// reconcileJobName names the reconciliation in the scheduler's log lines.
const reconcileJobName = "reconciling with the acquirer"

// reconciled counts a payment (or devolution) that reconciliation applied before its callback
// came, and warns about it: a lost callback is a fault to look into at the PSP or at the
// listener's door.
func (a *app) reconciled(r application.Reconciled) {
	attrs := []any{slog.String("endToEndId", r.Result.EndToEndID), slog.String("txid", r.Result.TxID),
		slog.String("status", string(r.Result.Status))}
	if r.Refund != nil {
		a.metrics.ObserveReconciled(metrics.ReconciledDevolution)
		a.log.Warn("reconciliation applied a devolution whose callback never came",
			append(attrs, slog.String("devolutionId", r.Refund.ID), slog.String("rtrId", r.Refund.ReturnID))...)
		return
	}
	a.metrics.ObserveReconciled(metrics.ReconciledPayment)
	a.log.Warn("reconciliation applied a payment whose callback never came", attrs...)
}
