package hostload

import (
	"syscall"
	"testing"
	"time"
)

// rusageCPU is the process's user + system CPU time from getrusage(2), a
// reading independent of /proc/self/stat (what the package reads).
func rusageCPU(t *testing.T) time.Duration {
	t.Helper()
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatalf("getrusage: %v", err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
