package qrtest

import (
	"bytes"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"strings"
	"testing"

	qrcode "github.com/skip2/go-qrcode"
)

// encodePNG draws each content as a QR code, side by side on one white image.
func encodePNG(t *testing.T, contents ...string) []byte {
	t.Helper()
	img := image.NewGray(image.Rect(0, 0, 200*max(len(contents), 1), 200))
	draw.Draw(img, img.Bounds(), &image.Uniform{color.White}, image.Point{}, draw.Src)
	for i, c := range contents {
		q, err := qrcode.New(c, qrcode.Medium)
		if err != nil {
			t.Fatal(err)
		}
		sym := q.Image(200)
		draw.Draw(img, sym.Bounds().Add(image.Pt(200*i, 0)), sym, image.Point{}, draw.Src)
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestReadZbar(t *testing.T) {
	zbarimg := Zbarimg(t)
	cases := []struct {
		name     string
		png      []byte
		want     string
		wantFail string
	}{
		{"one code reads as its text", encodePNG(t, "pixgate"), "pixgate", ""},
		{"an image without a code is refused", encodePNG(t), "", "found 0 QR codes"},
		{"an image with two codes is refused", encodePNG(t, "one", "two"), "", "found 2 QR codes"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := readZbar(zbarimg, tc.png)
			if tc.wantFail != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantFail) {
					t.Fatalf("readZbar: %q, %v; want an error saying %q", got, err, tc.wantFail)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("readZbar: %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

func TestReadAgreesWithBothReaders(t *testing.T) {
	const text = "00020126580014br.gov.bcb.pix0136123e4567-e12b-12d1-a456-4266554400005204000053039865802BR5913Fulano de Tal6008BRASILIA62070503***63041D3D"
	r := Read(t, encodePNG(t, text))
	if r.Text != text || r.GozxingMiss != nil {
		t.Fatalf("Read: %+v, want %q read by both", r, text)
	}
}
