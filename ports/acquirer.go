package ports

import (
	"context"
	"errors"

	"github.com/pixgate/pixgate/domain"
)

// DevolutionKind says why pixgate sends money back to a payer.
type DevolutionKind string

const (
	// DevolutionRefund is a merchant's refund of a paid charge.
	DevolutionRefund DevolutionKind = "refund"
	// DevolutionLatePayment returns a payment that belongs to no charge.
	DevolutionLatePayment DevolutionKind = "late_payment"
)

// Devolution asks the acquirer to return money to the payer of a PIX payment (a devolução of
// Banco Central's API Pix).
type Devolution struct {
	EndToEndID string       // the payment returned
	ID         string       // the devolution id: 1 to 35 characters [A-Za-z0-9]; callbacks name it
	Amount     domain.Cents // at most the payment's amount
	Reason     string       // may be empty
	Kind       DevolutionKind
}

// DevolutionStatus is the acquirer's answer to a devolution, as API Pix names it. A
// DevolutionResult may carry another string an acquirer answered, which the application reports
// and reads back later instead of guessing what it means.
type DevolutionStatus string

const (
	// DevolutionInProgress: the acquirer took the devolution and is making it.
	DevolutionInProgress DevolutionStatus = "EM_PROCESSAMENTO"
	// DevolutionReturned: the money went back to the payer (DevolutionResult.ReturnID set).
	DevolutionReturned DevolutionStatus = "DEVOLVIDO"
	// DevolutionNotDone: the acquirer tried and could not make it (DevolutionResult.Reason).
	DevolutionNotDone DevolutionStatus = "NAO_REALIZADO"
)

// DevolutionResult is where a requested devolution stands.
type DevolutionResult struct {
	Status   DevolutionStatus
	ReturnID string // rtrId, the devolution's end-to-end id, once DEVOLVIDO
	Reason   string // why, when NAO_REALIZADO
}

// Outcomes of the acquirer's devolution calls, for errors.Is. Any other error means the
// outcome is unknown (a timeout, a 5xx, a lost connection): the devolution may or may not have
// been made, and only reading it back tells.
var (
	// ErrDevolutionRefused: the acquirer refused the request itself (API Pix answers 400 for
	// an amount above what is left of the payment, a payment too old, a malformed request,
	// and also for an id used before: it does not say which). The error is a
	// *DevolutionRefusedError with the acquirer's reason.
	ErrDevolutionRefused = errors.New("the acquirer refused the devolution")
	// ErrDevolutionNotFound: the acquirer has no devolution under this id for this payment:
	// it never received one, so sending it now makes the first and only one.
	ErrDevolutionNotFound = errors.New("the acquirer has no devolution under this id")
)

// DevolutionRefusedError is ErrDevolutionRefused with the acquirer's reason.
type DevolutionRefusedError struct {
	// Reason is what the acquirer said, in its words (for a refund's errorMessage). It never
	// holds a secret: adapters build it from the acquirer's answer only.
	Reason string
}

func (e *DevolutionRefusedError) Error() string {
	return "the acquirer refused the devolution: " + e.Reason
}

// Is makes errors.Is(err, ErrDevolutionRefused) true.
func (e *DevolutionRefusedError) Is(target error) bool { return target == ErrDevolutionRefused }

// Acquirer is the PSP that holds pixgate's PIX key: it returns money to payers.
//
// The acquirer keeps one devolution per (payment, id) and is NOT idempotent by id: API Pix
// refuses a second RequestDevolution with an id used before (ErrDevolutionRefused), whatever
// its body. Callers therefore send a devolution once per id, read it back with Devolution
// whenever a request's outcome is unknown or refused, and send it again, under the same id,
// only when the acquirer says it has none (ErrDevolutionNotFound). The final status also
// arrives through the acquirer's callback, matched on the id. Safe for concurrent use.
type Acquirer interface {
	// RequestDevolution asks for the devolution d (API Pix PUT /pix/{e2eid}/devolucao/{id}).
	// Errors: ErrDevolutionRefused (made nothing, or the id was used before); anything else
	// means the outcome is unknown.
	RequestDevolution(ctx context.Context, d Devolution) (DevolutionResult, error)
	// Devolution reads back the devolution id of the payment endToEndID (API Pix GET
	// /pix/{e2eid}/devolucao/{id}). Errors: ErrDevolutionNotFound (never made); anything else
	// means the acquirer could not tell now.
	Devolution(ctx context.Context, endToEndID, id string) (DevolutionResult, error)
}
