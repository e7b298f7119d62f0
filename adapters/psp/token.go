package psp

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"
	"golang.org/x/sync/singleflight"
)

const (
	// defaultTokenLifetime is assumed of a token answered without expires_in: RFC 6749 leaves
	// the lifetime to the server's documentation then, and a 401 ends a shorter one anyway.
	defaultTokenLifetime = 5 * time.Minute
	// maxTokenAnswer bounds a token endpoint's answer: a token is a few hundred bytes.
	maxTokenAnswer = 64 << 10
	// maxToken bounds the access token itself, which goes into every request's header.
	maxToken = 8 << 10
)

// token is an access token and when to stop using it.
type token struct {
	value string
	// renewAt is a fifth of the lifetime (at most a minute) before expiry: a token is never
	// sent so close to its end that it expires on the way.
	renewAt time.Time
}

func newToken(value string, asked time.Time, lifetime time.Duration) token {
	if lifetime <= 0 {
		lifetime = defaultTokenLifetime
	}
	return token{value: value, renewAt: asked.Add(lifetime - min(lifetime/5, time.Minute))}
}

// tokens holds the current token and fetches the next one once, however many calls wait for it.
type tokens struct {
	fetch   func(context.Context) (token, error)
	timeout time.Duration

	mu      sync.Mutex
	current token
	flight  singleflight.Group
}

// get answers the current token, or waits for a fresh one until ctx ends. The fetch itself
// outlives a caller that gives up (it is bounded by the client's timeout), so the other callers
// waiting on it still get its token.
func (t *tokens) get(ctx context.Context) (string, error) {
	if v, ok := t.usable(); ok {
		return v, nil
	}
	ch := t.flight.DoChan("token", func() (any, error) {
		if v, ok := t.usable(); ok { // a fetch that ended between usable and DoChan
			return v, nil
		}
		fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), t.timeout)
		defer cancel()
		tok, err := t.fetch(fctx)
		if err != nil {
			return "", err
		}
		t.mu.Lock()
		t.current = tok
		t.mu.Unlock()
		return tok.value, nil
	})
	select {
	case r := <-ch:
		if r.Err != nil {
			return "", r.Err
		}
		return r.Val.(string), nil
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

func (t *tokens) usable() (string, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.current.value, t.current.value != "" && time.Now().Before(t.current.renewAt)
}

// invalidate drops value if it is still the current token: of many calls answered 401 with the
// same token, the first drops it and the others find the fresh one.
func (t *tokens) invalidate(value string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.current.value == value {
		t.current = token{}
	}
}

// fetchToken asks the token endpoint for a token, observes the fetch and reports its failure
// as an *Error of operation "token".
func (c *Client) fetchToken(ctx context.Context) (token, error) {
	start := time.Now()
	var tok token
	var err *Error
	if c.s.TokenRequest == TokenJSON {
		tok, err = c.fetchJSONToken(ctx)
	} else {
		tok, err = c.fetchFormToken(ctx)
	}
	obs := Observation{Operation: "token", Outcome: OutcomeOK, Attempts: 1, Duration: time.Since(start)}
	if err != nil {
		err.Operation, err.Attempts = "token", 1
		obs.Outcome, obs.Status = err.Outcome, err.Status
	}
	c.observe(obs)
	if err != nil {
		return token{}, err
	}
	return tok, nil
}

// fetchFormToken is RFC 6749's client credentials grant, through x/oauth2.
func (c *Client) fetchFormToken(ctx context.Context) (token, *Error) {
	cc := clientcredentials.Config{
		ClientID:     c.s.ClientID,
		ClientSecret: c.s.ClientSecret,
		TokenURL:     c.s.tokenURL,
		Scopes:       c.s.Scopes,
		AuthStyle:    oauth2.AuthStyleInHeader,
	}
	asked := time.Now()
	t, err := cc.Token(context.WithValue(ctx, oauth2.HTTPClient, c.tokenHTTP))
	if err != nil {
		var re *oauth2.RetrieveError
		if errors.As(err, &re) && re.Response != nil {
			// RetrieveError's own text holds the whole answer, which could echo a credential:
			// only its status, code and description, scrubbed, are kept.
			return token{}, c.tokenRefusal(re.Response, re.ErrorCode, re.ErrorDescription, re.Body)
		}
		return token{}, c.transportError(ctx, err, "asking for a token")
	}
	var lifetime time.Duration
	switch {
	case t.ExpiresIn > 0:
		lifetime = time.Duration(t.ExpiresIn) * time.Second
	case !t.Expiry.IsZero():
		lifetime = t.Expiry.Sub(asked)
	}
	return c.acceptToken(t.AccessToken, t.TokenType, asked, lifetime)
}

// fetchJSONToken is the same grant with the JSON body {"grant_type":"client_credentials"}.
// The credentials go in HTTP Basic as they are, as the PSPs that want this body read them.
func (c *Client) fetchJSONToken(ctx context.Context) (token, *Error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.s.tokenURL, strings.NewReader(`{"grant_type":"client_credentials"}`))
	if err != nil {
		return token{}, &Error{Outcome: OutcomeBadAnswer, reason: "building the token request", Err: err}
	}
	req.SetBasicAuth(c.s.ClientID, c.s.ClientSecret)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	asked := time.Now()
	res, err := c.tokenHTTP.Do(req)
	if err != nil {
		return token{}, c.transportError(ctx, err, "asking for a token")
	}
	defer res.Body.Close()
	raw, err := readBody(res.Body, maxTokenAnswer)
	if res.StatusCode < 200 || res.StatusCode > 299 {
		var answer struct {
			Code        string `json:"error"`
			Description string `json:"error_description"`
		}
		_ = json.Unmarshal(raw, &answer) // an answer that is not RFC 6749's error keeps its status
		return token{}, c.tokenRefusal(res, answer.Code, answer.Description, raw)
	}
	if err != nil {
		return token{}, c.transportError(ctx, err, "reading the token")
	}
	var answer struct {
		AccessToken string      `json:"access_token"`
		TokenType   string      `json:"token_type"`
		ExpiresIn   json.Number `json:"expires_in"`
	}
	if err := json.Unmarshal(raw, &answer); err != nil {
		return token{}, &Error{Outcome: OutcomeBadAnswer, Status: res.StatusCode, reason: "the token endpoint's answer is not a JSON token", Err: err}
	}
	var lifetime time.Duration
	if s, err := strconv.ParseFloat(answer.ExpiresIn.String(), 64); err == nil && s > 0 && s < 1e9 {
		lifetime = time.Duration(s * float64(time.Second))
	}
	return c.acceptToken(answer.AccessToken, answer.TokenType, asked, lifetime)
}

