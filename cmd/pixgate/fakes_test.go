package main

// The hand-written fakes these tests plug into the wired service, one of each: a clock, a
// resolver for the webhook sender, and a ledger that fails. The remote systems the service
// talks to over the network (an acquirer's API, a merchant's webhook receiver) run as real
// servers beside the tests that use them.

import (
	"context"
	"errors"
	"net/netip"
	"sync"
	"time"

	"github.com/pixgate/pixgate/ports"
)

// fakeClock is the wall clock plus an offset the test moves, so that charges expire without
// waiting; with at set, it is stopped at that instant (plus the offset).
type fakeClock struct {
	mu     sync.Mutex
	offset time.Duration
	at     time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.at.IsZero() {
		return c.at.Add(c.offset)
	}
	return time.Now().UTC().Add(c.offset)
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.offset += d
	c.mu.Unlock()
}

// fakeResolver answers every name with its addresses and counts the look-ups.
type fakeResolver struct {
	addrs []netip.Addr
	mu    sync.Mutex
	asked int
}

// loopbackResolver answers every name with 127.0.0.1: no test request leaves the machine.
func loopbackResolver() *fakeResolver {
	return &fakeResolver{addrs: []netip.Addr{netip.MustParseAddr("127.0.0.1")}}
}

func (r *fakeResolver) LookupNetIP(context.Context, string, string) ([]netip.Addr, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.asked++
	return r.addrs, nil
}

var errLedgerDown = errors.New("ledger down")

// failingLedger is a store's ledger whose list of ledgers fails with errLedgerDown.
type failingLedger struct{ ports.Ledger }

func (failingLedger) Ledgers(context.Context) ([]string, error) { return nil, errLedgerDown }

var _ ports.Clock = (*fakeClock)(nil)
