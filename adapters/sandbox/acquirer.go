package sandbox

import (
	"context"
	"fmt"
	"sync"

	"github.com/pixgate/pixgate/domain"
	"github.com/pixgate/pixgate/ports"
)

// remembered bounds how many devolutions the Acquirer remembers to answer retries alike.
const remembered = 10_000

// Acquirer is the sandbox's ports.Acquirer. A refund's devolution answers EM_PROCESSAMENTO:
// the sandbox's settle job completes it after PIXGATE_SANDBOX_SETTLE_SECONDS, as its callback
// would. A late payment's devolution answers DEVOLVIDO at once, with an rtrId in Banco
// Central's format ('D', the sandbox ISPB, the minute, 11 random characters).
//
// Idempotent by devolution id: the same id answers the same rtrId for as long as the
// Acquirer remembers it (its last 10,000 devolutions; a retry comes within seconds). Safe for
// concurrent use.
type Acquirer struct {
	clock ports.Clock

	mu      sync.Mutex
	answers map[string]ports.DevolutionResult
	order   []string // ids in the order answered: the oldest is forgotten first
}

var _ ports.Acquirer = (*Acquirer)(nil)

// NewAcquirer builds the sandbox acquirer; clock dates its rtrIds.
func NewAcquirer(clock ports.Clock) *Acquirer {
	if clock == nil {
		panic("sandbox.NewAcquirer: a clock is required")
	}
	return &Acquirer{clock: clock, answers: map[string]ports.DevolutionResult{}}
}

// RequestDevolution answers d as the sandbox PSP would. A devolution that API Pix would
// refuse (no payment, an id outside 1 to 35 characters [A-Za-z0-9], no amount) is an error.
func (a *Acquirer) RequestDevolution(ctx context.Context, d ports.Devolution) (ports.DevolutionResult, error) {
	if err := ctx.Err(); err != nil {
		return ports.DevolutionResult{}, err
	}
	if err := check(d); err != nil {
		return ports.DevolutionResult{}, err
	}
	if d.Kind != ports.DevolutionLatePayment {
		return ports.DevolutionResult{Status: ports.DevolutionInProgress}, nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if res, ok := a.answers[d.ID]; ok {
		return res, nil
	}
	res := ports.DevolutionResult{Status: ports.DevolutionReturned,
		ReturnID: domain.NewEndToEndID('D', domain.SandboxISPB, a.clock.Now())}
	if len(a.order) == remembered {
		delete(a.answers, a.order[0])
		a.order = a.order[1:]
	}
	a.answers[d.ID] = res
	a.order = append(a.order, d.ID)
	return res, nil
}

func check(d ports.Devolution) error {
	if d.EndToEndID == "" {
		return fmt.Errorf("sandbox acquirer: a devolution needs the payment's endToEndId")
	}
	if !validID(d.ID) {
		return fmt.Errorf("sandbox acquirer: devolution id %q is not 1 to 35 characters [A-Za-z0-9]", d.ID)
	}
	if d.Amount < 1 {
		return fmt.Errorf("sandbox acquirer: devolution %s of %d cents", d.ID, d.Amount)
	}
	return nil
}

func validID(id string) bool {
	if len(id) < 1 || len(id) > 35 {
		return false
	}
	for _, c := range id {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9') {
			return false
		}
	}
	return true
}
