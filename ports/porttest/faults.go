package porttest

import (
	"context"
	"maps"
	"sync"
	"time"
)

// Faults decides what happens to the calls of the wrappers that share it, and counts them by
// method name ("CreateAccount", "Update"...). The zero value injects nothing; it is safe for
// concurrent use.
//
// A rule set for the nth call of a method counts from when it is set: Fail("Get", 1, err)
// fails the next call of Get, and only that one. n = 0 applies the rule to every call from
// then on, and method "" to every method (n = 0 only).
type Faults struct {
	mu    sync.Mutex
	calls map[string]int
	rules []rule
}

type rule struct {
	method string
	at     int // the call count of method at which it applies; 0 = every call
	act    func(context.Context) error
}

// Fail makes the nth call of method (every call when n is 0) answer err without reaching the
// port.
func (f *Faults) Fail(method string, n int, err error) {
	f.on(method, n, func(context.Context) error { return err })
}

// FailAll makes every call of every method answer err, until Clear.
func (f *Faults) FailAll(err error) { f.Fail("", 0, err) }

// Delay holds the nth call of method (every call when n is 0) for d before it reaches the
// port, or until its context ends, whose error it then answers.
func (f *Faults) Delay(method string, n int, d time.Duration) {
	f.on(method, n, func(ctx context.Context) error {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	})
}

// Before runs fn just before the nth call of method (every call when n is 0) reaches the
// port, outside any lock, to stage a race: a change made through the wrapped port in fn is
// what a concurrent writer would have done.
func (f *Faults) Before(method string, n int, fn func()) {
	f.on(method, n, func(context.Context) error { fn(); return nil })
}

func (f *Faults) on(method string, n int, act func(context.Context) error) {
	if n < 0 || (method == "" && n != 0) {
		panic("porttest: a rule applies to the nth call of a named method, or to every call")
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	at := 0
	if n > 0 {
		at = f.calls[method] + n
	}
	f.rules = append(f.rules, rule{method: method, at: at, act: act})
}

// Clear drops every rule; the counts stay.
func (f *Faults) Clear() {
	f.mu.Lock()
	f.rules = nil
	f.mu.Unlock()
}

// Calls counts the calls of method so far, failed ones included.
func (f *Faults) Calls(method string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[method]
}

// Counts returns the count of every method called so far.
func (f *Faults) Counts() map[string]int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return maps.Clone(f.calls)
}

// ResetCalls sets every count back to zero; rules for an nth call keep their place.
func (f *Faults) ResetCalls() {
	f.mu.Lock()
	defer f.mu.Unlock()
	kept := f.rules[:0]
	for _, r := range f.rules {
		if r.at > 0 {
			if r.at -= f.calls[r.method]; r.at <= 0 {
				continue // its call is past
			}
		}
		kept = append(kept, r)
	}
	f.rules, f.calls = kept, nil
}

// enter counts a call of method and applies the rules that match it, in the order they were
// set; the first error ends the call.
func (f *Faults) enter(ctx context.Context, method string) error {
	if f == nil {
		return nil
	}
	f.mu.Lock()
	if f.calls == nil {
		f.calls = map[string]int{}
	}
	f.calls[method]++
	n := f.calls[method]
	var acts []func(context.Context) error
	for _, r := range f.rules {
		if (r.method == "" || r.method == method) && (r.at == 0 || r.at == n) {
			acts = append(acts, r.act)
		}
	}
	f.mu.Unlock()
	for _, act := range acts {
		if err := act(ctx); err != nil {
			return err
		}
	}
	return nil
}
