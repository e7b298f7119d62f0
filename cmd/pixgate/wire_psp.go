package main

import (
	"github.com/pixgate/pixgate/adapters/psp"
	"github.com/pixgate/pixgate/adapters/psp/apipix"
)

// newPSP builds the client of the PSP's API Pix with PIXGATE_ACQUIRER_API_URL (nil without
// it). A setting the transport cannot use (a file missing or unreadable, a wrong PKCS#12
// password, a URL that is not https) stops the start, naming its variable. No token is fetched
// here: a PSP down at start does not stop pixgate, whose lookups keep working.
func (a *app) newPSP() error {
	if !a.cfg.Acquirer.On() {
		return nil
	}
	c, err := apipix.New(apipix.Config{Transport: a.cfg.Acquirer.transport(a.observePSP), Key: a.cfg.PixKey})
	if err != nil {
		return acquirerSettingError(err)
	}
	a.psp = c
	return nil
}

// observePSP sees every call to the PSP and every token fetch, for metrics; it hands them to
// a.onPSPCall when one is set (before newPSP runs).
func (a *app) observePSP(o psp.Observation) {
	if a.onPSPCall != nil {
		a.onPSPCall(o)
	}
}
