package qrbench_test

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
	"github.com/pixgate/pixgate/adapters/qr/qrtest"
)

// The alternatives are drawn the way the Renderer draws: error correction M, ModulePixels per
// module, a 4-module quiet zone, a 1-bit PNG (rsc.io/qr's own PNG writer aside). Each one's
// output is decoded once before timing, so a faster library cannot win by drawing something
// unreadable. BenchmarkRender is the Renderer itself, the baseline of the same run.

// The payloads of adapters/qr's tests: Banco Central's static example, and the longest BR Code
// the sandbox emitter can write (adapters/qr/BENCHMARKS.md describes both).
const (
	short   = "00020126580014br.gov.bcb.pix0136123e4567-e12b-12d1-a456-4266554400005204000053039865802BR5913Fulano de Tal6008BRASILIA62070503***63041D3D"
	longest = "00020101021226990014br.gov.bcb.pix0177maria.aparecida.dos.santos.oliveira.pereiras.financeiro@exemplodominio.com.br5204541153039865409100000.005802BR5925Mercearia e Padaria Boa V6015Sao Jose dos Ca622605227RKE2sawAICsEsyZKHWW6r63045676"
)

var benchPayloads = []struct{ name, content string }{
	{"short", short},
	{"longest", longest},
}

// BenchmarkRender measures the Renderer (github.com/skip2/go-qrcode), the baseline.
func BenchmarkRender(b *testing.B) {
	r := qr.NewRenderer(0)
	ctx := context.Background()
	for _, p := range benchPayloads {
		b.Run(p.name, func(b *testing.B) {
			benchDraw(b, p.content, func(s string) ([]byte, error) { return r.RenderPNG(ctx, s) })
		})
	}
}

// drawRscQR draws with rsc.io/qr, which writes its own 1-bit PNG.
func drawRscQR(s string) ([]byte, error) {
	c, err := rscqr.Encode(s, rscqr.M)
	if err != nil {
		return nil, err
	}
	c.Scale = qr.ModulePixels
	return c.PNG(), nil
}

// drawRscQRSymbol draws the rsc.io/qr symbol into the same 1-bit image and PNG encoding as the
// Renderer: what the Renderer would cost on rsc.io/qr's faster Reed-Solomon encoder. rsc.io/qr
// always uses mask 0 and one mode for the whole text, which the Renderer's go-qrcode does not.
func drawRscQRSymbol(enc *png.Encoder) func(string) ([]byte, error) {
	return func(s string) ([]byte, error) {
		c, err := rscqr.Encode(s, rscqr.M)
		if err != nil {
			return nil, err
		}
		return encodeSymbol(enc, c.Size, c.Black)
	}
}

// drawBoombuler draws with github.com/boombuler/barcode, which gives a bare symbol image; the
// quiet zone, the scaling and the PNG encoding are the Renderer's.
func drawBoombuler(enc *png.Encoder) func(string) ([]byte, error) {
	return func(s string) ([]byte, error) {
		code, err := bbqr.Encode(s, bbqr.M, bbqr.Auto)
		if err != nil {
			return nil, err
		}
		return encodeSymbol(enc, code.Bounds().Dx(), func(x, y int) bool {
			r, _, _, _ := code.At(x, y).RGBA()
			return r == 0
		})
	}
}

// BenchmarkRenderRscQR draws with rsc.io/qr and its own PNG writer.
func BenchmarkRenderRscQR(b *testing.B) { benchEach(b, drawRscQR) }

// BenchmarkRenderRscQRSymbol draws the rsc.io/qr symbol with the Renderer's PNG encoding.
func BenchmarkRenderRscQRSymbol(b *testing.B) { benchEach(b, drawRscQRSymbol(pooledEncoder())) }

// BenchmarkRenderBoombuler draws with github.com/boombuler/barcode and the Renderer's PNG
// encoding.
func BenchmarkRenderBoombuler(b *testing.B) { benchEach(b, drawBoombuler(pooledEncoder())) }

func benchEach(b *testing.B, draw func(string) ([]byte, error)) {
	for _, p := range benchPayloads {
		b.Run(p.name, func(b *testing.B) { benchDraw(b, p.content, draw) })
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
	if got := qrtest.Decode(b, out); got != content {
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

// TestEveryAlternativeDrawsAReadableCode draws each payload once with each library, outside
// benchmarks, so that `go test ./...` keeps the comparison compiling and honest.
func TestEveryAlternativeDrawsAReadableCode(t *testing.T) {
	r := qr.NewRenderer(0)
	draws := map[string]func(string) ([]byte, error){
		"go-qrcode":        func(s string) ([]byte, error) { return r.RenderPNG(context.Background(), s) },
		"rsc.io/qr":        drawRscQR,
		"rsc.io/qr symbol": drawRscQRSymbol(pooledEncoder()),
		"boombuler":        drawBoombuler(pooledEncoder()),
	}
	for name, draw := range draws {
		for _, p := range benchPayloads {
			out, err := draw(p.content)
			if err != nil {
				t.Fatalf("%s, %s: %v", name, p.name, err)
			}
			if got := qrtest.Decode(t, out); got != p.content {
				t.Fatalf("%s, %s: the image decodes to %q", name, p.name, got)
			}
		}
	}
}
