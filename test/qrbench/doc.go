// Package qrbench compares pixgate's QR renderer (adapters/qr, github.com/skip2/go-qrcode) with
// other Go QR libraries (rsc.io/qr, github.com/boombuler/barcode) in the same run. It lives in
// the test module so that the libraries it compares never enter the product's go.mod; the
// figures are in adapters/qr/BENCHMARKS.md.
package qrbench
