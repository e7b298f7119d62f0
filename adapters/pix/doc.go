// Package pix is the built-in PIX emitter: it writes BR Codes ("Pix copia e cola"), the EMV
// QR code payloads that Banco Central do Brasil's "Manual de Padrões para Iniciação do Pix"
// defines, and derives the payload's txid from a transaction id and back.
//
// The Emitter is the sandbox acquirer: it produces static single-use charges for a configured
// PIX key without calling anyone. A real acquirer's adapter would live in its own package and
// may reuse Payload for the code it gets back.
//
// This package knows the BR Code format and the charge it is given, nothing else: not the
// transaction's state machine, not how the code is drawn as an image (package qr), not storage
// or HTTP. It must not import another adapter.
package pix
