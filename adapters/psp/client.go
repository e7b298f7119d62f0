package psp

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Client sends requests to the PSP. Safe for concurrent use.
type Client struct {
	s         settings
	http      *http.Client
	tokenHTTP *http.Client
	tokens    *tokens
	// secrets are scrubbed from whatever the PSP answers before it reaches an error: the
	// client secret in every form it travels in, and the P12 password.
	secrets []string
}

// Request is one call to the PSP's API.
type Request struct {
	// Operation names the call in errors and observations (for instance cob_put).
	Operation string
	Method    string
	// Path is the path below the API URL, one segment per element, each escaped here: an id
	// cannot reach another path. For instance {"cob", txid}.
	Path  []string
	Query url.Values
	// Body, when not nil, is sent as JSON; every attempt sends it again whole.
	Body any
	// Retryable says the request may be sent again when its outcome is unknown (429, 5xx, a
	// network error): the caller knows it is idempotent. A retry after a 401, whose request the
	// PSP did not carry out, is made whatever Retryable says.
	Retryable bool
}

// Observation is one call, or one token fetch (Operation "token"), as metrics count it.
type Observation struct {
	Operation string
	Outcome   Outcome
	// Status is the last answer's HTTP status; 0 when none came.
	Status int
	// Attempts is how many requests were sent, token fetches aside.
	Attempts int
	Duration time.Duration
}

// backoff bounds the wait between attempts when the PSP gives no Retry-After.
const (
	backoffBase = 200 * time.Millisecond
	backoffMax  = 5 * time.Second
)

// New checks cfg, reads the certificate files and builds the client. It fetches no token: the
// first call does. Its errors are *SettingError values (joined when several settings are at
// fault), naming the setting and never repeating a secret.
func New(cfg Config) (*Client, error) {
	s, err := check(cfg)
	if err != nil {
		return nil, err
	}
	tlsCfg, err := tlsConfig(s, time.Now())
	if err != nil {
		return nil, err
	}
	transport := http.DefaultTransport.(*http.Transport).Clone()
	// A proxy from the environment would see where pixgate banks; PSPs are reached directly.
	transport.Proxy = nil
	transport.TLSClientConfig = tlsCfg
	transport.MaxResponseHeaderBytes = 64 << 10
	transport.MaxIdleConnsPerHost = 16
	// Redirects are never followed: an answer is read where the request was sent, and the
	// token and credentials go nowhere else.
	noRedirect := func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	c := &Client{
		s:         s,
		http:      &http.Client{Transport: transport, CheckRedirect: noRedirect},
		tokenHTTP: &http.Client{Transport: transport, CheckRedirect: noRedirect},
	}
	basic := func(id, secret string) string { return base64.StdEncoding.EncodeToString([]byte(id + ":" + secret)) }
	c.secrets = []string{
		s.ClientSecret,
		url.QueryEscape(s.ClientSecret),
		basic(s.ClientID, s.ClientSecret),
		basic(url.QueryEscape(s.ClientID), url.QueryEscape(s.ClientSecret)),
		s.P12Password,
	}
	c.tokens = &tokens{fetch: c.fetchToken, timeout: s.Timeout}
	return c, nil
}

// CloseIdleConnections closes the connections kept for later calls (at shutdown).
func (c *Client) CloseIdleConnections() { c.http.CloseIdleConnections() }

// Do sends r and decodes a 2xx answer's JSON into out (nil: the body is not read beyond its
// bound). Any other end is an *Error; errors.Is with ErrRefused, ErrNotFound, ErrUnauthorized
// and ErrOutcomeUnknown tells which kind. A Request that cannot be sent at all (an empty
// operation or path segment, an invalid method, a body that does not marshal) is a caller's
// bug, answered with a plain error before anything is sent.
func (c *Client) Do(ctx context.Context, r Request, out any) error {
	start := time.Now()
	target, body, err := c.prepare(r)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, c.s.Timeout)
	defer cancel()
	attempts, e := c.call(ctx, r, target, body, out)
	obs := Observation{Operation: r.Operation, Outcome: OutcomeOK, Attempts: attempts, Duration: time.Since(start)}
	if e != nil {
		obs.Outcome, obs.Status = e.Outcome, e.Status
	}
	c.observe(obs)
	if e != nil {
		return e
	}
	return nil
}

// prepare builds r's URL and body.
func (c *Client) prepare(r Request) (string, []byte, error) {
	if r.Operation == "" || r.Method == "" || len(r.Path) == 0 {
		return "", nil, errors.New("psp: a request needs an operation, a method and a path")
	}
	u := *c.s.api
	raw := make([]string, len(r.Path))
	for i, seg := range r.Path {
		if seg == "" || seg == "." || seg == ".." {
			return "", nil, fmt.Errorf("psp %s: the path segment %q is empty or relative", r.Operation, seg)
		}
		raw[i] = url.PathEscape(seg)
	}
	u.RawPath = u.EscapedPath() + "/" + strings.Join(raw, "/")
	u.Path = u.Path + "/" + strings.Join(r.Path, "/")
	u.RawQuery = r.Query.Encode()
	if _, err := http.NewRequest(r.Method, u.String(), nil); err != nil {
		return "", nil, fmt.Errorf("psp %s: %w", r.Operation, err)
	}
	var body []byte
	if r.Body != nil {
		var err error
		if body, err = json.Marshal(r.Body); err != nil {
			return "", nil, fmt.Errorf("psp %s: the body does not marshal: %w", r.Operation, err)
		}
	}
	return u.String(), body, nil
}

