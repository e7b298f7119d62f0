package main

import (
	"github.com/pixgate/pixgate/adapters/httpapi"
	"github.com/pixgate/pixgate/application"
	"github.com/pixgate/pixgate/domain"
)

// wireWithdrawals wires withdrawals, the balance, and the payout outbox that sends each
// withdrawal's payout through the provider PIXGATE_PAYOUT_PROVIDER names (wire_payouts.go):
//
//   - sandbox (with PIXGATE_SANDBOX=true): a withdrawal records the sandbox's parties, enters
//     PROCESSING in the request that creates it and PROCESSED by itself after
//     PIXGATE_SANDBOX_SETTLE_SECONDS, as the sandbox's payout API answers;
//   - efi: a withdrawal is stored PENDING and its payout sent to Efí by the outbox, then read
//     back until it is PROCESSED or FAILED; it may be canceled until the outbox claims it;
//   - none: a withdrawal records no payer nor receiver and waits PENDING (and may be
//     canceled); it is sent once a provider is configured.
func (a *app) wireWithdrawals(deps *httpapi.Deps) error {
	repo := a.stores.withdrawals
	settings := application.WithdrawalSettings{Acquirer: a.acquirerName(), Fee: domain.Cents(a.cfg.Pix.WithdrawalFeeCents)}
	if a.sandbox != nil {
		// The gateway's account pays the withdrawals out, the one that receives the payments.
		payer := a.sandbox.account
		settings.Payer, settings.Directory = &payer, a.sandbox.directory
	}
	payouts, err := a.newPayouts()
	if err != nil {
		return err
	}
	if payouts != nil {
		settings.StartAtOnce, settings.FirstCheck = payouts.atOnce, payouts.firstCheck
		outbox := application.NewPayOutWithdrawals(repo, payouts.payouts, a.clock, payouts.settings, a.reportPayout)
		a.payouts, a.payoutAPI = outbox, payouts.payouts
		a.jobs = append(a.jobs, job{name: payoutJobName, pace: payouts.pace, run: outbox.RunOnce})
	}
	deps.Withdrawals = httpapi.WithdrawalDeps{
		Create:  application.NewCreateWithdrawal(repo, a.ids, a.clock, settings),
		Get:     application.NewGetWithdrawal(repo),
		Cancel:  application.NewCancelWithdrawal(repo, a.clock),
		Balance: application.NewGetBalance(a.stores.ledger),
	}
	return nil
}
