package main

import "github.com/pixgate/pixgate/ports"

// newReceivedPixLister builds the acquirer's listing of received PIX from its API Pix; nil
// when none is configured.
func (a *app) newReceivedPixLister() (ports.ReceivedPixLister, error) {
	return nil, nil
}
