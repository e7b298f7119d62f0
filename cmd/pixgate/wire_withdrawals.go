package main

import "github.com/pixgate/pixgate/adapters/httpapi"

// wireWithdrawals wires withdrawals and the balance.
func (a *app) wireWithdrawals(deps *httpapi.Deps) error { return nil }
