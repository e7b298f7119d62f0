package application

import (
	"crypto/sha256"
	"testing"
	"time"
)

// The cache behind AuthCache and CachingVerifier, keyed as CachingVerifier keys it.

func TestExpiringCacheStaysWithinItsSize(t *testing.T) {
	now := time.Date(2031, 1, 1, 0, 0, 0, 0, time.UTC)
	c := newExpiringCache[[sha256.Size]byte, int](100)
	for i := range 1000 {
		k := sha256.Sum256([]byte{byte(i), byte(i >> 8)})
		c.put(k, i, now.Add(time.Hour), now)
		if n := c.len(); n > 100 {
			t.Fatalf("after %d insertions the cache holds %d entries", i+1, n)
		}
	}
	last := sha256.Sum256([]byte{byte(999 % 256), byte(999 >> 8)})
	if v, ok := c.get(last, now); !ok || v != 999 {
		t.Fatal("the newest entry was evicted")
	}
}

func TestExpiringCacheSweepsExpiredEntriesFirst(t *testing.T) {
	now := time.Date(2031, 1, 1, 0, 0, 0, 0, time.UTC)
	c := newExpiringCache[[sha256.Size]byte, int](4)
	live := sha256.Sum256([]byte("live"))
	c.put(live, 1, now.Add(time.Hour), now)
	for i := range 3 {
		c.put(sha256.Sum256([]byte{byte(i)}), 2, now.Add(time.Second), now)
	}
	c.put(sha256.Sum256([]byte("new")), 3, now.Add(time.Hour), now.Add(time.Minute))
	if _, ok := c.get(live, now.Add(time.Minute)); !ok {
		t.Fatal("a live entry went while expired ones could have made room")
	}
	if n := c.len(); n != 2 {
		t.Fatalf("cache holds %d entries, want the 2 live ones", n)
	}
}

func TestExpiringCacheAnswersOnlyBeforeTheExpiry(t *testing.T) {
	now := time.Date(2031, 1, 1, 0, 0, 0, 0, time.UTC)
	c := newExpiringCache[string, int](4)
	c.put("k", 1, now.Add(time.Second), now)
	if _, ok := c.get("k", now.Add(time.Second-time.Nanosecond)); !ok {
		t.Fatal("a fresh entry missed")
	}
	if _, ok := c.get("k", now.Add(time.Second)); ok {
		t.Fatal("an entry answered at its expiry")
	}
}

func TestExpiringCacheKeepsOutWhatARaceWithAChangeRead(t *testing.T) {
	now := time.Date(2031, 1, 1, 0, 0, 0, 0, time.UTC)
	c := newExpiringCache[string, int](4)
	c.put("a", 1, now.Add(time.Hour), now)
	generation := c.generation()
	c.forget(func(k string, _ int) bool { return k == "a" })
	if _, ok := c.get("a", now); ok {
		t.Fatal("a forgotten entry still answers")
	}
	c.putUnchanged("b", 2, now.Add(time.Hour), now, generation)
	if _, ok := c.get("b", now); ok {
		t.Fatal("a read that began before a change was stored after it")
	}
	c.putUnchanged("b", 2, now.Add(time.Hour), now, c.generation())
	if _, ok := c.get("b", now); !ok {
		t.Fatal("a read after the change was not stored")
	}
}
