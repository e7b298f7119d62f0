package main

import (
	"context"
	"fmt"
	"time"

	"github.com/pixgate/pixgate/adapters/httpapi"
	"github.com/pixgate/pixgate/adapters/system"
	"github.com/pixgate/pixgate/adapters/webhook"
	"github.com/pixgate/pixgate/application"
)

// wireWebhooks wires webhook delivery: the signed, SSRF-safe sender, the dispatcher that
// delivers the outbox (a worker that runs until shutdown, then releases its leases), and the
// events routes.
func (a *app) wireWebhooks(deps *httpapi.Deps) error {
	opts := a.webhookOptions
	opts.AllowPrivate, opts.CAFile, opts.Clock = a.cfg.Webhooks.AllowPrivate, a.cfg.Webhooks.CAFile, a.clock
	sender, err := webhook.NewSender(opts)
	if err != nil {
		return fmt.Errorf("PIXGATE_WEBHOOK_CA_FILE: %w", err)
	}
	dispatcher, err := application.NewDispatcher(a.stores.outbox, a.stores.accounts, httpapi.EventEncoder{PublicURL: a.publicURL}, sender, a.clock, system.Random{},
		application.DispatcherConfig{
			Owner:           a.ids.NewID(), // one owner per process: leases tell instances apart
			Concurrency:     a.cfg.Webhooks.Workers,
			PollInterval:    time.Second,
			MaxPollInterval: webhookPollBound,
			Lease:           a.cfg.Webhooks.Lease,
			Logger:          a.log,
			OnAttempt:       a.onWebhookAttempt,
		})
	if err != nil {
		return err
	}
	a.dispatcher = dispatcher
	// Run loops by itself until its context ends and releases its leases on the way out.
	a.workers = append(a.workers, worker{name: "releasing webhook leases", run: func(ctx context.Context) error {
		if err := dispatcher.Run(ctx); err != nil {
			return err
		}
		a.log.Info("webhook dispatcher stopped; leases released")
		return nil
	}})
	deps.Webhooks = httpapi.WebhookDeps{ListEvents: application.NewListEvents(a.stores.transactions, a.stores.withdrawals, a.stores.outbox)}
	return nil
}
