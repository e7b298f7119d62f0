package main

import (
	"fmt"
	"time"

	"github.com/pixgate/pixgate/adapters/httpapi"
	"github.com/pixgate/pixgate/adapters/sandbox"
	"github.com/pixgate/pixgate/application"
	"github.com/pixgate/pixgate/domain"
)

// sandboxRefundSettleEvery is how often the sandbox looks for refunds and MED refunds to
// complete: often enough that PIXGATE_SANDBOX_SETTLE_SECONDS reads as "about that long".
const sandboxRefundSettleEvery = 500 * time.Millisecond

// sandboxRefundSettleJob names the sandbox's job (in logs, and for tests that run it by hand).
// Its payouts are the payout outbox's, against the sandbox's payout API (wire_payouts.go).
const sandboxRefundSettleJob = "settling sandbox refunds"

// transactionFee is the fee on each paid transaction, as configured.
func (a *app) transactionFee() domain.FeePolicy {
	return domain.FeePolicy{FixedCents: domain.Cents(a.cfg.Pix.FeeFixedCents), BasisPoints: a.cfg.Pix.FeeBasisPoints}
}

// sandboxWorld is the simulated outside world of PIXGATE_SANDBOX=true: the gateway's receiving
// (and paying) account and the PIX directory. newApp builds it only with the sandbox on.
type sandboxWorld struct {
	account   domain.AccountHolder
	directory sandbox.Directory
}

func newSandboxWorld(cfg Config) (*sandboxWorld, error) {
	account, err := sandbox.ReceivingAccount(cfg.Pix.Key, cfg.Pix.MerchantName)
	if err != nil {
		return nil, fmt.Errorf("PIXGATE_PIX_KEY: the sandbox needs the key's type: %w", err)
	}
	return &sandboxWorld{account: account}, nil
}

// wireSandbox wires the sandbox's steering, its /sandbox routes, and the job that completes
// refunds and MED refunds after PIXGATE_SANDBOX_SETTLE_SECONDS (payouts complete through the
// sandbox's payout API, wire_payouts.go). Nothing exists without PIXGATE_SANDBOX=true.
func (a *app) wireSandbox(deps *httpapi.Deps) error {
	if a.sandbox == nil {
		return nil
	}
	txs, wds := a.stores.transactions, a.stores.withdrawals
	tx := sandbox.NewTransactionSteering(txs, a.clock, a.transactionFee(), a.sandbox.account)
	wd := sandbox.NewWithdrawalSteering(wds, a.clock)
	deps.Sandbox = httpapi.SandboxDeps{
		PayTransaction: tx.PayTransaction, OpenDispute: tx.OpenDispute, AcceptDispute: tx.AcceptDispute,
		RejectDispute: tx.RejectDispute, FailRefund: tx.FailRefund,
		FailWithdrawal: wd.FailWithdrawal, RejectWithdrawal: wd.RejectWithdrawal, RefundWithdrawal: wd.RefundWithdrawal,
	}
	settleTxs := sandbox.NewSettleTransactions(txs, a.clock, a.emitter.Acquirer(), a.cfg.Sandbox.Settle)
	a.jobs = append(a.jobs, job{name: sandboxRefundSettleJob, pace: application.Pace{Interval: sandboxRefundSettleEvery, Bound: sandboxSettleBound}, run: settleTxs.RunOnce})
	return nil
}
