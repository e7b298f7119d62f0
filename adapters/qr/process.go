package qr

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os/exec"
	"strconv"
	"sync"
	"time"

	"github.com/pixgate/pixgate/ports"
)

var _ ports.QRRenderer = (*ProcessRenderer)(nil)

// ProcessOptions tune a ProcessRenderer.
type ProcessOptions struct {
	// Command is the drawing process's program and arguments: a program that calls
	// LowerProcessPriority and ServeWorker on its standard input and output (pixgate
	// qr-worker). The renderer adds one last argument, how many calls it may have in flight,
	// for the process's Renderer (WorkerOptions). It is started with an environment of
	// GOMAXPROCS=Workers alone: nothing of the parent's (secrets included) reaches it.
	Command []string
	// Workers is how many images the process draws at once (its GOMAXPROCS); 0 or less: 1.
	Workers int
	// Queue is how many RenderPNG calls may wait beyond the ones being drawn; one more answers
	// ports.ErrOverloaded at once. 0 or less: DefaultQueuePerWorker per worker.
	Queue int
	// Stderr receives the process's standard error (a crash's trace); nil discards it.
	Stderr io.Writer
	// Timeout is a drawing's deadline, from the moment its call is handed to the process
	// (waiting in the process's queue included) to its answer. Past it the call answers
	// ports.ErrTimedOut; if the process answered nothing meanwhile, the watchdog kills it (it
	// is stopped or stuck, and so is every call behind this one: those answer
	// ports.ErrOverloaded) and starts another. 0 or less: DefaultTimeout.
	Timeout time.Duration
	// Log receives a warning each time the watchdog kills the process; nil discards it.
	Log *slog.Logger
}

// DefaultTimeout is ProcessOptions.Timeout when none is set: thousands of times a drawing's few
// milliseconds, and well within the time a client waits for a creation.
const DefaultTimeout = 10 * time.Second

// ProcessRenderer draws QR codes in a child process of its own, started at the lowest
// priority. A drawing allocates about 400 KB of short-lived memory: drawn in the serving
// process at a thousand creations a second, that is some twenty collections a second, whose
// marking takes a core from requests for a few milliseconds each time, and the lookups' tail
// latency follows (docs/PERFORMANCE.md). In a process of its own, the drawings' memory is
// collected there, by a collector that runs at the drawings' priority, and the serving
// process collects only what requests allocate. The cost is a pipe round trip per image (tens
// of microseconds) and one more process (a few MiB).
//
// The process is started by Start or by the first RenderPNG, and again after it ends (at most
// once a second): the calls in flight when it ends answer ports.ErrOverloaded, so that their
// creations are refused with nothing stored and may be retried. A call that gets no answer
// within ProcessOptions.Timeout answers ports.ErrTimedOut, and a watchdog kills a process that
// answered nothing in that time (SIGKILL, which ends a stopped process too) and starts
// another, so that a process that stopped answering never holds a request longer than that.
// It is safe for concurrent use.
type ProcessRenderer struct {
	opts     ProcessOptions
	slots    chan struct{} // one per call in flight (drawing or waiting), Workers+Queue
	timedOut error         // what a call answers past opts.Timeout

	mu        sync.Mutex
	child     *child // nil when none runs
	lastStart time.Time
	nextID    uint32
	closed    bool
}

// child is one run of the drawing process.
type child struct {
	cmd  *exec.Cmd
	in   io.WriteCloser
	wmu  sync.Mutex
	w    *bufio.Writer
	done chan struct{} // closed once the process is gone and every pending call answered

	mu       sync.Mutex
	pending  map[uint32]*call // guarded by mu; nil once the process is gone
	answered time.Time        // guarded by mu: when the process last answered a call

	kill sync.Once // the watchdog's: one kill and one warning per process
}

// call is one drawing handed to the process. Whoever removes it from pending (its answer,
// its deadline, or the end of the process) answers it on done and gives back its slot.
type call struct {
	done     chan result // buffered: nobody waits for a caller that left
	sent     time.Time
	deadline *time.Timer // nil for a call without a deadline (Start's)
}

// restartAfter is the least time between two starts of the drawing process.
const restartAfter = time.Second

// processGone bounds how long the watchdog waits for a killed process to be gone.
const processGone = 5 * time.Second

// errProcessEnded is what the calls in flight answer when the drawing process ends.
var errProcessEnded = fmt.Errorf("%w: the QR drawing process ended", ports.ErrOverloaded)

// NewProcessRenderer returns a renderer drawing in a child process run by opts.Command. It
// starts nothing yet.
func NewProcessRenderer(opts ProcessOptions) (*ProcessRenderer, error) {
	if len(opts.Command) == 0 {
		return nil, errors.New("qr: the drawing process needs a command")
	}
	opts.Workers = max(opts.Workers, 1)
	if opts.Queue <= 0 {
		opts.Queue = DefaultQueuePerWorker * opts.Workers
	}
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	return &ProcessRenderer{opts: opts, slots: make(chan struct{}, opts.Workers+opts.Queue), timedOut: timedOut(opts.Timeout)}, nil
}

