package qr_test

import (
	"bytes"
	"context"
	"errors"
	"image/png"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pixgate/pixgate/adapters/qr"
	"github.com/pixgate/pixgate/adapters/qr/qrtest"
	"github.com/pixgate/pixgate/ports"
)

// Payloads written by package pix (its tests hold the same strings). longest is the longest code
// the sandbox emitter can write: a 77-character e-mail key (the DICT maximum), a 25-character
// name, a 15-character city, an amount of 10000000 cents and a 22-character txid.
const (
	short   = "00020126580014br.gov.bcb.pix0136123e4567-e12b-12d1-a456-4266554400005204000053039865802BR5913Fulano de Tal6008BRASILIA62070503***63041D3D"
	longest = "00020101021226990014br.gov.bcb.pix0177maria.aparecida.dos.santos.oliveira.pereiras.financeiro@exemplodominio.com.br5204541153039865409100000.005802BR5925Mercearia e Padaria Boa V6015Sao Jose dos Ca622605227RKE2sawAICsEsyZKHWW6r63045676"
)

func TestRenderPNGDecodesToExactlyItsContent(t *testing.T) {
	cases := []struct {
		name, content string
		maxBytes      int // the stored transaction must stay under 4 KiB with this in base64
	}{
		{"a short BR Code reads back", short, 1024},
		{"the longest BR Code the emitter writes reads back", longest, 1024},
		{"a single character reads back", "x", 1024},
	}
	r := qr.NewRenderer(0)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pngBytes, err := r.RenderPNG(context.Background(), tc.content)
			if err != nil {
				t.Fatalf("RenderPNG: %v", err)
			}
			img, err := png.Decode(bytes.NewReader(pngBytes))
			if err != nil {
				t.Fatalf("not a PNG: %v", err)
			}
			if got := qrtest.Decode(t, pngBytes); got != tc.content {
				t.Fatalf("decoded\n %q\nwant\n %q", got, tc.content)
			}
			if len(pngBytes) > tc.maxBytes {
				t.Errorf("PNG has %d bytes, want at most %d", len(pngBytes), tc.maxBytes)
			}
			// A square of whole modules: a version's 17 + 4v modules and the 4-module quiet zone
			// on each side, each module ModulePixels wide.
			b := img.Bounds()
			modules := b.Dx()/qr.ModulePixels - 8
			if b.Dx() != b.Dy() || b.Dx()%qr.ModulePixels != 0 || modules < 21 || (modules-17)%4 != 0 {
				t.Errorf("image is %dx%d, want a square of (17 + 4v + 8) * %d pixels", b.Dx(), b.Dy(), qr.ModulePixels)
			}
			t.Logf("version %d, %dx%d pixels, %d bytes", (modules-17)/4, b.Dx(), b.Dy(), len(pngBytes))
		})
	}
}

func TestRenderPNGRefusesContentItCannotDraw(t *testing.T) {
	cases := []struct{ name, content string }{
		{"empty content is refused", ""},
		{"non-ASCII content is refused, since readers disagree on its charset", "São Paulo"},
		{"content over a QR code's capacity is refused", strings.Repeat("a", 2332)},
	}
	r := qr.NewRenderer(1)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := r.RenderPNG(context.Background(), tc.content); !errors.Is(err, qr.ErrContent) {
				t.Fatalf("RenderPNG: %v, want ErrContent", err)
			}
		})
	}
}

func TestNewRendererBound(t *testing.T) {
	cases := []struct {
		name string
		max  int
		want int
	}{
		{"a positive bound is kept", 3, 3},
		{"zero means GOMAXPROCS", 0, runtime.GOMAXPROCS(0)},
		{"a negative bound means GOMAXPROCS", -1, runtime.GOMAXPROCS(0)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := qr.NewRenderer(tc.max).Workers(); got != tc.want {
				t.Fatalf("Workers() = %d, want %d", got, tc.want)
			}
		})
	}
}

// gate is a drawing that holds every caller until released, counting how many are inside.
type gate struct {
	inside, peak, calls atomic.Int32
	entered             chan struct{}
	release             chan struct{}
}

func newGate() *gate {
	return &gate{entered: make(chan struct{}), release: make(chan struct{})}
}

func (g *gate) draw(string) ([]byte, error) {
	g.calls.Add(1)
	n := g.inside.Add(1)
	for p := g.peak.Load(); n > p && !g.peak.CompareAndSwap(p, n); p = g.peak.Load() {
	}
	g.entered <- struct{}{}
	<-g.release
	g.inside.Add(-1)
	return []byte("png"), nil
}

func TestRenderPNGDrawsAtMostTheBoundAtOnce(t *testing.T) {
	const bound, callers = 3, 12
	g := newGate()
	r := qr.NewRendererWithDraw(qr.Options{Workers: bound}, g.draw)

	var wg sync.WaitGroup
	errs := make(chan error, callers)
	for range callers {
		wg.Go(func() {
			_, err := r.RenderPNG(context.Background(), "x")
			errs <- err
		})
	}
	// Let the slots fill, then release one drawing per new entry: every caller gets its turn
	// while the others are held, so any excess over the bound shows in the peak.
	for range bound {
		<-g.entered
	}
	for range callers - bound {
		g.release <- struct{}{}
		<-g.entered
	}
	for range bound {
		g.release <- struct{}{}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("RenderPNG: %v", err)
		}
	}
	if got := g.peak.Load(); got != bound {
		t.Fatalf("at most %d drawings ran at once, want exactly the bound %d", got, bound)
	}
	if got := g.calls.Load(); got != callers {
		t.Fatalf("%d drawings, want %d", got, callers)
	}
}

