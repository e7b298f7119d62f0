package qr

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image/png"
	"runtime"
	"sync"

	qrcode "github.com/skip2/go-qrcode"

	"github.com/pixgate/pixgate/ports"
)

var _ ports.QRRenderer = (*Renderer)(nil)

// ModulePixels is the side, in pixels, of one QR module in the PNG, drawn with the standard
// quiet zone of 4 modules around the symbol. At 4 the longest BR Code the sandbox emits (235
// characters, version 11, 61 modules) is a 276-pixel square of 948 bytes: large enough to scan
// from a screen at its natural size, small enough to store with the transaction, which must stay
// under 4 KiB with the image in base64. 4 also compresses better than 3, since a module is then
// half a byte of a 1-bit PNG row; 8 would cost about 20% more bytes. See BENCHMARKS.md.
const ModulePixels = 4

// level is the error correction level: Medium (about 15% of the symbol may be lost) tolerates
// glare and screen moiré on phones at a modest cost in size, the common choice for PIX codes.
const level = qrcode.Medium

// ErrContent reports content the renderer refuses to draw.
var ErrContent = errors.New("qr: cannot draw this content")

// Renderer draws QR codes with github.com/skip2/go-qrcode, at most a fixed number at a time.
// It is safe for concurrent use.
type Renderer struct {
	slots chan struct{} // a buffered slot per concurrent drawing
	draw  func(content string) ([]byte, error)
}

// NewRenderer returns a renderer that draws at most maxConcurrent images at once, or
// runtime.GOMAXPROCS(0) when maxConcurrent <= 0: drawing is pure CPU work, so more at once
// than there are processors only adds memory held by images in progress.
func NewRenderer(maxConcurrent int) *Renderer {
	if maxConcurrent <= 0 {
		maxConcurrent = runtime.GOMAXPROCS(0)
	}
	// The pool keeps the encoders' compression state (about 1 MB each) from one image to the
	// next; the slots bound how many are in use. Default compression writes the same bytes as
	// the best one for these images, in two thirds of the time.
	enc := &png.Encoder{CompressionLevel: png.DefaultCompression, BufferPool: &encoderPool{}}
	return &Renderer{
		slots: make(chan struct{}, maxConcurrent),
		draw:  func(content string) ([]byte, error) { return drawPNG(enc, content) },
	}
}

// RenderPNG draws content as a QR code in a PNG image. It waits for a free slot, and gives up
// with ctx.Err() if the context ends first. Content must be ASCII and fit a QR code (at most 2331
// bytes at this error correction level); other content gives ErrContent.
func (r *Renderer) RenderPNG(ctx context.Context, content string) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := checkContent(content); err != nil {
		return nil, err
	}
	select {
	case r.slots <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	defer func() { <-r.slots }()
	return r.draw(content)
}

// checkContent refuses empty content and anything outside ASCII: go-qrcode writes bytes without
// an ECI header naming their character set, and readers disagree on the default (ISO 8859-1 or
// UTF-8), so only ASCII decodes to exactly the same text with every reader, as the port promises.
func checkContent(content string) error {
	if content == "" {
		return fmt.Errorf("%w: it is empty", ErrContent)
	}
	for i := 0; i < len(content); i++ {
		if content[i] >= 0x80 {
			return fmt.Errorf("%w: byte %d is not ASCII", ErrContent, i)
		}
	}
	return nil
}

// drawPNG draws with go-qrcode but encodes the PNG itself: go-qrcode's own PNG method builds a
// new compressor for every image.
func drawPNG(enc *png.Encoder, content string) ([]byte, error) {
	q, err := qrcode.New(content, level)
	if err != nil {
		// The library's error says what went wrong (content too long); its type stays here.
		return nil, fmt.Errorf("%w: %v", ErrContent, err)
	}
	// A negative size is pixels per module; the image is a 2-colour palette, written as a
	// 1-bit PNG.
	img := q.Image(-ModulePixels)
	var buf bytes.Buffer
	buf.Grow(2048)
	if err := enc.Encode(&buf, img); err != nil {
		return nil, fmt.Errorf("qr: writing the PNG: %v", err)
	}
	// The image is stored with its transaction: hand back exactly its bytes, not the buffer's
	// spare capacity.
	return bytes.Clone(buf.Bytes()), nil
}

// encoderPool lends png.Encoder its buffers through a sync.Pool.
type encoderPool struct{ p sync.Pool }

func (e *encoderPool) Get() *png.EncoderBuffer {
	b, _ := e.p.Get().(*png.EncoderBuffer)
	return b
}

func (e *encoderPool) Put(b *png.EncoderBuffer) { e.p.Put(b) }
