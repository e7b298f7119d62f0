package domain

import (
	"errors"
	"fmt"
)

// Plain outcomes the domain and its ports share. Test them with errors.Is.
var (
	// ErrNotFound: no such resource for this account. Another account's resource is not found
	// either: isolation must never leak existence.
	ErrNotFound = errors.New("not found")
	// ErrInsufficientBalance: a withdrawal would take more than the available balance.
	ErrInsufficientBalance = errors.New("insufficient balance")
	// ErrAccountDisabled: the client account exists but may not act.
	ErrAccountDisabled = errors.New("account disabled")
	// ErrCredentialLimit: the account already holds MaxActiveCredentials credentials that are
	// not revoked; one must be revoked before another is created.
	ErrCredentialLimit = errors.New("credential limit reached")
)

// InvalidTransitionError reports a status change the state machine refuses. It carries the
// resource kind, the current status and the status that was asked for.
type InvalidTransitionError struct {
	Resource string // "transaction" or "withdrawal"
	From, To string
	// Reason says why, when the state table alone does not (the table has the move, but not
	// for this record); empty otherwise.
	Reason string
}

func (e *InvalidTransitionError) Error() string {
	msg := fmt.Sprintf("%s cannot move from %s to %s", e.Resource, e.From, e.To)
	if e.Reason != "" {
		msg += ": " + e.Reason
	}
	return msg
}

// ErrInvalidTransition matches every *InvalidTransitionError with errors.Is.
var ErrInvalidTransition = errors.New("invalid transition")

func (e *InvalidTransitionError) Is(target error) bool { return target == ErrInvalidTransition }
