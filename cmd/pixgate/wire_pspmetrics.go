package main

import "github.com/pixgate/pixgate/adapters/psp"

// observePSP is the Observe hook of every PSP transport pixgate builds (the acquirer's API Pix
// and the payout API): each call and token fetch becomes
// pixgate_acquirer_requests_total{operation, outcome} and a latency sample of its operation.
// An observation carries no secret, token or id, so none reaches the metrics.
func (a *app) observePSP(o psp.Observation) {
	a.metrics.ObservePSPCall(o.Operation, string(o.Outcome), o.Duration)
}
