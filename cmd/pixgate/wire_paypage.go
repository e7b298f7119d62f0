package main

import (
	"github.com/pixgate/pixgate/adapters/httpapi"
	"github.com/pixgate/pixgate/application"
)

// wirePaymentPage builds the hosted payment page's use cases (GET /pay/{token} and its status
// routes) and its per-address rate limit. The routes need no token: the page's address is the
// capability.
func (a *app) wirePaymentPage(deps *httpapi.Deps) error {
	deps.PaymentPage = httpapi.PaymentPageDeps{
		Show:    application.NewShowPaymentPage(a.stores.transactions, a.stores.accounts, a.clock),
		Follow:  application.NewFollowPayment(a.stores.transactions, a.clock),
		Limiter: httpapi.NewRateLimiter(a.cfg.PayRateLimitRPS, a.cfg.PayRateLimitBurst, a.clock),
	}
	return nil
}
