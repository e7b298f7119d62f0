// Package qrtest reads QR codes back from PNG images, for the tests of everything that draws
// them: the renderer, the HTTP answers that carry its images, the libraries it is compared with.
//
// Each image is read by two readers that share no code. zbar (Debian's zbar-tools, run as
// zbarimg) is the reference: it must find exactly one QR code, and its text is the reading.
// gozxing (a Go port of ZXing) with its default hints reads the same image beside it, and must
// either agree or find nothing: a different text fails the test. It finds nothing in about 2%
// of the renderer's images (docs/PERFORMANCE.md, "QR codes read back"): having found two
// corners, its finder skips rows towards the third and takes a finder-like run of modules in
// the data for it. That quirk is gozxing's, not the
// image's (the symbol is valid, and zbar reads every one of them), so a test that relied on
// gozxing alone failed now and then.
//
// Without zbarimg the tests that read images skip, saying so, unless
// PIXGATE_TEST_REQUIRE_ZBAR=1 (CI sets it), which makes them fail; PIXGATE_TEST_ZBARIMG names
// another program than the zbarimg on the PATH. The package is for tests only and knows no
// adapter.
package qrtest
