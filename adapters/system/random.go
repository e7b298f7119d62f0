package system

import (
	mathrand "math/rand/v2"

	"github.com/pixgate/pixgate/ports"
)

// Random draws from math/rand/v2's source: fast and safe for concurrent use, not for secrets.
type Random struct{}

var _ ports.Random = Random{}

// Float64 returns a number in [0, 1).
func (Random) Float64() float64 { return mathrand.Float64() }
