package ports

import (
	"context"
	"errors"

	"github.com/pixgate/pixgate/domain"
)

// PayoutOrder is one payout pixgate asks its PSP to make: a withdrawal's amount sent by PIX to
// the withdrawal's key, from the PSP account that holds pixgate's own key.
type PayoutOrder struct {
	// ID is pixgate's id of the payout, domain.PayoutID of the withdrawal: 32 characters
	// [a-f0-9], the same for every attempt to send it. It is the PSP's idempotency key.
	ID     string
	Amount domain.Cents
	// Key is where the money goes: the withdrawal's PIX key, as the domain normalised it.
	Key domain.PixKey
}

// PayoutStatus is where a payout stands at the PSP. The three values below are the ones
// pixgate acts on (they are Efí's names, which other PSPs' adapters map their own to); a
// PayoutResult may carry any other string a PSP answered, which the application logs and reads
// back later instead of guessing what it means.
type PayoutStatus string

const (
	// PayoutInProgress: the PSP took the payout and is making it.
	PayoutInProgress PayoutStatus = "EM_PROCESSAMENTO"
	// PayoutDone: the money reached the receiver's institution (PayoutResult.EndToEndID set).
	PayoutDone PayoutStatus = "REALIZADO"
	// PayoutNotDone: the PSP tried and could not make it (PayoutResult.Reason says why); the
	// money did not leave, and the id cannot be used again.
	PayoutNotDone PayoutStatus = "NAO_REALIZADO"
)

// PayoutResult is the PSP's answer about one payout.
type PayoutResult struct {
	Status PayoutStatus
	// EndToEndID is the PIX end-to-end id of the payout once it is PayoutDone (and often
	// before); it becomes the withdrawal's endToEnd.
	EndToEndID string
	// Reason is the PSP's reason, in its words, when the payout is PayoutNotDone.
	Reason string
}

// Outcomes of a payout request, for errors.Is. Any other error of Payouts means the outcome is
// unknown: the payout may or may not have been made.
var (
	// ErrPayoutRefused: the PSP refused the request itself (a 4xx: a key that does not exist,
	// too little money in pixgate's account at the PSP, a request it will not carry out) and
	// made nothing. Sending the same order again is refused again. The error is a
	// *PayoutRefusedError, which carries the PSP's reason.
	ErrPayoutRefused = errors.New("the PSP refused the payout")
	// ErrPayoutIDTaken: the PSP already has a payout under this id (a resend of a payout whose
	// first send reached it). Nothing new was made; read it back with Status.
	ErrPayoutIDTaken = errors.New("the PSP already has a payout under this id")
	// ErrPayoutNotFound: the PSP has no payout under this id: it never received one (so
	// sending it now makes the first and only one).
	ErrPayoutNotFound = errors.New("the PSP has no payout under this id")
)

// PayoutRefusedError is ErrPayoutRefused with the PSP's reason.
type PayoutRefusedError struct {
	// Reason is what the PSP said, in its words (for a withdrawal's errorMessage). It never
	// holds a secret: adapters build it from the PSP's answer only.
	Reason string
}

func (e *PayoutRefusedError) Error() string { return "the PSP refused the payout: " + e.Reason }

// Is makes errors.Is(err, ErrPayoutRefused) true.
func (e *PayoutRefusedError) Is(target error) bool { return target == ErrPayoutRefused }

// Payouts is the PSP's payout API: it sends PIX from the account that holds pixgate's key.
// Banco Central's API Pix has no standard for it, so each PSP has an adapter of its own; the
// application needs nothing else of a PSP to pay withdrawals out.
//
// Idempotency: a payout is made at most once per PayoutOrder.ID, however many times Send is
// called with it, concurrently or not, from any number of processes (the PSP keeps the id).
// A Send whose outcome is unknown may therefore be repeated with the same order; the repeat
// answers the payout made by the first (a result), or ErrPayoutIDTaken.
//
// Errors: Send answers a result (the PSP took the order), a *PayoutRefusedError (the PSP made
// nothing and never will under this order: the withdrawal fails with its reason),
// ErrPayoutIDTaken, or any other error, which means the outcome is unknown (a timeout, a lost
// connection, a 5xx, an answer that cannot be read, credentials the PSP did not accept): the
// caller reads the payout back with Status, never takes it for a refusal. Status answers a
// result, ErrPayoutNotFound, or any other error (unknown: ask again later). A result's Status
// may be one the adapter does not know; it is passed on, not guessed.
//
// Safe for concurrent use.
type Payouts interface {
	// Send asks the PSP to make the payout o.
	Send(ctx context.Context, o PayoutOrder) (PayoutResult, error)
	// Status reads back the payout the PSP holds under id (a PayoutOrder.ID).
	Status(ctx context.Context, id string) (PayoutResult, error)
}
