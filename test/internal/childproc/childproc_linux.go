package childproc

import (
	"os/exec"
	"syscall"
)

// Linux sends the signal when the thread that forked the child ends. The Go runtime never ends
// its threads, except one a goroutine locked (runtime.LockOSThread) and left locked at its
// end, which no caller does.
func dieWithParent(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
}
