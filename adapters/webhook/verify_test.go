package webhook_test

import (
	"errors"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/pixgate/pixgate/adapters/webhook"
)

func TestVerifyAcceptsWhatSignSignsAndNothingElse(t *testing.T) {
	const current = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	const previous = "whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD"
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	body := []byte(`{"id":"evt","type":"transaction.paid"}`)
	headers := func(secrets []string, at time.Time, b []byte) http.Header {
		sig, err := webhook.Sign(secrets, "msg_1", at, b)
		if err != nil {
			t.Fatal(err)
		}
		h := http.Header{}
		h.Set("webhook-id", "msg_1")
		h.Set("webhook-timestamp", strconv.FormatInt(at.Unix(), 10))
		h.Set("webhook-signature", sig)
		return h
	}
	cases := []struct {
		name   string
		secret string
		header http.Header
		body   []byte
		want   error
	}{
		{"a signature of the secret passes", current, headers([]string{current}, now, body), body, nil},
		{"during a rotation either secret passes", previous, headers([]string{current, previous}, now, body), body, nil},
		{"another secret fails", previous, headers([]string{current}, now, body), body, webhook.ErrNoValidSignature},
		{"a changed body fails", current, headers([]string{current}, now, body), []byte(`{"id":"evt","type":"transaction.refunded"}`), webhook.ErrNoValidSignature},
		{"an old notification replayed fails", current, headers([]string{current}, now.Add(-10*time.Minute), body), body, webhook.ErrStaleTimestamp},
		{"missing headers fail", current, http.Header{}, body, webhook.ErrMissingHeaders},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if err := webhook.Verify(c.secret, c.header, c.body, now, 5*time.Minute); !errors.Is(err, c.want) {
				t.Fatalf("err = %v, want %v", err, c.want)
			}
		})
	}
}
