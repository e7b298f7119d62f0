package application

import (
	"context"
	"fmt"
	"strings"

	"github.com/pixgate/pixgate/ports"
)

// KeepAcquirerWebhook keeps pixgate's callback URL registered at the acquirer: it reads what
// is registered, and registers the URL when nothing is or something else is (a URL changed by
// hand in the PSP's portal, a registration the PSP lost). An equal registration is left alone,
// so running it often costs one read.
type KeepAcquirerWebhook struct {
	hook ports.AcquirerWebhook
	url  string
}

// NewKeepAcquirerWebhook keeps url registered through hook; url must not be empty.
func NewKeepAcquirerWebhook(hook ports.AcquirerWebhook, url string) *KeepAcquirerWebhook {
	requirePorts("NewKeepAcquirerWebhook", hook)
	if url == "" {
		panic("application.NewKeepAcquirerWebhook: the URL to register is required")
	}
	return &KeepAcquirerWebhook{hook: hook, url: url}
}

// WebhookCheck is what one run of KeepAcquirerWebhook found and did.
type WebhookCheck struct {
	// Found is the URL that was registered ("" when none was).
	Found string
	// Registered says the URL was registered by this run.
	Registered bool
}

// Execute reads the registration and registers the URL when it is missing or different. An
// error of either call is returned, wrapped; nothing is assumed about the registration then,
// and the next run starts over.
func (uc *KeepAcquirerWebhook) Execute(ctx context.Context) (WebhookCheck, error) {
	found, err := uc.hook.RegisteredWebhook(ctx)
	if err != nil {
		return WebhookCheck{}, fmt.Errorf("reading the acquirer's webhook: %w", err)
	}
	check := WebhookCheck{Found: found}
	// A trailing slash is the only difference a PSP may make to the URL it keeps that does not
	// change where it posts.
	if strings.TrimRight(found, "/") == strings.TrimRight(uc.url, "/") {
		return check, nil
	}
	if err := uc.hook.RegisterWebhook(ctx, uc.url); err != nil {
		return check, fmt.Errorf("registering the acquirer's webhook: %w", err)
	}
	check.Registered = true
	return check, nil
}
