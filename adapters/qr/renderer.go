package qr

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image/png"
	"runtime"
	"sync"
	"time"

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

// DefaultQueuePerWorker is how many RenderPNG calls may wait per worker when Options.Queue is
// not set: at about 1.5 ms a drawing, a wait of about 50 ms at most.
const DefaultQueuePerWorker = 32

// idleWorker is how long a worker without work waits before it ends (and its thread with it);
// the next call starts one again.
const idleWorker = 10 * time.Second

// Options tune a Renderer.
type Options struct {
	// Workers is how many images are drawn at once; 0 or less: runtime.GOMAXPROCS(0).
	// Drawing is pure CPU work: more at once than there are processors only holds more memory.
	Workers int
	// Queue is how many RenderPNG calls may wait for a worker beyond the ones being drawn; one
	// more answers ports.ErrOverloaded at once, so that a creation never waits without bound.
	// 0 or less: DefaultQueuePerWorker per worker.
	Queue int
	// Background draws on threads of the lowest scheduling priority (on Linux, nice 19: each
	// worker keeps an OS thread of its own), so that drawings take only the CPU time that the
	// rest of the process and the machine leave: a lookup arriving while every worker draws
	// gets a core at once. The Go scheduler must have a processor to spare for it: run with
	// GOMAXPROCS above Workers (pixgate serve raises it by Workers). Elsewhere than Linux the
	// threads keep the process's priority.
	Background bool
	// Timeout bounds one RenderPNG call, its wait for a worker included: past it the call
	// answers ports.ErrTimedOut and the worker drops the job if it has not begun it (one it
	// has begun, it finishes; a drawing in this process is a few milliseconds of CPU, which
	// only a starved machine stretches). 0 or less: no bound but the caller's context. The
	// drawing process (ProcessRenderer) has a deadline of its own, and a watchdog.
	Timeout time.Duration
}

// Renderer draws QR codes with github.com/skip2/go-qrcode on a bounded pool of workers fed by a
// bounded queue. It is safe for concurrent use.
type Renderer struct {
	workers    int
	background bool
	timeout    time.Duration
	timedOut   error    // what a call answers past timeout
	jobs       chan job // the queue: buffered, Queue long
	draw       func(content string) ([]byte, error)

	mu      sync.Mutex
	running int // workers started and not ended
}

// job is one RenderPNG call handed to a worker.
type job struct {
	ctx     context.Context
	content string
	done    chan result // buffered: the worker never waits for a caller that left
}

type result struct {
	png []byte
	err error
}

// NewRenderer returns a renderer that draws at most maxConcurrent images at once (0 or less:
// runtime.GOMAXPROCS(0)) at the process's priority, with the default queue.
func NewRenderer(maxConcurrent int) *Renderer {
	return New(Options{Workers: maxConcurrent})
}

// New returns a renderer tuned by opts.
func New(opts Options) *Renderer {
	if opts.Workers <= 0 {
		opts.Workers = runtime.GOMAXPROCS(0)
	}
	if opts.Queue <= 0 {
		opts.Queue = DefaultQueuePerWorker * opts.Workers
	}
	// The pool keeps the encoders' compression state (about 1 MB each) from one image to the
	// next; the workers bound how many are in use. Default compression writes the same bytes
	// as the best one for these images, in two thirds of the time.
	enc := &png.Encoder{CompressionLevel: png.DefaultCompression, BufferPool: &encoderPool{}}
	return &Renderer{
		workers: opts.Workers, background: opts.Background, jobs: make(chan job, opts.Queue),
		timeout: opts.Timeout, timedOut: timedOut(opts.Timeout),
		draw: func(content string) ([]byte, error) { return drawPNG(enc, content) },
	}
}

// timedOut is what a drawing answers when it did not end within d.
func timedOut(d time.Duration) error {
	return fmt.Errorf("%w: the QR code was not drawn within %v", ports.ErrTimedOut, d)
}

// Workers is how many images the renderer draws at once.
func (r *Renderer) Workers() int { return r.workers }

// RenderPNG draws content as a QR code in a PNG image. It waits for a worker, and gives up with
// ctx.Err() if the context ends first, or with ports.ErrTimedOut past Options.Timeout; when the
// queue of waiting calls is full it answers ports.ErrOverloaded at once. Content must be ASCII
// and fit a QR code (at most 2331 bytes at this error correction level); other content gives
// ErrContent.
func (r *Renderer) RenderPNG(ctx context.Context, content string) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := checkContent(content); err != nil {
		return nil, err
	}
	if r.timeout > 0 {
		// The job carries the bounded context, so that a worker skips it once it expired.
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, r.timeout, r.timedOut)
		defer cancel()
	}
	j := job{ctx: ctx, content: content, done: make(chan result, 1)}
	select {
	case r.jobs <- j:
	default:
		return nil, fmt.Errorf("%w: %d QR drawings are already waiting", ports.ErrOverloaded, cap(r.jobs))
	}
	r.startWorker()
	select {
	case res := <-j.done:
		return res.png, res.err
	case <-ctx.Done():
		// The caller's own end (context.Canceled, DeadlineExceeded) or the timeout's cause;
		// the worker skips the job.
		return nil, context.Cause(ctx)
	}
}

// startWorker starts a worker unless all of them run already.
func (r *Renderer) startWorker() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.running < r.workers {
		r.running++
		go r.work()
	}
}

// work draws queued jobs until none came for idleWorker. A background worker keeps its OS
// thread to itself for its whole life, at the lowest priority; the thread ends with it, so no
// other goroutine ever runs at that priority.
func (r *Renderer) work() {
	if r.background {
		runtime.LockOSThread() // never unlocked: the thread exits with the goroutine
		lowerThreadPriority()
	}
	idle := time.NewTimer(idleWorker)
	defer idle.Stop()
	for {
		select {
		case j := <-r.jobs:
			if j.ctx.Err() != nil {
				continue // its caller left
			}
			png, err := r.draw(j.content)
			j.done <- result{png, err}
			idle.Reset(idleWorker)
		case <-idle.C:
			if r.stop() {
				return
			}
			idle.Reset(idleWorker)
		}
	}
}

// stop ends an idle worker unless a job came meanwhile: a caller that queued it after the
// worker's last look and found every worker running counts on this one.
func (r *Renderer) stop() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.jobs) > 0 {
		return false
	}
	r.running--
	return true
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