// Workers is how many images the process draws at once.
func (r *ProcessRenderer) Workers() int { return r.opts.Workers }

// InFlight is how many calls the process may have at once, drawing or waiting.
func (r *ProcessRenderer) InFlight() int { return cap(r.slots) }

// Start starts the drawing process and draws one image with it, so that a command that
// cannot run is found at once rather than at the first creation. That first image, which pays
// for the process's start, may take as long as ctx allows: it has no deadline of its own.
func (r *ProcessRenderer) Start(ctx context.Context) error {
	r.mu.Lock()
	_, err := r.running()
	r.mu.Unlock()
	if err != nil {
		return err
	}
	_, err = r.render(ctx, "pixgate", 0)
	return err
}

// RenderPNG draws content as a QR code in a PNG image, as Renderer.RenderPNG does, in the
// drawing process; past ProcessOptions.Timeout it answers ports.ErrTimedOut.
func (r *ProcessRenderer) RenderPNG(ctx context.Context, content string) ([]byte, error) {
	return r.render(ctx, content, r.opts.Timeout)
}

// render draws with a deadline of timeout; 0: none.
func (r *ProcessRenderer) render(ctx context.Context, content string, timeout time.Duration) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := checkContent(content); err != nil {
		return nil, err
	}
	if len(content) > maxContent {
		// Past what any QR code holds; the process would take the frame for a broken stream.
		return nil, fmt.Errorf("%w: %d bytes is more than a QR code holds", ErrContent, len(content))
	}
	select {
	case r.slots <- struct{}{}:
	default:
		return nil, fmt.Errorf("%w: %d QR drawings are already under way or waiting", ports.ErrOverloaded, cap(r.slots))
	}
	done, err := r.send(content, timeout)
	if err != nil {
		<-r.slots
		return nil, err
	}
	select {
	case res := <-done:
		return res.png, res.err
	case <-ctx.Done():
		// The slot stays taken until the answer comes (or the deadline, or the end of the
		// process): the process is drawing it still, and the bound is on the process's work.
		// The answer goes to done, which is buffered, and nobody reads it.
		return nil, ctx.Err()
	}
}

// send hands content to the running process (starting one if needed) and returns where its
// answer will come, with the slot then the answerer's to give back. On failure the caller's
// slot is the caller's to give back. The deadline, when there is one, starts before the
// request is written: a stopped process whose pipe is full blocks the write, and only the
// watchdog's kill ends it.
func (r *ProcessRenderer) send(content string, timeout time.Duration) (chan result, error) {
	r.mu.Lock()
	c, err := r.running()
	r.nextID++
	id := r.nextID
	r.mu.Unlock()
	if err != nil {
		return nil, err
	}
	cl := &call{done: make(chan result, 1), sent: time.Now()}
	c.mu.Lock()
	if c.pending == nil {
		c.mu.Unlock()
		return nil, errProcessEnded
	}
	c.pending[id] = cl
	if timeout > 0 {
		cl.deadline = time.AfterFunc(timeout, func() { r.expire(c, id) })
	}
	c.mu.Unlock()
	c.wmu.Lock()
	err = writeRequest(c.w, request{id: id, content: content})
	c.wmu.Unlock()
	if err != nil {
		// A process that cannot be written to is ended; its reader then answers every pending
		// call, this one included, and gives back their slots.
		_ = c.cmd.Process.Kill()
	}
	return cl.done, nil
}

// answer gives a call its result and its slot back.
func (r *ProcessRenderer) answer(cl *call, res result) {
	if cl.deadline != nil {
		cl.deadline.Stop()
	}
	<-r.slots
	cl.done <- res
}

// expire is call id's deadline: it got no answer from process c in time, and answers
// ports.ErrTimedOut. It is also the watchdog: when the process has answered nothing since the
// call was sent, it is stopped or stuck, and every call behind this one would wait as long, so
// it is killed (its reader then fails the calls still pending and forgets it) before the call
// answers, and another is started. A process that answered meanwhile is slow, not stuck (a
// machine whose other work leaves its lowest priority little CPU): it keeps its other calls.
func (r *ProcessRenderer) expire(c *child, id uint32) {
	c.mu.Lock()
	cl, ok := c.pending[id]
	delete(c.pending, id)
	silent := ok && !c.answered.After(cl.sent)
	c.mu.Unlock()
	if !ok {
		return // answered meanwhile, or the process ended
	}
	if silent {
		r.kill(c)
	}
	// Its slot comes back now even if the process draws it still: the process's own queue,
	// as long as the slots, refuses what would go past it.
	r.answer(cl, result{err: r.timedOut})
}