func TestRenderPNGGivesUpWhenTheContextEnds(t *testing.T) {
	t.Run("a caller waiting for a slot gets ctx.Err() when its context is canceled", func(t *testing.T) {
		g := newGate()
		r := qr.NewRendererWithDraw(qr.Options{Workers: 1}, g.draw)
		held := make(chan error, 1)
		go func() {
			_, err := r.RenderPNG(context.Background(), "x")
			held <- err
		}()
		<-g.entered // the only slot is taken

		ctx, cancel := context.WithCancel(context.Background())
		waiting := make(chan error, 1)
		go func() {
			_, err := r.RenderPNG(ctx, "x")
			waiting <- err
		}()
		cancel()
		if err := <-waiting; !errors.Is(err, context.Canceled) {
			t.Fatalf("RenderPNG while waiting: %v, want context.Canceled", err)
		}
		if got := g.calls.Load(); got != 1 {
			t.Fatalf("%d drawings started, want only the one holding the slot", got)
		}
		g.release <- struct{}{}
		if err := <-held; err != nil {
			t.Fatalf("RenderPNG holding the slot: %v", err)
		}
	})
	t.Run("a caller whose deadline passed gets context.DeadlineExceeded", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 0)
		defer cancel()
		if _, err := qr.NewRenderer(1).RenderPNG(ctx, short); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("RenderPNG: %v, want context.DeadlineExceeded", err)
		}
	})
	t.Run("a slot freed by a caller that gave up serves the next one", func(t *testing.T) {
		r := qr.NewRenderer(1)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		for range 3 {
			_, _ = r.RenderPNG(ctx, short)
		}
		if _, err := r.RenderPNG(context.Background(), short); err != nil {
			t.Fatalf("RenderPNG after canceled calls: %v", err)
		}
	})
}

func TestRenderPNGAnswersOverloadedWhenItsQueueIsFull(t *testing.T) {
	const workers, queue = 2, 3
	g := newGate()
	r := qr.NewRendererWithDraw(qr.Options{Workers: workers, Queue: queue}, g.draw)
	var wg sync.WaitGroup
	errs := make(chan error, workers+queue)
	for range workers {
		wg.Go(func() {
			_, err := r.RenderPNG(context.Background(), "x")
			errs <- err
		})
	}
	for range workers {
		<-g.entered // every worker is drawing
	}
	for range queue {
		wg.Go(func() {
			_, err := r.RenderPNG(context.Background(), "x")
			errs <- err
		})
	}
	for i := 0; r.Queued() < queue; i++ {
		if i == 5000 {
			t.Fatalf("%d calls queued after 5 s, want %d", r.Queued(), queue)
		}
		time.Sleep(time.Millisecond)
	}
	_, refused := r.RenderPNG(context.Background(), "x")
	if !errors.Is(refused, ports.ErrOverloaded) {
		t.Fatalf("RenderPNG with %d drawing and %d waiting: %v, want ports.ErrOverloaded", workers, queue, refused)
	}
	if got := g.calls.Load(); got != workers {
		t.Fatalf("%d drawings started, want only the %d workers'", got, workers)
	}
	for range queue {
		g.release <- struct{}{}
		<-g.entered
	}
	for range workers {
		g.release <- struct{}{}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("a call admitted to the queue failed: %v", err)
		}
	}
	t.Run("once the queue drained, calls are admitted again", func(t *testing.T) {
		done := make(chan error, 1)
		go func() {
			_, err := r.RenderPNG(context.Background(), "x")
			done <- err
		}()
		<-g.entered
		g.release <- struct{}{}
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	})
}

func TestRenderPNGAnswersTimedOutPastItsTimeout(t *testing.T) {
	const timeout = 200 * time.Millisecond
	g := newGate()
	r := qr.NewRendererWithDraw(qr.Options{Workers: 1, Timeout: timeout}, g.draw)

	t.Run("a drawing that does not end in time answers ErrTimedOut", func(t *testing.T) {
		start := time.Now()
		done := make(chan error, 1)
		go func() {
			_, err := r.RenderPNG(context.Background(), "x")
			done <- err
		}()
		<-g.entered // drawing, and held there
		select {
		case err := <-done:
			if !errors.Is(err, ports.ErrTimedOut) {
				t.Fatalf("RenderPNG: %v, want ports.ErrTimedOut", err)
			}
			if elapsed := time.Since(start); elapsed < timeout {
				t.Fatalf("answered after %v, before its timeout of %v", elapsed, timeout)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("RenderPNG still waits 10 s after its timeout")
		}
	})
	t.Run("a call that waited for the worker past its timeout answers ErrTimedOut and is never drawn", func(t *testing.T) {
		// The worker still holds the first drawing.
		if _, err := r.RenderPNG(context.Background(), "x"); !errors.Is(err, ports.ErrTimedOut) {
			t.Fatalf("RenderPNG: %v, want ports.ErrTimedOut", err)
		}
		g.release <- struct{}{} // the first drawing ends; the worker skips the expired one
		done := make(chan error, 1)
		go func() {
			_, err := r.RenderPNG(context.Background(), "x")
			done <- err
		}()
		<-g.entered
		g.release <- struct{}{}
		if err := <-done; err != nil {
			t.Fatalf("a call once the worker was free: %v", err)
		}
		if got := g.calls.Load(); got != 2 {
			t.Fatalf("%d drawings, want 2: the expired call must not be drawn", got)
		}
	})
	t.Run("the caller's own end answers as before", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if _, err := r.RenderPNG(ctx, "x"); !errors.Is(err, context.Canceled) {
			t.Fatalf("RenderPNG: %v, want context.Canceled", err)
		}
	})
}
