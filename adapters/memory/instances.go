package memory

import (
	"context"
	"sync"
	"time"

	"github.com/pixgate/pixgate/ports"
)

// Instances is the registry of live instances of a memory store. A memory store lives in one
// process, so in practice one instance registers and Heartbeat answers 1; it still keeps
// whatever registers, as the port says. Safe for concurrent use.
type Instances struct {
	mu   sync.Mutex
	seen map[string]time.Time
}

var _ ports.InstanceRegistry = (*Instances)(nil)

// NewInstances returns an empty registry.
func NewInstances() *Instances { return &Instances{seen: map[string]time.Time{}} }

// Heartbeat records id at now, forgets the instances silent for longer than ttl and counts
// the others.
func (r *Instances) Heartbeat(_ context.Context, id string, now time.Time, ttl time.Duration) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.seen[id] = now
	for other, at := range r.seen {
		if now.Sub(at) > ttl {
			delete(r.seen, other)
		}
	}
	return len(r.seen), nil
}

// Leave forgets id.
func (r *Instances) Leave(_ context.Context, id string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.seen, id)
	return nil
}