// acceptToken checks what the endpoint issued: a bearer token that fits in a header.
func (c *Client) acceptToken(value, kind string, asked time.Time, lifetime time.Duration) (token, *Error) {
	if kind != "" && !strings.EqualFold(kind, "bearer") {
		return token{}, &Error{Outcome: OutcomeBadAnswer, reason: "the token endpoint issued a " + clean(kind, c.secrets) + " token, not a bearer token"}
	}
	if value == "" || len(value) > maxToken || !visible(value) {
		return token{}, &Error{Outcome: OutcomeBadAnswer, reason: "the token endpoint issued no access token usable in a header"}
	}
	return newToken(value, asked, lifetime), nil
}

// tokenRefusal is a token endpoint's answer that is no token. Answers that may change on a
// second try (408, 429, 5xx) are OutcomeUnavailable; the others mean the PSP does not take
// pixgate's credentials, or the token URL is wrong: OutcomeUnauthorized either way.
func (c *Client) tokenRefusal(res *http.Response, code, description string, body []byte) *Error {
	e := &Error{Status: res.StatusCode, RetryAfter: retryAfter(res.Header, time.Now())}
	switch o := statusOutcome(res.StatusCode); o {
	case OutcomeUnavailable:
		e.Outcome = o
	default:
		e.Outcome = OutcomeUnauthorized
		if res.StatusCode >= 300 && res.StatusCode < 400 {
			e.Outcome = OutcomeBadAnswer
		}
	}
	e.reason = "the token endpoint refused"
	if code != "" {
		e.reason += ": " + clean(code, c.secrets)
		if description != "" {
			e.reason += ": " + clean(description, c.secrets)
		}
	} else if p := parseProblem(body, c.secrets); p.String() != "" {
		e.Problem = p
	}
	return e
}
