package jwtauth

import (
	"crypto/sha256"
	"testing"
	"time"
)

func TestVerifiedCacheStaysWithinItsSize(t *testing.T) {
	now := time.Date(2031, 1, 1, 0, 0, 0, 0, time.UTC)
	c := newVerifiedCache(100)
	for i := range 1000 {
		k := sha256.Sum256([]byte{byte(i), byte(i >> 8)})
		c.put(k, verifiedEntry{validUntil: now.Add(time.Hour)}, now)
		if n := c.len(); n > 100 {
			t.Fatalf("after %d insertions the cache holds %d entries", i+1, n)
		}
	}
	last := sha256.Sum256([]byte{byte(999 % 256), byte(999 >> 8)})
	if _, ok := c.get(last); !ok {
		t.Fatal("the newest entry was evicted")
	}
}

func TestVerifiedCacheSweepsExpiredEntriesFirst(t *testing.T) {
	now := time.Date(2031, 1, 1, 0, 0, 0, 0, time.UTC)
	c := newVerifiedCache(4)
	live := sha256.Sum256([]byte("live"))
	c.put(live, verifiedEntry{validUntil: now.Add(time.Hour)}, now)
	for i := range 3 {
		c.put(sha256.Sum256([]byte{byte(i)}), verifiedEntry{validUntil: now.Add(time.Second)}, now)
	}
	c.put(sha256.Sum256([]byte("new")), verifiedEntry{validUntil: now.Add(time.Hour)}, now.Add(time.Minute))
	if _, ok := c.get(live); !ok {
		t.Fatal("a live entry went while expired ones could have made room")
	}
	if n := c.len(); n != 2 {
		t.Fatalf("cache holds %d entries, want the 2 live ones", n)
	}
}
