// Package porttest wraps ports with a fault injector for tests: a use case's tests run on a
// real store (adapters/memory) and still see the failures, delays and races a database
// brings, without a hand-written copy of the store.
//
// A wrapper passes every call to the port it wraps after asking its Faults what to do with
// it: fail the nth call of a method with a given error, delay it, run a hook first (to stage
// a race), and count every call. It knows the ports and the domain only, never an adapter.
package porttest
