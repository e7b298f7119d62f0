package main

import (
	"context"
	"log/slog"
	"time"

	"github.com/pixgate/pixgate/adapters/httpapi"
	"github.com/pixgate/pixgate/application"
)

// acquirerWebhookJobName names the job that keeps the webhook registered at the PSP.
const acquirerWebhookJobName = "registering the acquirer's webhook"

// acquirerWebhookEvery is how often the registration is read (and, when missing or different,
// made again): at start and every hour. A failure is logged and waits for the next run; the
// start never waits for it, and reconciliation finds what a PSP without the webhook did not
// post.
const acquirerWebhookEvery = time.Hour

// wireAcquirerWebhook keeps PIXGATE_ACQUIRER_WEBHOOK_URL (by default PIXGATE_PUBLIC_URL
// followed by /acquirer) registered as the webhook of PIXGATE_PIX_KEY at the PSP, with
// PIXGATE_ACQUIRER_API_URL and unless PIXGATE_ACQUIRER_WEBHOOK_REGISTER=false. Without any URL
// to register it warns and registers nothing: pixgate's own address is no public https URL.
func (a *app) wireAcquirerWebhook(*httpapi.Deps) error {
	if a.psp == nil || !a.cfg.Callback.Register {
		return nil
	}
	url := a.cfg.Callback.WebhookURL
	if url == "" && a.cfg.Server.PublicURL != "" {
		url = a.cfg.Server.PublicURL + "/acquirer"
	}
	if url == "" {
		a.log.Warn("the PSP's webhook is not registered: set PIXGATE_ACQUIRER_WEBHOOK_URL (or PIXGATE_PUBLIC_URL), or PIXGATE_ACQUIRER_WEBHOOK_REGISTER=false when the PSP's portal registers it")
		return nil
	}
	keep := application.NewKeepAcquirerWebhook(a.psp, url)
	a.jobs = append(a.jobs, job{
		name: acquirerWebhookJobName,
		pace: application.Pace{Interval: acquirerWebhookEvery, Bound: acquirerWebhookEvery},
		run: func(ctx context.Context) (int, error) {
			check, err := keep.Execute(ctx)
			if err != nil {
				return 0, err // the scheduler logs it under the job's name; the next run tries again
			}
			if check.Registered {
				a.log.Info("the PSP's webhook registered", slog.String("webhookUrl", url), slog.String("replaced", check.Found))
			}
			return 0, nil
		},
	})
	return nil
}
