package sandbox

import (
	"context"
	"fmt"
	"sync"

	"github.com/pixgate/pixgate/domain"
	"github.com/pixgate/pixgate/ports"
)

// remembered bounds how many devolutions the Acquirer remembers.
const remembered = 10_000

// Acquirer is the sandbox's ports.Acquirer. A refund's devolution answers EM_PROCESSAMENTO:
// the sandbox's settle job completes it after PIXGATE_SANDBOX_SETTLE_SECONDS, as its callback
// would. A late payment's devolution answers DEVOLVIDO at once, with an rtrId in Banco
// Central's format ('D', the sandbox ISPB, the minute, 11 random characters).
//
// Like API Pix, it keeps one devolution per payment and id: a second request with an id used
// before is refused (ports.ErrDevolutionRefused), and Devolution reads back the answer given,
// for as long as the Acquirer remembers it (its last 10,000 devolutions; a restart forgets
// them all, and a devolution it forgot is ports.ErrDevolutionNotFound, so that the outbox asks
// for it again). Safe for concurrent use.
type Acquirer struct {
	clock ports.Clock

	mu      sync.Mutex
	answers map[devolutionKey]ports.DevolutionResult
	order   []devolutionKey // in the order answered: the oldest is forgotten first
}

// devolutionKey names a devolution as API Pix does: the payment and the id.
type devolutionKey struct{ endToEndID, id string }

var _ ports.Acquirer = (*Acquirer)(nil)

// NewAcquirer builds the sandbox acquirer; clock dates its rtrIds.
func NewAcquirer(clock ports.Clock) *Acquirer {
	if clock == nil {
		panic("sandbox.NewAcquirer: a clock is required")
	}
	return &Acquirer{clock: clock, answers: map[devolutionKey]ports.DevolutionResult{}}
}

// RequestDevolution answers d as the sandbox PSP would. A devolution that API Pix would
// refuse (no payment, an id outside 1 to 35 characters [A-Za-z0-9], no amount, an id used
// before for the payment) is refused.
func (a *Acquirer) RequestDevolution(ctx context.Context, d ports.Devolution) (ports.DevolutionResult, error) {
	if err := ctx.Err(); err != nil {
		return ports.DevolutionResult{}, err
	}
	if err := check(d); err != nil {
		return ports.DevolutionResult{}, err
	}
	res := ports.DevolutionResult{Status: ports.DevolutionInProgress}
	if d.Kind == ports.DevolutionLatePayment {
		res = ports.DevolutionResult{Status: ports.DevolutionReturned,
			ReturnID: domain.NewEndToEndID('D', domain.SandboxISPB, a.clock.Now())}
	}
	key := devolutionKey{d.EndToEndID, d.ID}
	a.mu.Lock()
	defer a.mu.Unlock()
	if _, ok := a.answers[key]; ok {
		return ports.DevolutionResult{}, &ports.DevolutionRefusedError{
			Reason: fmt.Sprintf("sandbox acquirer: devolution id %s was used before for this payment", d.ID)}
	}
	if len(a.order) == remembered {
		delete(a.answers, a.order[0])
		a.order = a.order[1:]
	}
	a.answers[key] = res
	a.order = append(a.order, key)
	return res, nil
}

// Devolution answers what RequestDevolution answered for the devolution id of endToEndID.
func (a *Acquirer) Devolution(ctx context.Context, endToEndID, id string) (ports.DevolutionResult, error) {
	if err := ctx.Err(); err != nil {
		return ports.DevolutionResult{}, err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	res, ok := a.answers[devolutionKey{endToEndID, id}]
	if !ok {
		return ports.DevolutionResult{}, fmt.Errorf("sandbox acquirer: devolution %s: %w", id, ports.ErrDevolutionNotFound)
	}
	return res, nil
}

func check(d ports.Devolution) error {
	if d.EndToEndID == "" {
		return &ports.DevolutionRefusedError{Reason: "sandbox acquirer: a devolution needs the payment's endToEndId"}
	}
	if !validID(d.ID) {
		return &ports.DevolutionRefusedError{Reason: fmt.Sprintf("sandbox acquirer: devolution id %q is not 1 to 35 characters [A-Za-z0-9]", d.ID)}
	}
	if d.Amount < 1 {
		return &ports.DevolutionRefusedError{Reason: fmt.Sprintf("sandbox acquirer: devolution %s of %d cents", d.ID, d.Amount)}
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
