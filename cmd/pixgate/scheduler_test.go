package main

import (
	"testing"
	"time"
)

// A sweep answered from an index waits its interval; one that reads a whole collection on a
// slow store waits sweepShare times what it took, so that the sweeps never keep the store busy
// for more than a small share of the time.
func TestSweepWaitBoundsTheStoreShareOfSweeps(t *testing.T) {
	for _, c := range []struct {
		interval, took, want time.Duration
	}{
		{10 * time.Second, time.Millisecond, 10 * time.Second},
		{500 * time.Millisecond, 2 * time.Millisecond, 500 * time.Millisecond},
		{500 * time.Millisecond, 140 * time.Millisecond, sweepShare * 140 * time.Millisecond},
		{10 * time.Second, 2 * time.Second, sweepShare * 2 * time.Second},
		{10 * time.Second, 0, 10 * time.Second},
	} {
		if got := sweepWait(c.interval, c.took); got != c.want {
			t.Errorf("sweepWait(%s, %s) = %s, want %s", c.interval, c.took, got, c.want)
		}
	}
}
