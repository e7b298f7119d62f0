package metrics

import "github.com/prometheus/client_golang/prometheus"

func newReconciled() *prometheus.CounterVec {
	return prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "pixgate_acquirer_reconciled_total",
		Help: "Payments and devolutions first learned from the acquirer's listing of received PIX (reconciliation) rather than its callback, by outcome (applied: a payment paid its charge; devolution_applied: a devolution settled its refund).",
	}, []string{"outcome"})
}

// Reconciled outcomes.
const (
	ReconciledPayment    = "applied"
	ReconciledDevolution = "devolution_applied"
)

// ObserveReconciled counts one payment (or devolution) that reconciliation applied.
func (m *Metrics) ObserveReconciled(outcome string) {
	switch outcome {
	case ReconciledPayment, ReconciledDevolution:
	default:
		outcome = otherLabel
	}
	m.reconciled.WithLabelValues(outcome).Inc()
}
