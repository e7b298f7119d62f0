package qr_test

import (
	"bytes"
	"context"
	"image"
	"image/color"
	"image/png"
	"sync"
	"testing"

	bbqr "github.com/boombuler/barcode/qr"
	rscqr "rsc.io/qr"

	"github.com/pixgate/pixgate/adapters/qr"
)

// The alternatives are drawn the way the Renderer draws: error correction M, ModulePixels per
// module, a 4-module quiet zone, a 1-bit PNG (rsc.io/qr's own PNG writer aside). Each one's output is decoded once before timing,
// so a faster library cannot win by drawing something unreadable.

var benchPayloads = []struct{ name, content string }{
	{"short", short},
	{"longest", longest},
}

// BenchmarkRender measures the Renderer (github.com/skip2/go-qrcode), slot taking included.
func BenchmarkRender(b *testing.B) {
	r := qr.NewRenderer(0)
	ctx := context.Background()
	for _, p := range benchPayloads {
		b.Run(p.name, func(b *testing.B) {
			benchDraw(b, p.content, func(s string) ([]byte, error) { return r.RenderPNG(ctx, s) })
		})
	}
}

// BenchmarkRenderParallel shows the throughput of one Renderer shared by every processor, as
// the HTTP handlers share it.
func BenchmarkRenderParallel(b *testing.B) {
	r := qr.NewRenderer(0)
	ctx := context.Background()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := r.RenderPNG(ctx, longest); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// BenchmarkRenderRscQR draws with rsc.io/qr, which writes its own 1-bit PNG.
func BenchmarkRenderRscQR(b *testing.B) {
	for _, p := range benchPayloads {
		b.Run(p.name, func(b *testing.B) {
			benchDraw(b, p.content, func(s string) ([]byte, error) {
				c, err := rscqr.Encode(s, rscqr.M)
				if err != nil {
					return nil, err
				}
				c.Scale = qr.ModulePixels
				return c.PNG(), nil
			})
		})
	}
}

// BenchmarkRenderRscQRSymbol draws the rsc.io/qr symbol into the same 1-bit image and PNG
// encoding as the Renderer: what the Renderer would cost on rsc.io/qr's faster Reed-Solomon
// encoder. rsc.io/qr always uses mask 0 and one mode for the whole text, which the Renderer's
// go-qrcode does not.
func BenchmarkRenderRscQRSymbol(b *testing.B) {
	enc := pooledEncoder()
	for _, p := range benchPayloads {
		b.Run(p.name, func(b *testing.B) {
			benchDraw(b, p.content, func(s string) ([]byte, error) {
				c, err := rscqr.Encode(s, rscqr.M)
				if err != nil {
					return nil, err
				}
				return encodeSymbol(enc, c.Size, c.Black)
			})
		})
	}
}

// BenchmarkRenderBoombuler draws with github.com/boombuler/barcode, which gives a bare symbol
// image; the quiet zone, the scaling and the PNG encoding are the Renderer's.
func BenchmarkRenderBoombuler(b *testing.B) {
	enc := pooledEncoder()
	for _, p := range benchPayloads {
		b.Run(p.name, func(b *testing.B) {
			benchDraw(b, p.content, func(s string) ([]byte, error) {
				code, err := bbqr.Encode(s, bbqr.M, bbqr.Auto)
				if err != nil {
					return nil, err
				}
				return encodeSymbol(enc, code.Bounds().Dx(), func(x, y int) bool {
					r, _, _, _ := code.At(x, y).RGBA()
					return r == 0
				})
			})
		})
	}
}

// encodeSymbol writes an n-module symbol as the Renderer does: ModulePixels per module, a
// 4-module quiet zone, a 2-colour palette (a 1-bit PNG), default compression.
func encodeSymbol(enc *png.Encoder, n int, black func(x, y int) bool) ([]byte, error) {
	px := qr.ModulePixels
	img := image.NewPaletted(image.Rect(0, 0, (n+8)*px, (n+8)*px), color.Palette{color.White, color.Black})
	for y := range n {
		for x := range n {
			if !black(x, y) {
				continue
			}
			for dy := range px {
				for dx := range px {
					img.SetColorIndex((x+4)*px+dx, (y+4)*px+dy, 1)
				}
			}
		}
	}
	var buf bytes.Buffer
	err := enc.Encode(&buf, img)
	return buf.Bytes(), err
}

type encoderPool struct{ p sync.Pool }

func (e *encoderPool) Get() *png.EncoderBuffer {
	b, _ := e.p.Get().(*png.EncoderBuffer)
	return b
}

func (e *encoderPool) Put(b *png.EncoderBuffer) { e.p.Put(b) }

func pooledEncoder() *png.Encoder {
	return &png.Encoder{CompressionLevel: png.DefaultCompression, BufferPool: &encoderPool{}}
}

func benchDraw(b *testing.B, content string, draw func(string) ([]byte, error)) {
	out, err := draw(content)
	if err != nil {
		b.Fatal(err)
	}
	if got, _ := decodePNG(b, out); got != content {
		b.Fatalf("the image decodes to %q, want %q", got, content)
	}
	b.ReportAllocs()
	for b.Loop() {
		if out, err = draw(content); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(out)), "png-bytes/op")
}
