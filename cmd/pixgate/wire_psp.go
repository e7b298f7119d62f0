package main

import (
	"github.com/pixgate/pixgate/adapters/psp"
	"github.com/pixgate/pixgate/adapters/psp/apipix"
	"github.com/pixgate/pixgate/application"
)

// newPSP builds the client of the PSP's API Pix with PIXGATE_ACQUIRER_API_URL (nil without
// it). A setting the transport cannot use (a file missing or unreadable, a wrong PKCS#12
// password, a URL that is not https) stops the start, naming its variable. No token is fetched
// here: a PSP down at start does not stop pixgate, whose lookups keep working.
func (a *app) newPSP() error {
	if !a.cfg.Acquirer.On() {
		return nil
	}
	c, err := apipix.New(apipix.Config{Transport: a.cfg.Acquirer.transport(a.observePSP), Key: a.cfg.Pix.Key, Name: a.cfg.Acquirer.Name})
	if err != nil {
		return acquirerSettingError(err)
	}
	a.psp = c
	return nil
}

// observePSP sees every call to the PSP and every token fetch, for metrics; it hands them to
// a.onPSPCall too when one is set (before newPSP runs).
func (a *app) observePSP(o psp.Observation) {
	a.countPSPCall(o)
	if a.onPSPCall != nil {
		a.onPSPCall(o)
	}
}

// newCreateTransaction is POST /transaction's use case: charges made at the PSP with
// PIXGATE_ACQUIRER_API_URL (the emitter then only writes the BR Code of a PSP's answer that
// came without one), by the emitter otherwise.
func (a *app) newCreateTransaction() *application.CreateTransaction {
	renderer := a.metrics.QRRenderer(a.renderer)
	if a.psp != nil {
		return application.NewCreateTransactionAtPSP(a.stores.transactions, a.psp, a.emitter, renderer, a.ids, a.tokens, a.clock)
	}
	return application.NewCreateTransaction(a.stores.transactions, a.emitter, renderer, a.ids, a.tokens, a.clock)
}

// acquirerName is each transaction's and withdrawal's `acquirer`: the PSP's name with
// PIXGATE_ACQUIRER_API_URL, the emitter's (SANDBOX) otherwise.
func (a *app) acquirerName() string {
	if a.psp != nil {
		return a.psp.Name()
	}
	return a.emitter.Acquirer()
}
