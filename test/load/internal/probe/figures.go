// Package probe holds what test/load/prober prints and the harness reads: the figures of one
// run of timed lookups.
package probe

import (
	"fmt"
	"time"
)

// Figures are the latencies of one prober run.
type Figures struct {
	Requests int           `json:"requests"`
	OK       int           `json:"ok"`
	P50      time.Duration `json:"p50"`
	P99      time.Duration `json:"p99"`
	Max      time.Duration `json:"max"`
	Errors   []string      `json:"errors,omitempty"`
}

func (f Figures) String() string {
	return fmt.Sprintf("%d of %d ok, p50 %s p99 %s max %s %q", f.OK, f.Requests, f.P50, f.P99, f.Max, f.Errors)
}
