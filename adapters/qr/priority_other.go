//go:build !linux

package qr

// lowerThreadPriority does nothing where the system offers no per-thread priority that an
// unprivileged process may lower.
func lowerThreadPriority() {}

// LowerProcessPriority does nothing where the system offers no per-thread priority that an
// unprivileged process may lower.
func LowerProcessPriority() error { return nil }
