// Package browser drives the hosted payment page in a real browser: Debian's Chromium,
// headless, through the DevTools protocol (chromedp), against a `pixgate serve` child process
// on loopback with the sandbox on. It lives in the test module so that chromedp stays out of
// the product's go.mod.
//
// Without Chromium (/usr/bin/chromium, or PIXGATE_TEST_CHROMIUM) the test skips, unless
// PIXGATE_TEST_REQUIRE_BROWSER=1 (CI sets it), which turns the skip into a failure. Its
// screenshots go to PIXGATE_TEST_ARTIFACTS when set, else to the test's temporary directory
// (the log names them).
package browser
