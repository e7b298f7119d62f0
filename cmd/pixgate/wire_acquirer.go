package main

import (
	"github.com/pixgate/pixgate/adapters/httpapi"
	"github.com/pixgate/pixgate/adapters/pix"
	"github.com/pixgate/pixgate/application"
	"github.com/pixgate/pixgate/domain"
)

// wireAcquirer wires the acquirer's notifications, POST /acquirer/pix: on the main address
// with PIXGATE_ACQUIRER_SECRET (without it the route does not exist there), and on the
// mutual-TLS callback listener with PIXGATE_ACQUIRER_CALLBACK_ADDR (wire_callback.go).
//
// The callback names neither the receiving account's document nor its bank, so a payment
// records a receiver only in sandbox mode, where the sandbox's receiving account is the truth.
func (a *app) wireAcquirer(deps *httpapi.Deps) error {
	if a.cfg.Callback.Secret == "" && a.cfg.Callback.Addr == "" {
		return nil
	}
	acq := &httpapi.AcquirerDeps{Notifications: a.pixNotifications(), Secret: a.cfg.Callback.Secret}
	if a.payouts != nil {
		// Efí posts its notices of payouts to the same webhook.
		acq.Payouts = a.payouts
	}
	if a.cfg.Callback.Secret != "" {
		deps.Acquirer = acq
	}
	return a.wireCallback(*acq)
}

// pixNotifications is the one use case that applies what the acquirer tells of received PIX,
// through its callback or its listing (reconciliation), built on first use.
func (a *app) pixNotifications() *application.ApplyPixNotifications {
	if a.notifications != nil {
		return a.notifications
	}
	var receiver *domain.AccountHolder
	if a.sandbox != nil {
		r := a.sandbox.account
		receiver = &r
	}
	a.notifications = application.NewApplyPixNotifications(a.stores.transactions, a.stores.ledger, a.devolutions,
		pix.TxIDDecoder{}, a.clock, a.transactionFee(), receiver, a.latePayment)
	return a.notifications
}
