// Package childproc makes the processes a test or the load harness starts die with it. Each
// caller also stops its children when it ends (t.Cleanup, a deferred stop); this covers the
// cases where those never run: a test binary that panics at its -timeout, or a process killed.
package childproc

import "os/exec"

// DieWithParent asks the kernel to kill cmd's process (SIGKILL) when the process that starts
// it exits, whatever the way. Call it before cmd.Start. Where the system has no such request
// (anything but Linux) it does nothing, and only the caller's own stop remains.
func DieWithParent(cmd *exec.Cmd) { dieWithParent(cmd) }
