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
