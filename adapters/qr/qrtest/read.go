package qrtest

import (
	"bytes"
	"encoding/base64"
	"encoding/xml"
	"errors"
	"fmt"
	"image/png"
	"os"
	"os/exec"
	"testing"

	"github.com/makiuchi-d/gozxing"
	zxqr "github.com/makiuchi-d/gozxing/qrcode"
)

const (
	// EnvRequireZbar set to 1 turns a missing zbarimg into a failure rather than a skip.
	EnvRequireZbar = "PIXGATE_TEST_REQUIRE_ZBAR"
	// EnvZbarimg names the zbarimg program; empty: zbarimg on the PATH.
	EnvZbarimg = "PIXGATE_TEST_ZBARIMG"
)

// Reading is what the two readers made of one image.
type Reading struct {
	// Text is the one QR code's text, as zbar read it (and gozxing, unless it missed).
	Text string
	// GozxingMiss is why gozxing found no code in the image; nil when it read Text too.
	GozxingMiss error
}

// Read reads the one QR code in a PNG with zbar and with gozxing, and fails tb unless zbar
// finds exactly one QR code and gozxing reads the same text or finds none. Without zbarimg it
// skips tb (fails it with PIXGATE_TEST_REQUIRE_ZBAR=1). It is safe for concurrent use.
func Read(tb testing.TB, pngBytes []byte) Reading {
	tb.Helper()
	zbarimg := Zbarimg(tb)
	img, err := png.Decode(bytes.NewReader(pngBytes))
	if err != nil {
		tb.Fatalf("not a PNG: %v", err)
	}
	text, err := readZbar(zbarimg, pngBytes)
	if err != nil {
		tb.Fatalf("zbar: %v", err)
	}
	bmp, err := gozxing.NewBinaryBitmapFromImage(img)
	if err != nil {
		tb.Fatalf("gozxing: %v", err)
	}
	res, err := zxqr.NewQRCodeReader().Decode(bmp, nil)
	if err != nil {
		if _, missed := errors.AsType[gozxing.ReaderException](err); missed {
			return Reading{Text: text, GozxingMiss: err}
		}
		tb.Fatalf("gozxing: %v", err)
	}
	if res.GetText() != text {
		tb.Fatalf("the readers disagree: zbar reads\n %q\ngozxing reads\n %q", text, res.GetText())
	}
	return Reading{Text: text}
}

// Decode is Read's text, for tests that only want that; a gozxing miss is logged.
func Decode(tb testing.TB, pngBytes []byte) string {
	tb.Helper()
	r := Read(tb, pngBytes)
	if r.GozxingMiss != nil {
		tb.Logf("gozxing found no code in this image (zbar read it): %v", r.GozxingMiss)
	}
	return r.Text
}

// Zbarimg is the zbarimg program to run. Without one it skips tb, or fails it when
// PIXGATE_TEST_REQUIRE_ZBAR=1.
func Zbarimg(tb testing.TB) string {
	tb.Helper()
	name := os.Getenv(EnvZbarimg)
	if name == "" {
		name = "zbarimg"
	}
	path, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv(EnvRequireZbar) == "1" {
			tb.Fatalf("zbarimg is required (%s=1) but %q cannot be run: %v; apt-get install -y zbar-tools", EnvRequireZbar, name, err)
		}
		tb.Skipf("no zbarimg to read QR images back (apt-get install -y zbar-tools, or set %s); %s=1 makes this a failure", EnvZbarimg, EnvRequireZbar)
	}
	return path
}

// zbarResult is zbarimg's XML output, reduced to what Read needs.
type zbarResult struct {
	Sources []struct {
		Indexes []struct {
			Symbols []struct {
				Type string `xml:"type,attr"`
				Data struct {
					Format string `xml:"format,attr"`
					Text   string `xml:",chardata"`
				} `xml:"data"`
			} `xml:"symbol"`
		} `xml:"index"`
	} `xml:"source"`
}

// readZbar runs zbarimg on the PNG, with every symbology but QR codes turned off, and returns
// the text of the one QR code it finds.
func readZbar(zbarimg string, pngBytes []byte) (string, error) {
	cmd := exec.Command(zbarimg, "--nodbus", "--xml", "--quiet", "-Sdisable", "-Sqrcode.enable", "-")
	cmd.Stdin = bytes.NewReader(pngBytes)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	// zbarimg exits 4 when it found no code; its XML then says the same.
	if exit, ok := errors.AsType[*exec.ExitError](err); err != nil && !(ok && exit.ExitCode() == 4) {
		return "", fmt.Errorf("%v: %s", err, stderr.Bytes())
	}
	var res zbarResult
	if err := xml.Unmarshal(out, &res); err != nil {
		return "", fmt.Errorf("its output is not its XML (%v): %s", err, out)
	}
	var texts []string
	for _, s := range res.Sources {
		for _, i := range s.Indexes {
			for _, sym := range i.Symbols {
				if sym.Type != "QR-Code" {
					return "", fmt.Errorf("found a %s symbol", sym.Type)
				}
				text := sym.Data.Text
				if sym.Data.Format == "base64" {
					b, err := base64.StdEncoding.DecodeString(text)
					if err != nil {
						return "", fmt.Errorf("its base64 data: %v", err)
					}
					text = string(b)
				}
				texts = append(texts, text)
			}
		}
	}
	if len(texts) != 1 {
		return "", fmt.Errorf("found %d QR codes, want exactly one (%q); %s", len(texts), texts, stderr.Bytes())
	}
	return texts[0], nil
}
