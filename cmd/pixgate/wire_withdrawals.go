package main

import (
	"fmt"
	"time"

	"github.com/pixgate/pixgate/adapters/httpapi"
	"github.com/pixgate/pixgate/application"
	"github.com/pixgate/pixgate/domain"
)

// settleJobName names the sandbox job that completes withdrawals; tests look it up by name.
const settleJobName = "settling sandbox withdrawals"

// wireWithdrawals wires withdrawals and the balance. Payouts go through the sandbox acquirer,
// the only one built in: with the sandbox on, a withdrawal enters PROCESSING in the request that
// creates it and PROCESSED by itself after PIXGATE_SANDBOX_SETTLE_SECONDS; with it off, a
// withdrawal waits PENDING (and may be canceled) for an acquirer to take it.
func (a *app) wireWithdrawals(deps *httpapi.Deps) error {
	repo := a.stores.withdrawals
	// The gateway's account pays the withdrawals out, the one that receives the payments.
	payer, err := application.SandboxReceiver(a.cfg.PixKey, a.cfg.MerchantName)
	if err != nil {
		return fmt.Errorf("PIXGATE_PIX_KEY: %w", err)
	}
	deps.Withdrawals = httpapi.WithdrawalDeps{
		Create: application.NewCreateWithdrawal(repo, a.ids, a.clock, application.WithdrawalSettings{
			Acquirer: a.emitter.Acquirer(), Fee: domain.Cents(a.cfg.WithdrawalFee), Payer: payer,
			Receiver: application.SandboxPixDirectory, StartAtOnce: a.cfg.Sandbox,
		}),
		Get:     application.NewGetWithdrawal(repo),
		Cancel:  application.NewCancelWithdrawal(repo, a.clock),
		Balance: application.NewGetBalance(a.stores.ledger),
		Fail:    application.NewFailWithdrawal(repo, a.clock),
		Reject:  application.NewRejectWithdrawal(repo, a.clock),
		Refund:  application.NewRefundWithdrawal(repo, a.clock),
	}
	if a.cfg.Sandbox {
		settle := application.NewSettleWithdrawals(repo, a.clock, a.cfg.SandboxSettle, payer.BankAccount.ISPB)
		// A quarter of the delay keeps "about 2 s" close to 2 s, without polling the store
		// more than twice a second.
		interval := min(max(a.cfg.SandboxSettle/4, 500*time.Millisecond), 10*time.Second)
		a.jobs = append(a.jobs, job{name: settleJobName, interval: interval, run: settle.RunOnce})
	}
	return nil
}
