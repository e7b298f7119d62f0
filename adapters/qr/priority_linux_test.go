package qr_test

import (
	"context"
	"runtime"
	"syscall"
	"testing"

	"github.com/pixgate/pixgate/adapters/qr"
)

// threadPriority is the calling thread's priority as Linux's getpriority answers it: 20 minus
// the nice value (nice 19 is 1).
func threadPriority(t *testing.T) int {
	p, err := syscall.Getpriority(syscall.PRIO_PROCESS, syscall.Gettid())
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestBackgroundRendererDrawsAtTheLowestPriority(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	caller := threadPriority(t)
	if caller <= 1 {
		t.Skip("the test already runs at nice 19: nothing lower to see")
	}
	for _, background := range []bool{false, true} {
		var drawing int
		r := qr.NewRendererWithDraw(qr.Options{Workers: 1, Background: background}, func(string) ([]byte, error) {
			drawing = threadPriority(t)
			return []byte("png"), nil
		})
		if _, err := r.RenderPNG(context.Background(), "x"); err != nil {
			t.Fatal(err)
		}
		want := caller
		if background {
			want = 1
		}
		if drawing != want {
			t.Errorf("background %v: drawn at priority %d, want %d (the caller's is %d)", background, drawing, want, caller)
		}
	}
	if got := threadPriority(t); got != caller {
		t.Fatalf("the caller's thread moved from priority %d to %d", caller, got)
	}
}
