package main

import (
	"context"
	"errors"
	"log/slog"

	"github.com/pixgate/pixgate/adapters/psp/apipix"
	"github.com/pixgate/pixgate/adapters/sandbox"
	"github.com/pixgate/pixgate/application"
	"github.com/pixgate/pixgate/ports"
)

// recoverJobName names the job that finishes, in the ledger, what a crash left half done.
const recoverJobName = "recovering ledger entries"

// newAcquirer is who returns money to payers: the sandbox's acquirer with PIXGATE_SANDBOX, the
// PSP's API Pix (api) with PIXGATE_ACQUIRER_API_URL, and otherwise none.
func newAcquirer(cfg Config, clock ports.Clock, api *apipix.Client) ports.Acquirer {
	switch {
	case cfg.Sandbox.On:
		return sandbox.NewAcquirer(clock)
	case api != nil:
		return api
	}
	return noAcquirer{}
}

// errNoAcquirer is what devolutions answer when no acquirer API is configured.
var errNoAcquirer = errors.New("no acquirer API is configured (PIXGATE_ACQUIRER_API_URL)")

// noAcquirer is production without PIXGATE_ACQUIRER_API_URL: no devolution can be asked for,
// so a refund stays PROCESSING until the acquirer's callback settles it, and a late payment
// stays in suspense for operations (the outbox reports it); both stay recorded and due, and
// are sent once an acquirer API is configured.
type noAcquirer struct{}

func (noAcquirer) RequestDevolution(context.Context, ports.Devolution) (ports.DevolutionResult, error) {
	return ports.DevolutionResult{}, errNoAcquirer
}

func (noAcquirer) Devolution(context.Context, string, string) (ports.DevolutionResult, error) {
	return ports.DevolutionResult{}, errNoAcquirer
}

// reportRefund logs a refund whose devolution's first step could not be stored: the refund is
// stored, and the devolution outbox takes the step again.
func (a *app) reportRefund(err error) {
	a.log.Warn("refund stored; its devolution is left to the outbox", slog.String("error", err.Error()))
}

// latePayment counts a payment that belonged to no charge (a late payment, or one of another
// amount than its charge's) and logs one line: the payment, why it paid nothing (outcome), the
// devolution asked for and its answer; never the payer.
func (a *app) latePayment(l application.LatePayment) {
	a.metrics.ObserveLatePayment(l.Result, l.Err)
	attrs := []any{
		slog.String("endToEndId", l.Claim.EndToEndID),
		slog.String("transactionId", l.Claim.TransactionID),
		slog.String("amount", l.Claim.Amount.Reais()),
		slog.String("outcome", string(l.Outcome)),
		slog.String("devolutionId", l.Devolution.ID),
	}
	if l.Err != nil {
		a.log.Warn("late payment in suspense: its devolution is recorded and sent by the outbox",
			append(attrs, slog.String("error", l.Err.Error()))...)
		return
	}
	attrs = append(attrs, slog.String("result", string(l.Result.Status)))
	if l.Result.ReturnID != "" {
		attrs = append(attrs, slog.String("rtrId", l.Result.ReturnID))
	}
	if l.Result.Reason != "" {
		attrs = append(attrs, slog.String("reason", l.Result.Reason))
	}
	a.log.Warn("late payment: devolution to the payer requested", attrs...)
}
