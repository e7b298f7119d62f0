package psp

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// Outcome is how a call or a token fetch ended; it is the outcome label of the PSP's metrics.
type Outcome string

const (
	// OutcomeOK: the PSP answered 2xx and the answer was read.
	OutcomeOK Outcome = "ok"
	// OutcomeRefused: the PSP answered 4xx (but 401, 404, 408 and 429): it did not act.
	OutcomeRefused Outcome = "refused"
	// OutcomeNotFound: the PSP answered 404: what was asked for does not exist there.
	OutcomeNotFound Outcome = "not_found"
	// OutcomeUnauthorized: the PSP did not accept pixgate's credentials (a 401 from the API with
	// a fresh token, or a refusal from the token endpoint): it did not act.
	OutcomeUnauthorized Outcome = "unauthorized"
	// OutcomeUnavailable: 5xx, 408 or 429 after the retries allowed, or the connection failed:
	// the PSP may have acted.
	OutcomeUnavailable Outcome = "unavailable"
	// OutcomeTimeout: no whole answer within the call's time: the PSP may have acted.
	OutcomeTimeout Outcome = "timeout"
	// OutcomeCanceled: the caller gave up (its context was canceled): the PSP may have acted.
	OutcomeCanceled Outcome = "canceled"
	// OutcomeBadAnswer: an answer pixgate cannot read (not JSON, too large, a redirect): the
	// PSP may have acted.
	OutcomeBadAnswer Outcome = "bad_answer"
)

// The classes of *Error, for errors.Is. Every *Error is exactly one of ErrRefused,
// ErrUnauthorized and ErrOutcomeUnknown; ErrNotFound is a kind of ErrRefused.
var (
	// ErrRefused: the PSP answered that it would not do it (4xx). Repeating the same request
	// gets the same answer.
	ErrRefused = errors.New("psp: refused")
	// ErrNotFound: the PSP answered 404.
	ErrNotFound = errors.New("psp: not found")
	// ErrUnauthorized: the PSP did not accept pixgate's credentials, so it did nothing; nothing
	// will work until an operator fixes them.
	ErrUnauthorized = errors.New("psp: unauthorized")
	// ErrOutcomeUnknown: the request may or may not have been carried out (a timeout, a lost
	// connection, 5xx, 429 after the retries, an answer that cannot be read). Read the state
	// back, or repeat an idempotent request, before concluding anything.
	ErrOutcomeUnknown = errors.New("psp: outcome unknown")
)

// Error is a call to the PSP that did not end well. Its text names the operation, the outcome
// and what the PSP said, and holds no secret.
type Error struct {
	// Operation is the Request's Operation ("token" for a token fetch).
	Operation string
	Outcome   Outcome
	// Status is the HTTP status of the last answer; 0 when none came.
	Status int
	// Problem is the PSP's RFC 7807 answer, scrubbed of secrets and cut short; its fields are
	// empty when the answer held none.
	Problem Problem
	// Attempts is how many requests were sent for the call, token fetches aside.
	Attempts int
	// RetryAfter is the last answer's Retry-After; 0 when it had none.
	RetryAfter time.Duration
	// Err is the cause when there is one beyond the answer (a network error, a context's
	// error, a decoding error). It holds no secret either.
	Err error

	// reason says what happened, in words, when Problem does not.
	reason string
}

func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "psp %s: %s", e.Operation, e.Outcome)
	if e.Status != 0 {
		fmt.Fprintf(&b, " (HTTP %d)", e.Status)
	}
	if e.Attempts > 1 {
		fmt.Fprintf(&b, " after %d attempts", e.Attempts)
	}
	for _, part := range []string{e.reason, e.Problem.String()} {
		if part != "" {
			b.WriteString(": " + part)
		}
	}
	if e.Err != nil {
		b.WriteString(": " + e.Err.Error())
	}
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// Is makes errors.Is(err, ErrRefused) and its siblings tell the class of e.
func (e *Error) Is(target error) bool {
	switch target {
	case ErrRefused:
		return e.Outcome == OutcomeRefused || e.Outcome == OutcomeNotFound
	case ErrNotFound:
		return e.Outcome == OutcomeNotFound
	case ErrUnauthorized:
		return e.Outcome == OutcomeUnauthorized
	case ErrOutcomeUnknown:
		switch e.Outcome {
		case OutcomeUnavailable, OutcomeTimeout, OutcomeCanceled, OutcomeBadAnswer:
			return true
		}
	}
	return false
}

// Problem is an RFC 7807 answer as API Pix writes it. The violations' values are not kept:
// they echo what was sent, personal documents included. A PSP's own APIs may answer
// {"nome", "mensagem"} instead (Efí's do): Name and Message keep those.
type Problem struct {
	Type       string      `json:"type"`
	Title      string      `json:"title"`
	Status     int         `json:"status"`
	Detail     string      `json:"detail"`
	Violations []Violation `json:"violacoes"`
	Name       string      `json:"nome"`
	Message    string      `json:"mensagem"`
}

// Violation is one of a Problem's violacoes: which property broke which rule.
type Violation struct {
	Reason   string `json:"razao"`
	Property string `json:"propriedade"`
}

// String is the title, detail, name, message and violations in one line, or "".
func (p Problem) String() string {
	var parts []string
	for _, s := range []string{p.Title, p.Detail, p.Name, p.Message} {
		if s != "" {
			parts = append(parts, s)
		}
	}
	var vs []string
	for _, v := range p.Violations {
		switch {
		case v.Property != "" && v.Reason != "":
			vs = append(vs, v.Property+": "+v.Reason)
		case v.Property != "" || v.Reason != "":
			vs = append(vs, v.Property+v.Reason)
		}
	}
	if len(vs) > 0 {
		parts = append(parts, "["+strings.Join(vs, "; ")+"]")
	}
	return strings.Join(parts, ": ")
}

// outcomeOf is err's outcome, for observations.
func outcomeOf(err error) Outcome {
	var e *Error
	if errors.As(err, &e) {
		return e.Outcome
	}
	if err != nil {
		return OutcomeBadAnswer
	}
	return OutcomeOK
}

// statusOutcome classifies an answer's status that is not 2xx.
func statusOutcome(status int) Outcome {
	switch {
	case status == 401:
		return OutcomeUnauthorized
	case status == 404:
		return OutcomeNotFound
	case status == 408 || status == 429 || status >= 500:
		return OutcomeUnavailable
	case status >= 400:
		return OutcomeRefused
	}
	return OutcomeBadAnswer // 1xx and 3xx: not followed, not understood
}

// transient tells whether an outcome may change on a second try.
func transient(o Outcome) bool { return o == OutcomeUnavailable }
