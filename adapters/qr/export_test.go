package qr

// NewRendererWithDraw lets the tests replace the drawing with a function of their own, to count
// how many drawings run at once without depending on timing.
func NewRendererWithDraw(opts Options, draw func(string) ([]byte, error)) *Renderer {
	r := New(opts)
	r.draw = draw
	return r
}

// Queued is how many calls wait in the queue.
func (r *Renderer) Queued() int { return len(r.jobs) }

// ProcessPID is the drawing process's pid, 0 when none runs.
func ProcessPID(r *ProcessRenderer) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.child == nil {
		return 0
	}
	return r.child.cmd.Process.Pid
}

// Busy is how many calls are in flight, drawing or waiting.
func (r *ProcessRenderer) Busy() int { return len(r.slots) }