// kill ends a process that stopped answering, waits until it is forgotten, so that the retry
// the caller's answer invites starts another, and starts that other at once.
func (r *ProcessRenderer) kill(c *child) {
	c.kill.Do(func() {
		if r.opts.Log != nil {
			r.opts.Log.Warn("the QR drawing process answered nothing within a drawing's deadline: killed and started again",
				slog.Int("pid", c.cmd.Process.Pid), slog.Duration("timeout", r.opts.Timeout))
		}
		_ = c.cmd.Process.Kill() // SIGKILL ends a stopped process too
		go func() {
			<-c.done
			r.mu.Lock()
			defer r.mu.Unlock()
			if r.child == nil && !r.closed {
				// An error (a start within restartAfter, a command that no longer runs) is
				// the next call's to meet: it tries again.
				_, _ = r.running()
			}
		}()
	})
	gone := time.NewTimer(processGone)
	defer gone.Stop()
	select {
	case <-c.done:
	case <-gone.C: // a kill that did not end the process in time: answer all the same
	}
}

// running returns the running process, starting one when none runs. r.mu is held.
func (r *ProcessRenderer) running() (*child, error) {
	if r.closed {
		return nil, errors.New("qr: the renderer is closed")
	}
	if r.child != nil {
		return r.child, nil
	}
	if since := time.Since(r.lastStart); !r.lastStart.IsZero() && since < restartAfter {
		return nil, fmt.Errorf("%w: the QR drawing process is restarting", ports.ErrOverloaded)
	}
	r.lastStart = time.Now()
	c, err := r.start()
	if err != nil {
		return nil, err
	}
	r.child = c
	return c, nil
}

// start runs the command with its pipes and the reader of its answers.
func (r *ProcessRenderer) start() (*child, error) {
	args := append(r.opts.Command[1:len(r.opts.Command):len(r.opts.Command)], strconv.Itoa(cap(r.slots)))
	cmd := exec.Command(r.opts.Command[0], args...)
	cmd.Env = []string{"GOMAXPROCS=" + strconv.Itoa(r.opts.Workers)}
	cmd.Stderr = r.opts.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("qr: the drawing process: %w", err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		in.Close()
		return nil, fmt.Errorf("qr: the drawing process: %w", err)
	}
	if err := cmd.Start(); err != nil {
		in.Close()
		return nil, fmt.Errorf("qr: starting the drawing process %q: %w", r.opts.Command[0], err)
	}
	c := &child{cmd: cmd, in: in, w: bufio.NewWriter(in), done: make(chan struct{}), pending: map[uint32]*call{}}
	go r.read(c, bufio.NewReader(out))
	return c, nil
}

// read hands each answer to its caller and gives back its slot; when the process's output
// ends it fails the calls still pending and forgets the process.
func (r *ProcessRenderer) read(c *child, out *bufio.Reader) {
	for {
		a, err := readAnswer(out)
		if err != nil {
			break
		}
		c.mu.Lock()
		cl, ok := c.pending[a.id]
		delete(c.pending, a.id)
		c.answered = time.Now()
		c.mu.Unlock()
		if !ok {
			continue // an id never sent, or one whose deadline passed: not ours to count
		}
		r.answer(cl, a.result())
	}
	c.in.Close() // a process whose output broke is not trusted with more input
	_ = c.cmd.Wait()
	r.mu.Lock()
	if r.child == c {
		r.child = nil
	}
	r.mu.Unlock()
	c.mu.Lock()
	pending := c.pending
	c.pending = nil
	c.mu.Unlock()
	for _, cl := range pending {
		r.answer(cl, result{err: errProcessEnded})
	}
	close(c.done)
}

func (a answer) result() result {
	switch a.status {
	case statusOK:
		return result{png: a.body}
	case statusContent:
		return result{err: fmt.Errorf("%w: %s", ErrContent, a.body)}
	case statusOverloaded:
		return result{err: fmt.Errorf("%w: %s", ports.ErrOverloaded, a.body)}
	}
	return result{err: fmt.Errorf("qr: the drawing process: %s", a.body)}
}

// Close ends the drawing process: its input closes, it finishes the drawings under way and
// exits; after ctx ends it is killed. Calls after Close fail.
func (r *ProcessRenderer) Close(ctx context.Context) error {
	r.mu.Lock()
	r.closed = true
	c := r.child
	r.mu.Unlock()
	if c == nil {
		return nil
	}
	c.wmu.Lock()
	err := c.in.Close()
	c.wmu.Unlock()
	select {
	case <-c.done:
	case <-ctx.Done():
		_ = c.cmd.Process.Kill()
		<-c.done
		return fmt.Errorf("qr: the drawing process did not end in time: %w", ctx.Err())
	}
	return err
}
