package qr

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// The drawing process (ProcessRenderer, ServeWorker) speaks frames over its standard input and
// output, each a fixed header and a body:
//
//	request:  id uint32 | length uint32 | content (length bytes: a BR Code)
//	answer:   id uint32 | status uint8 | length uint32 | body (length bytes: the PNG, or an error's text)
//
// in big-endian order. Ids let answers come back in any order; each request has exactly one
// answer.

// Answer statuses.
const (
	statusOK         byte = 0 // the body is the PNG
	statusContent    byte = 1 // ErrContent; the body says why
	statusOverloaded byte = 2 // the worker's own queue was full
	statusFailed     byte = 3 // any other failure; the body says what
)

// maxContent bounds a request's content: a QR code holds at most 2,331 bytes at this level, so
// anything longer is refused before it is read, as is a length the peer got wrong.
const maxContent = 4096

// maxAnswer bounds an answer's body: the largest PNG this renderer draws is a few KiB.
const maxAnswer = 1 << 20

type request struct {
	id      uint32
	content string
}

type answer struct {
	id     uint32
	status byte
	body   []byte
}

func writeRequest(w *bufio.Writer, q request) error {
	var h [8]byte
	binary.BigEndian.PutUint32(h[0:], q.id)
	binary.BigEndian.PutUint32(h[4:], uint32(len(q.content)))
	if _, err := w.Write(h[:]); err != nil {
		return err
	}
	if _, err := w.WriteString(q.content); err != nil {
		return err
	}
	return w.Flush()
}

// readRequest reads one request; a clean end of input before a frame is io.EOF.
func readRequest(r *bufio.Reader) (request, error) {
	var h [8]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		return request{}, err
	}
	n := binary.BigEndian.Uint32(h[4:])
	if n > maxContent {
		return request{}, fmt.Errorf("qr worker: a request of %d bytes (at most %d)", n, maxContent)
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(r, b); err != nil {
		return request{}, unexpected(err)
	}
	return request{id: binary.BigEndian.Uint32(h[0:]), content: string(b)}, nil
}

func writeAnswer(w *bufio.Writer, a answer) error {
	var h [9]byte
	binary.BigEndian.PutUint32(h[0:], a.id)
	h[4] = a.status
	binary.BigEndian.PutUint32(h[5:], uint32(len(a.body)))
	if _, err := w.Write(h[:]); err != nil {
		return err
	}
	if _, err := w.Write(a.body); err != nil {
		return err
	}
	return w.Flush()
}

func readAnswer(r *bufio.Reader) (answer, error) {
	var h [9]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		return answer{}, err
	}
	n := binary.BigEndian.Uint32(h[5:])
	if n > maxAnswer {
		return answer{}, fmt.Errorf("qr: the drawing process answered %d bytes (at most %d)", n, maxAnswer)
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(r, b); err != nil {
		return answer{}, unexpected(err)
	}
	return answer{id: binary.BigEndian.Uint32(h[0:]), status: h[4], body: b}, nil
}

// unexpected turns an end of input inside a frame into io.ErrUnexpectedEOF.
func unexpected(err error) error {
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}
