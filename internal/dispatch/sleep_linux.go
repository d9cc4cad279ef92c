package dispatch

import (
	"syscall"
	"time"
)

// canSleepPrecisely: nanosleep(2) sleeps the calling thread to within the
// kernel's timer slack, unlike the runtime's timers (whole milliseconds in
// the netpoller when the process is idle).
const canSleepPrecisely = true

// sleepPrecisely blocks the calling thread for about d. It may return early
// (a signal); callers check the time again.
func sleepPrecisely(d time.Duration) {
	ts := syscall.NsecToTimespec(int64(d))
	_ = syscall.Nanosleep(&ts, nil)
}
