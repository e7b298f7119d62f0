package ports

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/pixgate/pixgate/domain"
)

// ChargeRequest is an immediate charge (a cob of Banco Central's API Pix) that pixgate asks its
// PSP to make, under a txid of pixgate's own.
type ChargeRequest struct {
	// TxID is the charge's id at the PSP: 26 to 35 characters [A-Za-z0-9] (domain.ValidCobTxID).
	// The same txid always means the same charge: a request repeated under it makes none.
	TxID              string
	Amount            domain.Cents
	ExpirationSeconds int
	// PayerRequest is shown to the payer (solicitacaoPagador): at most
	// domain.MaxPayerRequest characters; "" sends none.
	PayerRequest string
	// Debtor, when not zero, is the payer the charge names (devedor): a valid document and a
	// name.
	Debtor ChargeDebtor
}

// ChargeDebtor is the payer a charge names.
type ChargeDebtor struct {
	Document domain.Document
	Name     string
}

// ChargeStatus is a charge's status at the PSP, as API Pix names it.
type ChargeStatus string

const (
	ChargeActive          ChargeStatus = "ATIVA"
	ChargeCompleted       ChargeStatus = "CONCLUIDA"
	ChargeRemovedByUs     ChargeStatus = "REMOVIDA_PELO_USUARIO_RECEBEDOR"
	ChargeRemovedByThePSP ChargeStatus = "REMOVIDA_PELO_PSP"
)

// Charge is a charge as the PSP holds it.
type Charge struct {
	TxID   string
	Status ChargeStatus
	// CreatedAt is calendario.criacao, by the PSP's clock; ExpirationSeconds counts from it.
	CreatedAt         time.Time
	ExpirationSeconds int
	Amount            domain.Cents
	// Key is the PIX key the charge pays into (chave).
	Key string
	// Revision is revisao: 0 at creation, one more for each change.
	Revision int
	// LocationID and Location are the payload location the PSP serves (loc.id, location,
	// without scheme).
	LocationID int64
	Location   string
	// CopyPaste is pixCopiaECola, the BR Code to show the payer, byte for byte; "" when the
	// PSP sent none (API Pix makes it optional).
	CopyPaste string
}

// ErrChargeUnavailable: the PSP could not be reached, did not answer in time, or kept
// answering 429, 5xx or 401 with fresh credentials: whether it acted is unknown. Repeating the
// same request (the same txid) is safe. It maps to 503 with Retry-After.
var ErrChargeUnavailable = errors.New("the PSP is unavailable")

// ErrChargeNotFound: the PSP holds no charge under the txid.
var ErrChargeNotFound = errors.New("no such charge at the PSP")

// ErrChargeRefused is what every *ChargeRefusedError is, for errors.Is.
var ErrChargeRefused = errors.New("the PSP refused the charge")

// ChargeRefusedError is the PSP's refusal (a 4xx to a request it did not carry out), with its
// words: the problem's title and detail, never a secret, fit for a merchant to read. It maps to
// 502 acquirer_error.
type ChargeRefusedError struct {
	Status int
	Title  string
	Detail string
}

func (e *ChargeRefusedError) Error() string {
	switch {
	case e.Title != "" && e.Detail != "":
		return fmt.Sprintf("the PSP refused the charge (HTTP %d): %s: %s", e.Status, e.Title, e.Detail)
	case e.Title != "" || e.Detail != "":
		return fmt.Sprintf("the PSP refused the charge (HTTP %d): %s", e.Status, e.Title+e.Detail)
	}
	return fmt.Sprintf("the PSP refused the charge (HTTP %d)", e.Status)
}

func (e *ChargeRefusedError) Is(target error) bool { return target == ErrChargeRefused }

// ChargeIssuer is the PSP that makes pixgate's charges (API Pix's immediate charges, cob).
//
// Create makes the charge r under r.TxID and answers it as the PSP made it. It is idempotent by
// txid: a request repeated under the same txid (after an error, from another instance, at the
// same time) makes no second charge, and answers the one made when its amount and key are
// r's. Its errors: *ChargeRefusedError (errors.Is ErrChargeRefused) when the PSP refused and
// made nothing; ErrChargeUnavailable when the outcome is unknown (the charge may exist: only a
// request repeated under the same txid tells); any other error is a caller's bug (a txid or
// amount out of shape), found before anything was sent.
//
// Get reads the charge txid back (ErrChargeNotFound when the PSP has none). Remove ends an
// active charge (REMOVIDA_PELO_USUARIO_RECEBEDOR) so that no payer can pay it any more; it is
// idempotent (removing a removed charge answers it), answers ErrChargeRefused when the charge
// is no longer active for another reason (paid, or removed by the PSP), and is sent again by
// the adapter while its outcome is unknown, within its timeout.
//
// Every method is safe for concurrent use and takes ctx's deadline as its bound besides the
// adapter's own.
type ChargeIssuer interface {
	// Name is the acquirer's name, each transaction's `acquirer`.
	Name() string
	Create(ctx context.Context, r ChargeRequest) (Charge, error)
	Get(ctx context.Context, txid string) (Charge, error)
	Remove(ctx context.Context, txid string) (Charge, error)
}
