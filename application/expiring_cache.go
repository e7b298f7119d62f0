package application

import (
	"sync"
	"time"
)

// expiringCache is the one cache type behind AuthCache and CachingVerifier: a map of at most
// size entries, each answered only until the time it was stored with. When it is full, expired
// entries are swept and, if that freed too little, arbitrary entries (map order) go until a
// quarter of the room is free: one O(size) sweep pays for size/4 insertions, and a hit costs
// no bookkeeping at all.
//
// forget drops entries and counts a change; putUnchanged stores only when no change was
// counted since the read it stores began (generation), so that a read in flight during a
// change never stores what the change made stale. Safe for concurrent use.
type expiringCache[K comparable, V any] struct {
	size int

	mu      sync.RWMutex
	entries map[K]expiring[V]
	changes uint64
}

type expiring[V any] struct {
	value V
	until time.Time // answered while now is before it
}

func newExpiringCache[K comparable, V any](size int) *expiringCache[K, V] {
	return &expiringCache[K, V]{size: size, entries: make(map[K]expiring[V], min(size, 1024))}
}

// get answers k's value if it is stored and now is before its expiry.
func (c *expiringCache[K, V]) get(k K, now time.Time) (V, bool) {
	c.mu.RLock()
	e, ok := c.entries[k]
	c.mu.RUnlock()
	if !ok || !now.Before(e.until) {
		var zero V
		return zero, false
	}
	return e.value, true
}

// generation is the count of changes so far, to pass to putUnchanged.
func (c *expiringCache[K, V]) generation() uint64 {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.changes
}

// put stores v for k until until; now is the time of the insertion, which decides what has
// expired when room must be made.
func (c *expiringCache[K, V]) put(k K, v V, until, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.store(k, v, until, now)
}

// putUnchanged is put, unless a change was forgotten since generation was read.
func (c *expiringCache[K, V]) putUnchanged(k K, v V, until, now time.Time, generation uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.changes != generation {
		return
	}
	c.store(k, v, until, now)
}

func (c *expiringCache[K, V]) store(k K, v V, until, now time.Time) {
	if _, ok := c.entries[k]; !ok && len(c.entries) >= c.size {
		for key, e := range c.entries {
			if !now.Before(e.until) {
				delete(c.entries, key)
			}
		}
		keep := c.size - max(1, c.size/4)
		for key := range c.entries {
			if len(c.entries) <= keep {
				break
			}
			delete(c.entries, key)
		}
	}
	c.entries[k] = expiring[V]{value: v, until: until}
}

// forget drops the entries that match and counts a change.
func (c *expiringCache[K, V]) forget(match func(K, V) bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.changes++
	for k, e := range c.entries {
		if match(k, e.value) {
			delete(c.entries, k)
		}
	}
}

// len is how many entries are held, expired ones included until they are swept.
func (c *expiringCache[K, V]) len() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.entries)
}
