package qr_test

import (
	"context"
	"testing"

	"github.com/pixgate/pixgate/adapters/qr"
	"github.com/pixgate/pixgate/adapters/qr/qrtest"
)

// The Renderer's own benchmarks. Its comparison with other QR libraries lives in the test
// module (test/qrbench), so that those libraries never enter the product's go.mod; each image
// is decoded once before timing, so a faster drawing cannot win by being unreadable.

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
