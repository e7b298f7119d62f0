package ports

import (
	"context"

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

// DevolutionStatus is the acquirer's answer to a devolution, as API Pix names it.
type DevolutionStatus string

const (
	DevolutionInProgress DevolutionStatus = "EM_PROCESSAMENTO"
	DevolutionReturned   DevolutionStatus = "DEVOLVIDO"
	DevolutionNotDone    DevolutionStatus = "NAO_REALIZADO"
)

// DevolutionResult is where a requested devolution stands.
type DevolutionResult struct {
	Status   DevolutionStatus
	ReturnID string // rtrId, the devolution's end-to-end id, once DEVOLVIDO
	Reason   string // why, when NAO_REALIZADO
}

// Acquirer is the PSP that holds pixgate's PIX key: it returns money to payers.
//
// RequestDevolution is idempotent by Devolution.ID (asking twice for one id makes one
// devolution) and safe for concurrent use. An error means the request's outcome is unknown;
// the final status also arrives through the acquirer's callback, matched on the id.
type Acquirer interface {
	RequestDevolution(ctx context.Context, d Devolution) (DevolutionResult, error)
}
