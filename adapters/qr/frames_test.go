package qr

import (
	"bufio"
	"bytes"
	"testing"
)

// FuzzFrames feeds arbitrary bytes to both frame readers of the drawing process: they never
// panic nor allocate past their bounds, and whatever they read writes back to the same bytes.
func FuzzFrames(f *testing.F) {
	var seed bytes.Buffer
	w := bufio.NewWriter(&seed)
	_ = writeRequest(w, request{id: 7, content: "00020126"})
	f.Add(seed.Bytes())
	seed.Reset()
	_ = writeAnswer(w, answer{id: 9, status: statusContent, body: []byte("too long")})
	f.Add(seed.Bytes())
	f.Add([]byte{0, 0, 0, 1, 0xff, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, b []byte) {
		if q, err := readRequest(bufio.NewReader(bytes.NewReader(b))); err == nil {
			var out bytes.Buffer
			if err := writeRequest(bufio.NewWriter(&out), q); err != nil || !bytes.HasPrefix(b, out.Bytes()) {
				t.Fatalf("request %+v wrote %x back, not a prefix of %x (%v)", q, out.Bytes(), b, err)
			}
		}
		if a, err := readAnswer(bufio.NewReader(bytes.NewReader(b))); err == nil {
			var out bytes.Buffer
			if err := writeAnswer(bufio.NewWriter(&out), a); err != nil || !bytes.HasPrefix(b, out.Bytes()) {
				t.Fatalf("answer %+v wrote %x back, not a prefix of %x (%v)", a, out.Bytes(), b, err)
			}
		}
	})
}

func TestFramesRefuseLengthsPastTheirBounds(t *testing.T) {
	var b bytes.Buffer
	w := bufio.NewWriter(&b)
	if err := writeRequest(w, request{id: 1, content: string(make([]byte, maxContent+1))}); err != nil {
		t.Fatal(err)
	}
	if _, err := readRequest(bufio.NewReader(&b)); err == nil {
		t.Fatal("a request past maxContent was read")
	}
	b.Reset()
	if err := writeAnswer(w, answer{id: 1, body: make([]byte, maxAnswer+1)}); err != nil {
		t.Fatal(err)
	}
	if _, err := readAnswer(bufio.NewReader(&b)); err == nil {
		t.Fatal("an answer past maxAnswer was read")
	}
}
