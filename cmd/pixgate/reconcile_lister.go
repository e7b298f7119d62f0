package main

import "github.com/pixgate/pixgate/ports"

// newReceivedPixLister is the PSP's API Pix listing of received PIX (GET /pix); nil without
// PIXGATE_ACQUIRER_API_URL.
func (a *app) newReceivedPixLister() (ports.ReceivedPixLister, error) {
	if a.psp == nil {
		return nil, nil
	}
	return a.psp, nil
}
