package moneycheck

import (
	"context"
	"sync"
	"time"
)

// pace keeps the clients that read and withdraw in step with the payers of their account, on a
// store of any speed: on the memory store a reader would otherwise make all its reads before
// the first charge is paid, and judge nothing. Each of them makes its next operation only
//   - while a payment of the account is under way: the moment a change half made would show,
//     so they go as fast as they can;
//   - or while it is within its share of the payers' progress: its bound of operations spread
//     over the operations the payers are expected to make;
//
// and it stops once every payer of the account has stopped. Waiting is for one of these
// conditions to change, or for the run's end.
type pace struct {
	mu       sync.Mutex
	changed  chan struct{} // closed and replaced at every change
	events   int           // operations the payers ended
	paying   int           // payments under way
	payers   int           // payers still working
	expected int           // operations the payers are expected to make in all
}

func newPace(payers, expected int) *pace {
	return &pace{changed: make(chan struct{}), payers: payers, expected: max(expected, 1)}
}

// update changes the state under the lock and wakes the waiters.
func (p *pace) update(change func()) {
	p.mu.Lock()
	defer p.mu.Unlock()
	change()
	close(p.changed)
	p.changed = make(chan struct{})
}

func (p *pace) ended()         { p.update(func() { p.events++ }) }
func (p *pace) paymentBegins() { p.update(func() { p.paying++ }) }
func (p *pace) paymentEnds()   { p.update(func() { p.paying--; p.events++ }) }
func (p *pace) payerStops()    { p.update(func() { p.payers-- }) }

// slack is how many operations a reader or withdrawer makes before the payers made any: the
// empty balance and the refusals of an empty account belong to a history too.
const slack = 4

// next waits until a client that made done of its bound operations may make the next one, and
// tells whether it may: false once the payers have all stopped, or the run's time or context
// is over.
func (p *pace) next(ctx context.Context, deadline time.Time, done, bound int) bool {
	timer := time.NewTimer(time.Until(deadline))
	defer timer.Stop()
	for {
		if ctx.Err() != nil || !time.Now().Before(deadline) {
			return false
		}
		p.mu.Lock()
		stopped, paying := p.payers == 0, p.paying > 0
		share := done*p.expected <= (p.events+slack)*bound
		changed := p.changed
		p.mu.Unlock()
		switch {
		case stopped:
			return false
		case paying || share:
			return true
		}
		select {
		case <-changed:
		case <-timer.C:
			return false
		case <-ctx.Done():
			return false
		}
	}
}
