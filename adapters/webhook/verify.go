package webhook

import (
	"crypto/hmac"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Errors of Verify.
var (
	ErrMissingHeaders   = errors.New("webhook: webhook-id, webhook-timestamp or webhook-signature missing")
	ErrStaleTimestamp   = errors.New("webhook: timestamp outside the tolerance")
	ErrNoValidSignature = errors.New("webhook: no signature matches the secret")
)

// Verify is the receiver's side of Sign, for merchants writing their endpoint in Go and for
// cmd/webhook-receiver: it accepts a notification when one of its space-separated v1
// signatures is the HMAC of "id.timestamp.body" under secret and its timestamp lies within
// tolerance of now (which stops replays of old notifications). Signatures are compared in
// constant time. Any Standard Webhooks library does the same.
func Verify(secret string, header http.Header, body []byte, now time.Time, tolerance time.Duration) error {
	id, ts, sigs := header.Get("webhook-id"), header.Get("webhook-timestamp"), header.Get("webhook-signature")
	if id == "" || ts == "" || sigs == "" {
		return ErrMissingHeaders
	}
	unix, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return ErrMissingHeaders
	}
	at := time.Unix(unix, 0)
	if at.Before(now.Add(-tolerance)) || at.After(now.Add(tolerance)) {
		return ErrStaleTimestamp
	}
	want, err := Sign([]string{secret}, id, at, body)
	if err != nil {
		return err
	}
	for _, got := range strings.Fields(sigs) {
		if hmac.Equal([]byte(got), []byte(want)) {
			return nil
		}
	}
	return ErrNoValidSignature
}
