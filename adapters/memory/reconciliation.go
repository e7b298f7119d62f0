package memory

import (
	"context"
	"sync"
	"time"

	"github.com/pixgate/pixgate/ports"
)

// Reconciliations keeps the reconciliation's state of a memory store: one value behind a
// mutex, which makes each call atomic. Safe for concurrent use.
type Reconciliations struct {
	mu    sync.Mutex
	state ports.ReconciliationState
}

var _ ports.Reconciliations = (*Reconciliations)(nil)

// NewReconciliations returns the state of a store that never reconciled.
func NewReconciliations() *Reconciliations { return &Reconciliations{} }

// ReconciliationState answers the state.
func (r *Reconciliations) ReconciliationState(context.Context) (ports.ReconciliationState, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.state, nil
}

// HoldReconciliation makes holder the holder until until, unless another holds it at now.
func (r *Reconciliations) HoldReconciliation(_ context.Context, holder string, now, until time.Time) (bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.state.Holder != "" && r.state.Holder != holder && r.state.HeldUntil.After(now) {
		return false, nil
	}
	r.state.Holder, r.state.HeldUntil = holder, until.UTC()
	return true, nil
}

// CompleteReconciliation stores reached, when later, and ends holder's hold.
func (r *Reconciliations) CompleteReconciliation(_ context.Context, holder string, reached time.Time) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.state.Holder != holder {
		return ports.ErrReconciliationNotHeld
	}
	if reached.After(r.state.Reached) {
		r.state.Reached = reached.UTC()
	}
	r.state.Holder, r.state.HeldUntil = "", time.Time{}
	return nil
}

// ReleaseReconciliation ends holder's hold.
func (r *Reconciliations) ReleaseReconciliation(_ context.Context, holder string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.state.Holder != holder {
		return ports.ErrReconciliationNotHeld
	}
	r.state.Holder, r.state.HeldUntil = "", time.Time{}
	return nil
}
