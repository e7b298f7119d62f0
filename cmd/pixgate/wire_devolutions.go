package main

import (
	"errors"
	"log/slog"
	"time"

	"github.com/pixgate/pixgate/adapters/psp"
	"github.com/pixgate/pixgate/application"
)

// devolutionJobName names the devolution outbox's job (in logs, and for tests that run it by
// hand).
const devolutionJobName = "sending devolutions"

// devolutionEvery and devolutionBound pace the devolution outbox: a devolution whose first
// step (taken at once, in the refund's request or the callback that found the late payment)
// failed is tried again within about a second, then backing off (application.SendDevolutions).
const (
	devolutionEvery = time.Second
	devolutionBound = 5 * time.Second
)

// devolutionClaimCalls is how many calls to the acquirer one step of the outbox holds a
// devolution for: three at most (a read back, a send, a read back), each bounded by the
// transport's timeout (PIXGATE_ACQUIRER_TIMEOUT), and one to spare.
const devolutionClaimCalls = 4

// newDevolutions builds the devolution outbox over the acquirer, and its job. Without an
// acquirer API (noAcquirer) there is no job: a devolution stays recorded and due, and the
// outbox sends it once an acquirer is configured (the first step taken at once fails, and the
// refund waits for the acquirer's callback, as it always did there).
func (a *app) newDevolutions() *application.SendDevolutions {
	timeout := a.cfg.Acquirer.Timeout
	if timeout <= 0 {
		timeout = psp.DefaultTimeout
	}
	claim := devolutionClaimCalls*timeout + application.ClaimMargin
	if a.cfg.Sandbox.On {
		claim = application.ClaimMargin + 10*time.Second
	}
	outbox := application.NewSendDevolutions(a.stores.transactions, a.stores.ledger, a.acquirer, a.clock,
		application.DevolutionSettings{CheckEvery: a.cfg.Devolution.Check, Claim: claim}, a.reportDevolution)
	if _, none := a.acquirer.(noAcquirer); !none {
		a.jobs = append(a.jobs, job{name: devolutionJobName, pace: application.Pace{Interval: devolutionEvery, Bound: devolutionBound}, run: outbox.RunOnce})
	}
	return outbox
}

// reportDevolution logs what the devolution outbox tells operators; never the payer, a secret
// or a token.
func (a *app) reportDevolution(r application.DevolutionReport) {
	attrs := []any{
		slog.String("transactionId", r.TransactionID), slog.String("endToEndId", r.Devolution.EndToEndID),
		slog.String("devolutionId", r.Devolution.ID), slog.String("kind", string(r.Devolution.Kind)),
		slog.String("amount", r.Devolution.Amount.Reais()),
	}
	if r.Step != "" {
		attrs = append(attrs, slog.String("step", string(r.Step)))
	}
	if r.Err != nil {
		attrs = append(attrs, slog.String("error", r.Err.Error()))
	}
	what := r.What
	if errors.Is(r.Err, errNoAcquirer) {
		// Nothing reads it back without an acquirer API: say what does happen.
		what = "no acquirer API: the devolution stays recorded, and is sent once one is configured"
	}
	switch r.Level {
	case application.DevolutionError:
		a.log.Error(what, attrs...)
	case application.DevolutionWarn:
		a.log.Warn(what, attrs...)
	default:
		a.log.Info(what, attrs...)
	}
}
