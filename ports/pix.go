package ports

import (
	"context"

	"github.com/pixgate/pixgate/domain"
)

// PixEmitter produces the PIX charge (BR Code) of a transaction.
//
// Emit is safe for concurrent use. An error means no charge exists: the caller keeps the
// transaction FAILED with the error's text as errorMessage, so the error text must be fit for a
// merchant to read (no credentials, no internals).
type PixEmitter interface {
	// Acquirer names the acquirer that hosts the charges, the transaction's `acquirer` field
	// (the built-in sandbox emitter: "SANDBOX").
	Acquirer() string
	Emit(ctx context.Context, charge domain.PixCharge) (domain.PixCode, error)
}

// QRRenderer draws a QR code as a PNG image.
//
// RenderPNG is safe for concurrent use; implementations bound how many images they draw at once
// (drawing is the costliest step of creating a transaction) and wait for a slot, giving up with
// ctx.Err() when the context ends first. A renderer whose queue of waiting callers is full
// answers ErrOverloaded at once, having drawn nothing; one that could not draw the image within
// its own deadline answers ErrTimedOut. The PNG, decoded by any QR reader, is exactly content.
type QRRenderer interface {
	RenderPNG(ctx context.Context, content string) ([]byte, error)
}

// TxIDDecoder maps the txid of a BR Code this emitter produced back to the transaction id, so
// that the acquirer's notifications (which name the txid) find their transaction. Unknown or
// malformed txids answer domain.ErrNotFound. Safe for concurrent use.
type TxIDDecoder interface {
	TransactionID(txid string) (string, error)
}

// LocationCoder writes the dynamic BR Code of a charge whose payload location another party
// serves (the PSP that made the charge, when its answer holds no BR Code): the location in
// merchant account information, no key, no amount, txid "***". An error means the location
// cannot be written in a BR Code (too long, not printable ASCII, or with a scheme). Safe for
// concurrent use.
type LocationCoder interface {
	CodeForLocation(location string) (string, error)
}
