package webhook

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/pixgate/pixgate/ports"
)

var _ ports.WebhookSender = (*Sender)(nil)

// DefaultTimeout bounds one attempt, from connecting to reading the answer's head and a little
// of its body.
const DefaultTimeout = 10 * time.Second

// maxBodyRead is how much of an answer's body is read (and thrown away) so that its connection
// can be reused; a receiver has nothing to tell us there.
const maxBodyRead = 64 << 10

// Options configure a Sender. The zero value is the production setting.
type Options struct {
	// AllowPrivate lets webhooks reach loopback, private and the other refused ranges: for
	// development and tests only (PIXGATE_WEBHOOK_ALLOW_PRIVATE).
	AllowPrivate bool
	// CAFile names a PEM file of CA certificates trusted besides the system's
	// (PIXGATE_WEBHOOK_CA_FILE), for receivers with a private CA.
	CAFile string
	// Timeout of one attempt. Default DefaultTimeout.
	Timeout time.Duration
	// Resolver looks up host names. Default net.DefaultResolver.
	Resolver Resolver
	// Dial connects to an address already checked ("ip:port"). Default a net.Dialer whose
	// socket checks the address once more. Tests use it to see every address the sender
	// connects to.
	Dial func(ctx context.Context, network, address string) (net.Conn, error)
	// Clock tells the time against which a Retry-After date is read. Default the wall clock.
	Clock ports.Clock
}

// wallClock is the default Clock.
type wallClock struct{}

func (wallClock) Now() time.Time { return time.Now().UTC() }

// Sender delivers webhook notifications; see the package comment. Safe for concurrent use: it
// keeps connections to receivers open between attempts.
type Sender struct {
	client  *http.Client
	timeout time.Duration
	clock   ports.Clock
}

// NewSender builds a Sender. An unreadable CA file, or one without a certificate, is an error.
func NewSender(o Options) (*Sender, error) {
	if o.Timeout < 0 {
		return nil, errors.New("webhook sender: negative timeout")
	}
	if o.Timeout == 0 {
		o.Timeout = DefaultTimeout
	}
	if o.Resolver == nil {
		o.Resolver = net.DefaultResolver
	}
	if o.Clock == nil {
		o.Clock = wallClock{}
	}
	if o.Dial == nil {
		d := &net.Dialer{Timeout: o.Timeout, KeepAlive: 30 * time.Second, Control: controlGuard(o.AllowPrivate)}
		o.Dial = d.DialContext
	}
	roots, err := rootCAs(o.CAFile)
	if err != nil {
		return nil, err
	}
	dialer := &guardedDialer{allowPrivate: o.AllowPrivate, resolver: o.Resolver, dial: o.Dial}
	transport := &http.Transport{
		Proxy:                  nil, // a proxy would resolve and connect in our place, past the guard
		DialContext:            dialer.DialContext,
		TLSClientConfig:        &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12},
		ForceAttemptHTTP2:      true,
		TLSHandshakeTimeout:    o.Timeout,
		ResponseHeaderTimeout:  o.Timeout,
		MaxResponseHeaderBytes: 64 << 10,
		MaxIdleConns:           256,
		MaxIdleConnsPerHost:    16,
		IdleConnTimeout:        90 * time.Second,
	}
	client := &http.Client{
		Transport: transport,
		Timeout:   o.Timeout,
		// A redirect is an answer like any other (a failure, not being 2xx): following it
		// would send the signed event somewhere the merchant did not name.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	return &Sender{client: client, timeout: o.Timeout, clock: o.Clock}, nil
}

// rootCAs is the system's pool plus the certificates of caFile.
func rootCAs(caFile string) (*x509.CertPool, error) {
	pool, err := x509.SystemCertPool()
	if err != nil {
		pool = x509.NewCertPool() // no system pool on this platform: the file's CAs only
	}
	if caFile == "" {
		return pool, nil
	}
	pem, err := os.ReadFile(caFile)
	if err != nil {
		return nil, fmt.Errorf("webhook sender: reading CA file: %w", err)
	}
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("webhook sender: CA file %s holds no PEM certificate", caFile)
	}
	return pool, nil
}

// Send implements ports.WebhookSender.
func (s *Sender) Send(ctx context.Context, m ports.WebhookMessage) (ports.WebhookResponse, error) {
	u, err := url.Parse(m.URL)
	if err != nil || u.Scheme != "https" || u.Host == "" {
		return ports.WebhookResponse{}, errors.New("webhook URL is not an absolute https URL")
	}
	signature, err := Sign(m.Secrets, m.EventID, m.Timestamp, m.Body)
	if err != nil {
		return ports.WebhookResponse{}, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), bytes.NewReader(m.Body))
	if err != nil {
		return ports.WebhookResponse{}, errors.New("webhook URL is not usable")
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "pixgate-webhooks/1")
	req.Header.Set("webhook-id", m.EventID)
	req.Header.Set("webhook-timestamp", strconv.FormatInt(m.Timestamp.Unix(), 10))
	req.Header.Set("webhook-signature", signature)

	resp, err := s.client.Do(req)
	if err != nil {
		return ports.WebhookResponse{}, s.transportError(ctx, err)
	}
	defer resp.Body.Close()
	// The body is read only to reuse the connection; failing to read it changes no outcome.
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxBodyRead))
	retryAfter, _ := ParseRetryAfter(resp.Header.Get("Retry-After"), s.clock.Now())
	return ports.WebhookResponse{StatusCode: resp.StatusCode, Verdict: verdict(resp.StatusCode), RetryAfter: retryAfter}, nil
}

// verdict reads a status as Standard Webhooks does: a 2xx delivers, 410 Gone stops for good,
// anything else is tried again.
func verdict(status int) ports.WebhookVerdict {
	switch {
	case status >= 200 && status <= 299:
		return ports.WebhookDelivered
	case status == http.StatusGone:
		return ports.WebhookGone
	}
	return ports.WebhookRetry
}

// transportError turns the client's error into one a merchant may read: without the URL (the
// attempt already names it) and saying plainly what happened.
func (s *Sender) transportError(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("webhook not sent: %w", context.Cause(ctx))
	}
	var uerr *url.Error
	if errors.As(err, &uerr) {
		if uerr.Timeout() {
			return fmt.Errorf("no answer within %v", s.timeout)
		}
		err = uerr.Err
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("connection closed without an answer: %w", err)
	}
	// A socket error names both ends' addresses (ours is internal): say what failed only.
	var op *net.OpError
	if errors.As(err, &op) {
		return fmt.Errorf("the connection failed: %s", op.Err)
	}
	return err
}

// ParseRetryAfter reads a Retry-After header, delay-seconds or an HTTP date (read against now),
// as a delay: a date already past is zero. False when the value is empty or unreadable.
func ParseRetryAfter(value string, now time.Time) (time.Duration, bool) {
	value = strings.TrimSpace(value)
	if value == "" {
		return 0, false
	}
	if isDigits(value) {
		secs, err := strconv.ParseInt(value, 10, 64)
		if err != nil || secs > maxRetryAfterSeconds {
			secs = maxRetryAfterSeconds
		}
		return time.Duration(secs) * time.Second, true
	}
	at, err := http.ParseTime(value)
	if err != nil {
		return 0, false
	}
	return max(at.Sub(now), 0), true
}

// maxRetryAfterSeconds keeps a huge Retry-After from overflowing a Duration; the application
// caps it far lower anyway.
const maxRetryAfterSeconds = 366 * 24 * 3600

func isDigits(s string) bool {
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
