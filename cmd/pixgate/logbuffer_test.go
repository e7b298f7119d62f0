package main

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

// lockedBuffer is a bytes.Buffer safe for the flusher and the test at once.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
	n  int // writes
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.n++
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func TestLogBufferWritesEveryLineInOrderInFewWritesAndSoon(t *testing.T) {
	var out lockedBuffer
	b := startLogBuffer(&out)
	var want strings.Builder
	for i := range 1000 {
		line := fmt.Sprintf("{\"msg\":\"request\",\"n\":%d}\n", i)
		want.WriteString(line)
		if _, err := b.Write([]byte(line)); err != nil {
			t.Fatal(err)
		}
	}
	// Within a few flush periods, without stop, everything is out, in order.
	deadline := time.Now().Add(50 * logFlushEvery)
	for out.String() != want.String() {
		if time.Now().After(deadline) {
			t.Fatalf("after %s: %d of %d bytes written", 50*logFlushEvery, len(out.String()), want.Len())
		}
		time.Sleep(logFlushEvery / 5)
	}
	out.mu.Lock()
	writes := out.n
	out.mu.Unlock()
	if writes > 10 {
		t.Fatalf("1,000 lines took %d writes", writes)
	}
	b.stop()
	// After stop, a line goes out at once (serve's last words).
	if _, err := b.Write([]byte("last\n")); err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(out.String(), "last\n") {
		t.Fatal("a line written after stop waits")
	}
}

func TestLogBufferStopWritesWhatWaits(t *testing.T) {
	var out lockedBuffer
	b := startLogBuffer(&out)
	_, _ = b.Write([]byte("one\n"))
	b.stop()
	if out.String() != "one\n" {
		t.Fatalf("after stop: %q", out.String())
	}
}
