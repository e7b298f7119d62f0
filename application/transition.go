package application

import (
	"context"
	"time"

	"github.com/pixgate/pixgate/domain"
	"github.com/pixgate/pixgate/ports"
)

// Updater is what a Transition needs of a repository: the closure-shaped update of one record
// of an account, version-checked, which stores the record with the events and postings its
// transition raised in the same write. ports.TransactionRepository and
// ports.WithdrawalRepository are Updaters of their records.
type Updater[R any] interface {
	Update(ctx context.Context, accountID, id string, fn func(R) error) (R, error)
}

// NoInput is the input of a transition that takes nothing but the record.
type NoInput = struct{}

// Transition is the one use case behind every operation that moves one record of the caller's
// account by one domain transition: canceling a withdrawal and each of the sandbox's steering
// steps. It loads the record, applies move at the current time and stores the result with its
// version checked and its events in the same write, all inside the repository's Update; a record of another account is domain.ErrNotFound, and a move that
// refuses (a domain.InvalidTransitionError, most often) changes nothing and answers its error.
//
// In is what the request adds to the record (NoInput when nothing).
type Transition[R, In any] struct {
	repo  Updater[R]
	clock ports.Clock
	move  func(r R, in In, now time.Time) error
}

// NewTransition builds the use case of one transition; name says which, for a wiring mistake.
func NewTransition[R, In any](name string, repo Updater[R], clock ports.Clock, move func(r R, in In, now time.Time) error) *Transition[R, In] {
	requirePorts(name, repo, clock, move)
	return &Transition[R, In]{repo: repo, clock: clock, move: move}
}

// Execute applies the transition to the caller's record id and answers the record as stored.
func (uc *Transition[R, In]) Execute(ctx context.Context, p domain.Principal, id string, in In) (R, error) {
	return uc.repo.Update(ctx, p.AccountID, id, func(r R) error {
		return uc.move(r, in, uc.clock.Now())
	})
}

// TransactionStep and WithdrawalStep are the transitions that take nothing but the record.
type (
	TransactionStep = Transition[*domain.Transaction, NoInput]
	WithdrawalStep  = Transition[*domain.Withdrawal, NoInput]
)
