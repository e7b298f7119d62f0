package main

import "github.com/pixgate/pixgate/adapters/psp"

// countPSPCall is where every PSP transport pixgate builds (the acquirer's API Pix through
// observePSP, and the payout API) reports its calls and token fetches: each becomes
// pixgate_acquirer_requests_total{operation, outcome} and a latency sample of its operation.
// An observation carries no secret, token or id, so none reaches the metrics.
func (a *app) countPSPCall(o psp.Observation) {
	a.metrics.ObservePSPCall(o.Operation, string(o.Outcome), o.Duration)
}
