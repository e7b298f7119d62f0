package application_test

import (
	"context"
	"errors"
	"testing"

	"github.com/pixgate/pixgate/application"
)

// fakeWebhook is a ports.AcquirerWebhook that remembers the URL and counts the registrations;
// readErr and writeErr make the calls fail.
type fakeWebhook struct {
	url               string
	puts              int
	readErr, writeErr error
}

func (f *fakeWebhook) RegisteredWebhook(context.Context) (string, error) { return f.url, f.readErr }

func (f *fakeWebhook) RegisterWebhook(_ context.Context, url string) error {
	if f.writeErr != nil {
		return f.writeErr
	}
	f.url = url
	f.puts++
	return nil
}

func TestKeepAcquirerWebhook(t *testing.T) {
	const url = "https://callbacks.pixgate.example/acquirer"
	down := errors.New("the PSP is down")
	for _, c := range []struct {
		name      string
		hook      fakeWebhook
		wantURL   string
		wantPuts  int
		wantCheck application.WebhookCheck
		wantErr   error
	}{
		{"none registered is registered", fakeWebhook{}, url, 1, application.WebhookCheck{Registered: true}, nil},
		{"an equal one is left alone", fakeWebhook{url: url}, url, 0, application.WebhookCheck{Found: url}, nil},
		{"one with a trailing slash is equal", fakeWebhook{url: url + "/"}, url + "/", 0, application.WebhookCheck{Found: url + "/"}, nil},
		{"another one is replaced", fakeWebhook{url: "https://old.example/hook"}, url, 1,
			application.WebhookCheck{Found: "https://old.example/hook", Registered: true}, nil},
		{"a failed read registers nothing", fakeWebhook{readErr: down}, "", 0, application.WebhookCheck{}, down},
		{"a failed registration says so", fakeWebhook{writeErr: down}, "", 0, application.WebhookCheck{}, down},
	} {
		t.Run(c.name, func(t *testing.T) {
			hook := c.hook
			check, err := application.NewKeepAcquirerWebhook(&hook, url).Execute(context.Background())
			if !errors.Is(err, c.wantErr) || check != c.wantCheck || hook.url != c.wantURL || hook.puts != c.wantPuts {
				t.Fatalf("check %+v, err %v, the PSP holds %q after %d registrations; want %+v, %v, %q after %d",
					check, err, hook.url, hook.puts, c.wantCheck, c.wantErr, c.wantURL, c.wantPuts)
			}
		})
	}
}
