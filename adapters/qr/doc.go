// Package qr draws QR codes as small PNG images, for the BR Codes a transaction shows its payer.
//
// It knows QR codes and PNG, and bounds how many images it draws at once, since drawing is the
// costliest step of creating a transaction. It does not know what the content means (BR Code,
// PIX, transactions), where the image goes, or how it is encoded for JSON. It must not import
// another adapter.
package qr
