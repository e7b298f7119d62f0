// Package qr draws QR codes as small PNG images, for the BR Codes a transaction shows its payer.
//
// It knows QR codes and PNG, and bounds how many images it draws at once, since drawing is the
// costliest step of creating a transaction, and how long a caller waits for one: a deadline per
// drawing, and in the drawing process a watchdog that kills and replaces a process that stopped
// answering. It does not know what the content means (BR Code,
// PIX, transactions), where the image goes, or how it is encoded for JSON. It must not import
// another adapter.
package qr
