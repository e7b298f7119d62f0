package main

import (
	"github.com/pixgate/pixgate/adapters/httpapi"
	"github.com/pixgate/pixgate/application"
	"github.com/pixgate/pixgate/domain"
)

// wireWithdrawals wires withdrawals and the balance. Payouts go through the sandbox acquirer,
// the only one built in: with the sandbox on, a withdrawal records the sandbox's parties,
// enters PROCESSING in the request that creates it and PROCESSED by itself after
// PIXGATE_SANDBOX_SETTLE_SECONDS (wire_sandbox.go); with it off, a withdrawal records no payer
// nor receiver and waits PENDING (and may be canceled) for an acquirer to take it.
func (a *app) wireWithdrawals(deps *httpapi.Deps) error {
	repo := a.stores.withdrawals
	settings := application.WithdrawalSettings{Acquirer: a.emitter.Acquirer(), Fee: domain.Cents(a.cfg.WithdrawalFee)}
	if a.sandbox != nil {
		// The gateway's account pays the withdrawals out, the one that receives the payments.
		payer := a.sandbox.account
		settings.Payer, settings.Directory, settings.StartAtOnce = &payer, a.sandbox.directory, true
	}
	deps.Withdrawals = httpapi.WithdrawalDeps{
		Create:  application.NewCreateWithdrawal(repo, a.ids, a.clock, settings),
		Get:     application.NewGetWithdrawal(repo),
		Cancel:  application.NewCancelWithdrawal(repo, a.clock),
		Balance: application.NewGetBalance(a.stores.ledger),
	}
	return nil
}
