package ports

import (
	"context"
	"time"
)

// InstanceRegistry keeps the live instances of the service that share one store, so that a
// limit meant for the whole service (a request rate) can be divided among them. An instance
// registers under an id of its own, unique in the store, and renews the registration with a
// heartbeat; one that stops renewing drops out after ttl.
type InstanceRegistry interface {
	// Heartbeat records that instance id is alive at now and answers how many instances,
	// itself included, sent a heartbeat within ttl before now (at least 1).
	Heartbeat(ctx context.Context, id string, now time.Time, ttl time.Duration) (int, error)
	// Leave removes instance id, at its shutdown: the others take up its share at their next
	// heartbeat instead of after ttl.
	Leave(ctx context.Context, id string) error
}
