// Package application holds pixgate's use cases, one per operation: create, list and fetch
// transactions, drive their lifecycle, withdraw, authenticate, notify. A use case reads like the
// paragraph that describes it; it depends on the domain and on ports only, and never knows
// which adapter stands behind a port (HTTP, MongoDB, JWT, the sandbox). Operations that move one
// record by one domain transition are all one use case, Transition; creations that honour an
// idempotency key share createOnce. Scheduling belongs to the process: jobs offer RunOnce and
// the dispatcher Run, and cmd decides when they run.
//
// Every merchant-facing use case takes the caller's domain.Principal and reaches only that
// account's data: another account's resource answers domain.ErrNotFound, like a missing one.
package application

import (
	"errors"
	"fmt"
	"reflect"
)

// Errors of the use cases, for the HTTP adapter's error table.
var (
	// ErrIdempotencyKeyReused: the key was used before with a different request.
	ErrIdempotencyKeyReused = errors.New("idempotency key reused with a different request")
)

// EmissionError reports that the PIX emitter (or the QR renderer) failed. The transaction was
// kept FAILED with the error's text; the request fails.
type EmissionError struct {
	TransactionID string
	Err           error
}

func (e *EmissionError) Error() string {
	return fmt.Sprintf("emitting PIX charge of transaction %s: %v", e.TransactionID, e.Err)
}

func (e *EmissionError) Unwrap() error { return e.Err }

// requirePorts panics when a constructor is handed a nil port: a use case missing a port is
// a wiring mistake, better found at start than on the first request. A typed nil (a nil
// *memory.Store in a ports.TransactionRepository) counts as nil too.
func requirePorts(name string, deps ...any) {
	for i, d := range deps {
		v := reflect.ValueOf(d)
		if d == nil || (v.Kind() == reflect.Pointer || v.Kind() == reflect.Func || v.Kind() == reflect.Map) && v.IsNil() {
			panic(fmt.Sprintf("application.%s: dependency %d is nil", name, i))
		}
	}
}
