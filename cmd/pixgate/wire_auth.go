package main

import "github.com/pixgate/pixgate/adapters/httpapi"

// wireAuth wires the token, credential and webhook-secret routes.
func (a *app) wireAuth(deps *httpapi.Deps) error { return nil }
