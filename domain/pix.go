package domain

import "time"

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
	URI       string      // BR Code payload
	QRCodePNG []byte      // PNG image whose QR code decodes to URI
	ExpiresAt time.Time   // creation time plus expirationSeconds
	Location  PixLocation // a dynamic code's payload location; zero for a static code
}
