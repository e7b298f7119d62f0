package main

import (
	"io"
	"sync"
	"time"
)

// The serving process's log is batched: every request writes an access log line, and one
// write(2) per line cost about a tenth of a GET /transaction/{id}'s CPU in the load harness
// (docs/PERFORMANCE.md). Lines are gathered in memory and written at least every
// logFlushEvery, as soon as logBufferBytes are waiting, and at once when serve returns. What
// a crash can lose is the last logFlushEvery of lines (the runtime writes a panic's own trace
// straight to standard error).
const (
	logFlushEvery  = 50 * time.Millisecond
	logBufferBytes = 32 << 10
)

// logBuffer is an io.Writer that batches writes to w (see above). Safe for concurrent use.
type logBuffer struct {
	w    io.Writer
	done chan struct{}
	wg   sync.WaitGroup

	mu      sync.Mutex
	buf     []byte
	stopped bool // writes go straight to w
}

// startLogBuffer batches writes to w until stop is called.
func startLogBuffer(w io.Writer) *logBuffer {
	b := &logBuffer{w: w, done: make(chan struct{}), buf: make([]byte, 0, logBufferBytes)}
	b.wg.Go(func() {
		t := time.NewTicker(logFlushEvery)
		defer t.Stop()
		for {
			select {
			case <-b.done:
				return
			case <-t.C:
				b.flush()
			}
		}
	})
	return b
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.stopped {
		return b.w.Write(p)
	}
	b.buf = append(b.buf, p...)
	if len(b.buf) >= logBufferBytes {
		b.flushLocked()
	}
	return len(p), nil
}

func (b *logBuffer) flush() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.flushLocked()
}

// flushLocked writes what waits. A failed write is dropped: a log that cannot be written has
// nobody to tell, and slog's own writer would have dropped it too.
func (b *logBuffer) flushLocked() {
	if len(b.buf) == 0 {
		return
	}
	_, _ = b.w.Write(b.buf)
	if cap(b.buf) > 4*logBufferBytes {
		b.buf = make([]byte, 0, logBufferBytes) // one huge line does not keep its memory
	} else {
		b.buf = b.buf[:0]
	}
}

// stop ends the periodic writes and writes what is left; later writes go straight to w.
func (b *logBuffer) stop() {
	close(b.done)
	b.wg.Wait()
	b.mu.Lock()
	defer b.mu.Unlock()
	b.flushLocked()
	b.stopped = true
}
