package main

import "github.com/pixgate/pixgate/adapters/httpapi"

// wireAcquirer wires the acquirer's notifications.
func (a *app) wireAcquirer(deps *httpapi.Deps) error { return nil }
