package main

import (
	"github.com/pixgate/pixgate/adapters/httpapi"
	"github.com/pixgate/pixgate/adapters/paypage"
	"github.com/pixgate/pixgate/application"
)

// wirePaymentPage builds the hosted payment page (adapters/paypage: GET /pay/{token} and its
// status routes) with its use cases, its per-address rate limit and the API's problem answers,
// and hands it to the API, which mounts it. The routes need no token: the page's address is the
// capability.
func (a *app) wirePaymentPage(deps *httpapi.Deps) error {
	a.payPage = paypage.New(paypage.Config{MaxStreamsPerCharge: a.cfg.Page.MaxStreamsPerCharge, MaxStreamsPerAddress: a.cfg.Page.MaxStreamsPerAddress},
		paypage.Deps{
			Show:     application.NewShowPaymentPage(a.stores.transactions, a.stores.accounts, a.clock),
			Follow:   application.NewFollowPayment(a.stores.transactions, a.clock),
			Problems: httpapi.NewProblems(a.log),
			// A nil *httpapi.RateLimiter (the limit is off) allows every request.
			Limiter: httpapi.NewRateLimiter(a.cfg.Page.RPS, a.cfg.Page.Burst, a.clock),
			Logger:  a.log,
		})
	deps.PaymentPage = a.payPage
	return nil
}
