package qr

import (
	"os"
	"strconv"
	"syscall"
	"unsafe"
)

// lowerThreadPriority gives the calling OS thread the lowest scheduling priority, nice 19. On
// Linux the nice value belongs to each thread, not to the process; raising it needs no
// privilege. A failure leaves the thread as it was: drawings then merely compete as equals.
func lowerThreadPriority() {
	_ = syscall.Setpriority(syscall.PRIO_PROCESS, syscall.Gettid(), 19)
}

// LowerProcessPriority gives every thread of the calling process the lowest scheduling
// priority: the SCHED_IDLE policy, under which a thread runs only when no thread of a normal
// policy wants its core, and which a normal thread that wakes preempts at once, and nice 19
// (SCHED_IDLE ignores it; it is there for a reader of ps, and in case the policy is refused).
// It applies to the threads running now, read from /proc/self/task, and so every later one,
// which a thread of the process creates and which inherits its creator's nice value. A thread
// created during the listing by one not yet lowered is caught by listing again until a listing
// shows no new thread. The drawing process calls it first thing.
func LowerProcessPriority() error {
	seen := map[int]bool{}
	for range 10 {
		tasks, err := os.ReadDir("/proc/self/task")
		if err != nil {
			return err
		}
		lowered := 0
		for _, t := range tasks {
			tid, err := strconv.Atoi(t.Name())
			if err != nil || seen[tid] {
				continue
			}
			seen[tid] = true
			lowered++
			// A thread that ended since the listing is not an error.
			if err := syscall.Setpriority(syscall.PRIO_PROCESS, tid, 19); err != nil && err != syscall.ESRCH {
				return err
			}
			if err := setIdlePolicy(tid); err != nil && err != syscall.ESRCH {
				return err
			}
		}
		if lowered == 0 {
			return nil
		}
	}
	return nil
}

// schedIdle is Linux's SCHED_IDLE scheduling policy (sched.h).
const schedIdle = 5

// setIdlePolicy gives thread tid the SCHED_IDLE policy. Lowering a thread's policy needs no
// privilege.
func setIdlePolicy(tid int) error {
	var param struct{ priority int32 } // sched_param: 0, as SCHED_IDLE requires
	if _, _, e := syscall.RawSyscall(syscall.SYS_SCHED_SETSCHEDULER, uintptr(tid), schedIdle, uintptr(unsafe.Pointer(&param))); e != 0 {
		return e
	}
	return nil
}