// call sends r until it succeeds, fails for good, or the retries or the time run out.
func (c *Client) call(ctx context.Context, r Request, target string, body []byte, out any) (int, *Error) {
	attempts, failures, refreshed := 0, 0, false
	for {
		var e *Error
		tok, err := c.tokens.get(ctx)
		if err != nil {
			// Nothing was sent: whatever Retryable says, a transient failure may be tried again.
			e = c.tokenFailure(ctx, err)
		} else {
			attempts++
			e = c.send(ctx, r, target, body, tok, out)
			if e == nil {
				return attempts, nil
			}
			if e.Outcome == OutcomeUnauthorized && !refreshed {
				// The token may have been revoked or have expired early: once, with a new one.
				refreshed = true
				c.tokens.invalidate(tok)
				continue
			}
			if !r.Retryable {
				e.Operation, e.Attempts = r.Operation, attempts
				return attempts, e
			}
		}
		e.Operation, e.Attempts = r.Operation, attempts
		failures++
		if !transient(e.Outcome) || failures >= c.s.MaxAttempts {
			return attempts, e
		}
		wait := e.RetryAfter
		if wait <= 0 {
			wait = backoff(failures)
		}
		if deadline, ok := ctx.Deadline(); ok && time.Until(deadline) < wait {
			return attempts, e // the PSP asks for more time than the call has left
		}
		timer := time.NewTimer(wait)
		select {
		case <-timer.C:
		case <-ctx.Done():
			timer.Stop()
			return attempts, e
		}
	}
}

// send makes one attempt with the token tok.
func (c *Client) send(ctx context.Context, r Request, target string, body []byte, tok string, out any) *Error {
	var reader io.Reader
	if body != nil {
		reader = bytes.NewReader(body) // and NewRequest sets GetBody, for the transport's own resends
	}
	req, err := http.NewRequestWithContext(ctx, r.Method, target, reader)
	if err != nil {
		return &Error{Outcome: OutcomeBadAnswer, reason: "building the request", Err: err}
	}
	req.Header.Set("Authorization", "Bearer "+tok)
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := c.http.Do(req)
	if err != nil {
		return c.transportError(ctx, err, "sending the request")
	}
	defer res.Body.Close()
	raw, readErr := readBody(res.Body, c.s.MaxAnswerBytes)
	if res.StatusCode < 200 || res.StatusCode > 299 {
		// The status decides; a body cut short or too long only loses the problem's text.
		e := &Error{
			Outcome:    statusOutcome(res.StatusCode),
			Status:     res.StatusCode,
			Problem:    parseProblem(raw, append(c.secrets, tok)),
			RetryAfter: retryAfter(res.Header, time.Now()),
		}
		if res.StatusCode >= 300 && res.StatusCode < 400 {
			e.reason = "a redirect, not followed"
		}
		return e
	}
	if readErr != nil {
		e := c.transportError(ctx, readErr, "reading the answer")
		e.Status = res.StatusCode
		return e
	}
	if out == nil {
		return nil
	}
	if err := decodeAnswer(res.Header.Get("Content-Type"), raw, out); err != nil {
		return &Error{Outcome: OutcomeBadAnswer, Status: res.StatusCode, Err: err}
	}
	return nil
}

// transportError is a request that got no whole answer.
func (c *Client) transportError(ctx context.Context, err error, doing string) *Error {
	e := &Error{Outcome: OutcomeUnavailable, reason: doing}
	switch {
	case errors.Is(err, errTooLarge):
		e.Outcome, e.Err = OutcomeBadAnswer, err
	case errors.Is(err, context.DeadlineExceeded) || errors.Is(ctx.Err(), context.DeadlineExceeded):
		e.Outcome, e.Err, e.reason = OutcomeTimeout, context.DeadlineExceeded, "no answer in time"
	case errors.Is(err, context.Canceled) || ctx.Err() != nil:
		e.Outcome, e.Err = OutcomeCanceled, context.Canceled
	default:
		// *url.Error repeats the method and the URL; the cause (a refused connection, a
		// certificate the PSP or pixgate does not trust) is what the reader needs.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		e.Err = err
	}
	return e
}

// tokenFailure is the *Error of a call that got no token.
func (c *Client) tokenFailure(ctx context.Context, err error) *Error {
	var te *Error
	if errors.As(err, &te) {
		e := *te
		e.reason = strings.TrimSuffix("getting a token: "+e.reason, ": ")
		return &e
	}
	return c.transportError(ctx, err, "waiting for a token")
}

func (c *Client) observe(o Observation) {
	if c.s.Observe != nil {
		c.s.Observe(o)
	}
}

// backoff is the wait before retry n (1, 2, ...): doubling from backoffBase up to backoffMax,
// each drawn between its half and its whole so that clients that failed together do not come
// back together.
func backoff(n int) time.Duration {
	d := backoffMax
	if n < 6 {
		d = min(backoffBase<<(n-1), backoffMax)
	}
	return d/2 + rand.N(d/2+1)
}

// retryAfter reads a Retry-After header, seconds or an HTTP date, at most an hour; 0 when there
// is none or it does not parse.
func retryAfter(h http.Header, now time.Time) time.Duration {
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	var d time.Duration
	if secs, err := strconv.Atoi(v); err == nil {
		d = time.Duration(min(max(secs, 0), 3600)) * time.Second
	} else if at, err := http.ParseTime(v); err == nil {
		d = at.Sub(now)
	}
	return min(max(d, 0), time.Hour)
}
