package main

import (
	"fmt"
	"time"

	"github.com/pixgate/pixgate/adapters/httpapi"
	"github.com/pixgate/pixgate/application"
	"github.com/pixgate/pixgate/domain"
)

// sandboxRefundSettleEvery is how often the sandbox looks for refunds and MED refunds to
// complete: often enough that PIXGATE_SANDBOX_SETTLE_SECONDS reads as "about that long".
const sandboxRefundSettleEvery = 500 * time.Millisecond

// transactionFee is the fee on each paid transaction, as configured.
func (a *app) transactionFee() domain.FeePolicy {
	return domain.FeePolicy{FixedCents: domain.Cents(a.cfg.FeeFixedCents), BasisPoints: a.cfg.FeeBasisPoints}
}

// sandboxReceiver is the gateway's receiving account as the sandbox shows it.
func (a *app) sandboxReceiver() (domain.AccountHolder, error) {
	r, err := application.SandboxReceiver(a.cfg.PixKey, a.cfg.MerchantName)
	if err != nil {
		return domain.AccountHolder{}, fmt.Errorf("PIXGATE_PIX_KEY: the sandbox needs the key's type: %w", err)
	}
	return r, nil
}

// wireSandbox wires the sandbox acquirer: its /sandbox/transaction routes and the job that
// completes refunds and MED refunds after PIXGATE_SANDBOX_SETTLE_SECONDS. Nothing exists
// without PIXGATE_SANDBOX=true.
func (a *app) wireSandbox(deps *httpapi.Deps) error {
	if !a.cfg.Sandbox {
		return nil
	}
	receiver, err := a.sandboxReceiver()
	if err != nil {
		return err
	}
	repo := a.stores.transactions
	deps.Sandbox = httpapi.SandboxDeps{
		Pay:           application.NewPaySandboxTransaction(repo, a.clock, a.transactionFee(), receiver),
		OpenDispute:   application.NewOpenSandboxDispute(repo, a.clock),
		AcceptDispute: application.NewAcceptSandboxDispute(repo, a.clock),
		RejectDispute: application.NewRejectSandboxDispute(repo, a.clock),
		FailRefund:    application.NewFailSandboxRefund(repo, a.clock),
	}
	settle := application.NewSettleSandbox(repo, a.clock, a.emitter.Acquirer(), a.cfg.SandboxSettle)
	a.jobs = append(a.jobs, job{name: sandboxRefundSettleJob, interval: sandboxRefundSettleEvery, run: settle.RunOnce})
	return nil
}

// sandboxRefundSettleJob names the settle job (in logs, and for tests that run it by hand).
const sandboxRefundSettleJob = "settling sandbox refunds"
