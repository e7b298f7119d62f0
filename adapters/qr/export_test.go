package qr

// NewRendererWithDraw lets the tests replace the drawing with a function of their own, to count
// how many drawings run at once without depending on timing.
func NewRendererWithDraw(maxConcurrent int, draw func(string) ([]byte, error)) *Renderer {
	r := NewRenderer(maxConcurrent)
	r.draw = draw
	return r
}

// Slots is the renderer's bound on concurrent drawings.
func (r *Renderer) Slots() int { return cap(r.slots) }
