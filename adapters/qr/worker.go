package qr

import (
	"bufio"
	"context"
	"errors"
	"io"
	"runtime"
	"sync"

	"github.com/pixgate/pixgate/ports"
)

// ServeWorker is the drawing process's side of ProcessRenderer: it reads requests from in,
// draws each with r, and writes the answers to out, until in ends. It then waits for the
// drawings under way and answers nil; a malformed request ends it with an error. The parent
// bounds the calls in flight to its Workers plus Queue: give r at least that queue
// (WorkerOptions). Call LowerProcessPriority first, so that the whole process, its collector
// included, runs at the lowest priority.
func ServeWorker(in io.Reader, out io.Writer, r *Renderer) error {
	br, bw := bufio.NewReader(in), bufio.NewWriter(out)
	var wmu sync.Mutex
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		q, err := readRequest(br)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		wg.Go(func() {
			a := answer{id: q.id}
			png, err := r.RenderPNG(context.Background(), q.content)
			switch {
			case err == nil:
				a.body = png
			case errors.Is(err, ErrContent):
				a.status, a.body = statusContent, []byte(err.Error())
			case errors.Is(err, ports.ErrOverloaded):
				a.status, a.body = statusOverloaded, []byte(err.Error())
			default:
				a.status, a.body = statusFailed, []byte(err.Error())
			}
			wmu.Lock()
			defer wmu.Unlock()
			_ = writeAnswer(bw, a) // a parent that left reads nothing more; in ends next
		})
	}
}

// WorkerOptions are the drawing process's Renderer options for a parent whose calls in flight
// are at most inFlight: as many workers as the process has processors (the parent sets its
// GOMAXPROCS), the rest queued.
func WorkerOptions(inFlight int) Options {
	w := runtime.GOMAXPROCS(0)
	return Options{Workers: w, Queue: max(inFlight-w, 1)}
}
