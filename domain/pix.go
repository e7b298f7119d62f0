package domain

import (
	"fmt"
	"time"
)

// PixCharge is what an emitter needs to produce the PIX charge of one transaction.
type PixCharge struct {
	TransactionID string // UUID v4; the emitter derives the BR Code txid from it
	Amount        Cents
	CreatedAt     time.Time
	ExpiresAt     time.Time
}

// PixCode is the charge an emitter produced: the BR Code ("copia e cola") payload.
type PixCode struct {
	URI      string
	Location PixLocation // zero for a static code
}

// PixResponse is the PIX data a transaction carries once its QR code exists. It never changes
// once attached, QRCodePNG's bytes included, so copies of a transaction may share it.
type PixResponse struct {
	URI       string    // BR Code payload
	QRCodePNG []byte    // PNG image whose QR code decodes to URI
	ExpiresAt time.Time // creation time (the PSP's, for a charge the PSP made) plus expirationSeconds
	// Location is a dynamic code's payload location; zero for a static code. For a charge the
	// PSP made, only its CobTxID is set (the PSP's txid), and PSP holds the rest.
	Location PixLocation
	// PSP is the charge as the PSP made it; zero when pixgate wrote the code itself.
	PSP PSPCharge
}

// PSPCharge is what a transaction keeps of the charge its PSP made (an immediate charge of
// Banco Central's API Pix, whose txid is the PixLocation's CobTxID): the payload location the
// PSP serves, the revision it answered, and its creation time by the PSP's clock, against
// which a payment's time is checked.
type PSPCharge struct {
	LocationID int64
	Location   string // without scheme, as a BR Code holds it
	Revision   int
	CreatedAt  time.Time
}

// IsZero tells whether c is no charge of a PSP.
func (c PSPCharge) IsZero() bool { return c == PSPCharge{} }

// validate refuses a PixResponse whose charge is half described.
func (p PixResponse) validate(transactionID string) error {
	if p.PSP.IsZero() {
		return p.Location.validate(transactionID)
	}
	if p.Location.ID != "" || !ValidCobTxID(p.Location.CobTxID) || p.PSP.CreatedAt.IsZero() {
		return fmt.Errorf("%w: a charge made by the PSP needs its txid of %d to %d characters [A-Za-z0-9] and its creation time, and no location of pixgate's",
			ErrInvalidOrder, MinCobTxIDLength, MaxCobTxIDLength)
	}
	return nil
}
