package main

import (
	"github.com/pixgate/pixgate/adapters/httpapi"
	"github.com/pixgate/pixgate/adapters/pix"
	"github.com/pixgate/pixgate/application"
	"github.com/pixgate/pixgate/domain"
)

// wireAcquirer wires the acquirer's notifications, POST /acquirer/pix. Without
// PIXGATE_ACQUIRER_SECRET the route does not exist.
//
// The callback names neither the receiving account's document nor its bank, so a payment
// records a receiver only in sandbox mode, where the sandbox's receiving account is the truth.
func (a *app) wireAcquirer(deps *httpapi.Deps) error {
	if a.cfg.AcquirerSecret == "" {
		return nil
	}
	var receiver *domain.AccountHolder
	if a.sandbox != nil {
		r := a.sandbox.account
		receiver = &r
	}
	deps.Acquirer = &httpapi.AcquirerDeps{
		Notifications: application.NewApplyPixNotifications(a.stores.transactions, a.stores.ledger, a.devolutions,
			pix.TxIDDecoder{}, a.clock, a.transactionFee(), receiver, a.latePayment),
		Secret: a.cfg.AcquirerSecret,
	}
	return nil
}
