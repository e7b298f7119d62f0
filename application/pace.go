package application

import "time"

// SweepShare bounds the share of the store's time that one background job's sweeps may take
// where nothing else bounds their pace: after a sweep that took d, the job waits SweepShare
// times d, within the limits of its Pace. A store that answers a sweep from an index
// (MongoDB, the memory store) does so in a millisecond or so and the job's Interval rules.
// One that reads the whole collection for it (FerretDB v1 on SQLite pushes down no filter but
// one on _id alone) would otherwise spend a growing part of its time on sweeps that find
// nothing, at the expense of every request. The five or six jobs and pollers of an instance,
// each at most a hundredth, stay near a twentieth of the store's time together, as long as no
// Bound cuts a wait short.
const SweepShare = 100

// Pace spaces the sweeps of a background job (expiry, ledger recovery, the sandbox's
// settling, a webhook dispatcher's poll, any outbox added later): how long to wait after one
// sweep before the next. Each job paces itself on its own sweeps only, so that no job ever
// waits behind another's cost; and no wait exceeds Bound, so that work that is due is acted on
// within Bound plus the time the store takes to answer the sweep, however slow the store is.
//
//   - After a sweep that found work, the job looks again after SweepShare times that sweep's
//     duration, or Interval if that is sooner: more may be due where it came from, so a backlog
//     drains batch after batch, nearly at once on a fast store, never slower than Interval.
//   - After a sweep that found nothing (or failed), the job looks again after Interval, or
//     SweepShare times the sweep's duration when that is longer (a slow store), but never after
//     more than Bound. Where Bound cuts the wait short, the job's idle sweeps take more than a
//     SweepShare-th of the store's time: the bound on the delay wins over the store's share.
//     Only a sweep that itself took longer than Bound makes the job wait that long instead, so
//     that a job finding nothing never keeps the store busy more than half the time.
type Pace struct {
	// Interval is the usual wait between sweeps on a store that answers at once.
	Interval time.Duration
	// Bound is the longest wait after any sweep (Interval when it is less), unless the sweep
	// itself took longer.
	Bound time.Duration
}

// Next is the wait after a sweep that took took and found work or not.
func (p Pace) Next(took time.Duration, found bool) time.Duration {
	stretched := SweepShare * max(took, 0)
	if found {
		return min(stretched, p.Interval)
	}
	return min(max(p.Interval, stretched), max(p.Bound, p.Interval, took))
}
