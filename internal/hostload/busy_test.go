package hostload

import (
	"runtime"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/cause"
	"github.com/llmprobe/llmprobe/internal/testutil"
	"github.com/llmprobe/llmprobe/internal/verdict"
)

// TestBusyLoopsSeen: with more busy loops than the host has CPUs, the
// reader sees the host busy and (where the kernel has PSI) under CPU
// pressure, and a late generator over that window is blamed on the host,
// not on dispatch, and is not advised to spin. Before the host was read
// where its pressure lives, such a host counted as "not measurably
// starved" (the prober's own CPU and the Go scheduler saw nothing).
func TestBusyLoopsSeen(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc")
	}
	if testing.Short() {
		t.Skip("starts busy loops for a few seconds")
	}
	testutil.BusyLoops(t, max(3, runtime.NumCPU()+1), time.Minute)
	time.Sleep(300 * time.Millisecond) // let the loops take the CPUs
	r := NewReader()
	a := r.Take()
	time.Sleep(2 * time.Second)
	h := Between(a, r.Take())
	if !h.BusyKnown || h.Busy < 0.9 {
		t.Errorf("host busy %.2f (known %v) under %d busy loops on %d CPUs, want ≥ 0.9", h.Busy, h.BusyKnown, max(3, runtime.NumCPU()+1), h.HostCPUs)
	}
	if h.PressureKnown && h.Pressure < 0.2 {
		t.Errorf("host CPU pressure %.2f under busy loops, want ≥ 0.2", h.Pressure)
	}
	if !h.RunWaitKnown {
		t.Errorf("run-queue wait not read: %+v", h)
	}
	v := verdict.ValidityConfig{}.Judge(verdict.Evidence{LagCount: 100, LagOver: 10, LagP99: 40 * time.Millisecond, Host: h})
	if len(v.Causes) != 1 || (v.Causes[0].Cause != cause.HostStarved && v.Causes[0].Cause != cause.CgroupThrottled) {
		t.Fatalf("a late generator on a busy host: causes %+v (host %s), want a host cause", v.Causes, h)
	}
	t.Logf("%s: %s", v.Causes[0].Cause, v.Reasons()[0])
}
