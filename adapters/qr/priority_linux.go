package qr

import "syscall"

// lowerThreadPriority gives the calling OS thread the lowest scheduling priority, nice 19. On
// Linux the nice value belongs to each thread, not to the process; raising it needs no
// privilege. A failure leaves the thread as it was: drawings then merely compete as equals.
func lowerThreadPriority() {
	_ = syscall.Setpriority(syscall.PRIO_PROCESS, syscall.Gettid(), 19)
}
