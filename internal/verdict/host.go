package verdict

import (
	"fmt"
	"strings"
	"time"

	"github.com/llmprobe/llmprobe/internal/cause"
)

// HostHealth is the prober host's own health over a window: what tells a
// starved prober from a slow target. Each figure has its Known flag (false:
// the platform or the process's place in it does not expose it); zero
// fields are unknown.
type HostHealth struct {
	// Known is false when nothing was measured: no host cause is named.
	Known bool
	// SchedCount and SchedP99: Go scheduler latency (time runnable
	// goroutines waited for a CPU, runtime/metrics /sched/latencies:seconds)
	// over the window, nearest rank over the runtime's buckets (upper bound).
	SchedCount uint64
	SchedP99   time.Duration
	// ProcessCPU is the prober process's CPU time per second of the window
	// (cores used); CPUs is GOMAXPROCS. ProcessCPUKnown says it was read.
	ProcessCPU      float64
	CPUs            int
	ProcessCPUKnown bool
	// Steal is the fraction of the host's CPU time stolen by the hypervisor
	// (/proc/stat); StealKnown says /proc/stat had it.
	Steal      float64
	StealKnown bool
	// Busy is the host's non-idle share of its CPU time (/proc/stat: all
	// but idle and iowait, over every CPU); HostCPUs is how many CPUs the
	// host has.
	Busy      float64
	BusyKnown bool
	HostCPUs  int
	// Pressure is the host's CPU pressure over the window
	// (/proc/pressure/cpu "some" total: the share of the window in which at
	// least one runnable task waited for a CPU).
	Pressure      float64
	PressureKnown bool
	// CgroupPressure is the same for the prober's own cgroup v2
	// (cpu.pressure), read where the process has a cgroup of its own.
	CgroupPressure      float64
	CgroupPressureKnown bool
	// Throttling of the prober's cgroup by its CPU quota (cpu.stat):
	// Periods is the enforcement periods with runnable tasks in the window,
	// Throttled those the quota ran out in, ThrottledTime the time its
	// tasks were held back. Quota is the CPU limit in CPUs (0: none);
	// Cgroup names the cgroup ("v1 cpu:/kubepods/…", "v2 /…").
	Periods, Throttled uint64
	ThrottledTime      time.Duration
	ThrottleKnown      bool
	Quota              float64
	Cgroup             string
	// RunWait is the time the prober's threads were runnable but waiting
	// for a CPU (/proc/self/task/*/schedstat), summed over threads, per
	// second of the window.
	RunWait      float64
	RunWaitKnown bool
	// Window is the time the health was read over.
	Window time.Duration
	// Source names the prober it was read on when that is not this one:
	// "shard 1" for a fleet step's evidence from a shard; "" here.
	Source string
}

// String describes the health in words, for reasons and logs.
func (h HostHealth) String() string {
	if !h.Known {
		return "host health not measured"
	}
	parts := []string{}
	if h.BusyKnown {
		parts = append(parts, fmt.Sprintf("host CPU %.0f%% busy of %d CPUs", 100*h.Busy, h.HostCPUs))
	}
	if h.PressureKnown {
		parts = append(parts, fmt.Sprintf("host CPU pressure %.0f%%", 100*h.Pressure))
	}
	if h.CgroupPressureKnown {
		parts = append(parts, fmt.Sprintf("cgroup CPU pressure %.0f%%", 100*h.CgroupPressure))
	}
	if h.ThrottleKnown {
		parts = append(parts, h.throttleText())
	}
	if h.RunWaitKnown {
		parts = append(parts, h.runWaitText())
	}
	if h.SchedCount > 0 {
		parts = append(parts, "Go scheduler latency p99 "+fmtDur(h.SchedP99))
	}
	if h.ProcessCPUKnown {
		parts = append(parts, fmt.Sprintf("prober CPU %.2f of %d cores", h.ProcessCPU, h.CPUs))
	}
	if h.StealKnown {
		parts = append(parts, fmt.Sprintf("CPU steal %.0f%%", 100*h.Steal))
	}
	if len(parts) == 0 {
		return "host health not measured"
	}
	if h.Source != "" {
		return h.Source + ": " + strings.Join(parts, ", ")
	}
	return strings.Join(parts, ", ")
}

// throttleText is "cgroup throttled 41 of 50 periods, 2.9s (quota 0.5
// CPU)".
func (h HostHealth) throttleText() string {
	if h.Periods == 0 && h.Quota == 0 {
		return "no cgroup CPU quota"
	}
	s := fmt.Sprintf("cgroup throttled %d of %d periods", h.Throttled, h.Periods)
	if h.ThrottledTime > 0 {
		s += ", " + fmtDur(h.ThrottledTime)
	}
	if h.Quota > 0 {
		s += fmt.Sprintf(" (quota %.3g CPU)", h.Quota)
	} else {
		s += " (no quota)"
	}
	return s
}

// runWaitText is "prober threads waited runnable 35% of the window", or,
// for more than the window summed over threads, "… 1.73× the window".
func (h HostHealth) runWaitText() string {
	if h.RunWait >= 1 {
		return fmt.Sprintf("prober threads waited runnable %.2f× the window (summed over threads)", h.RunWait)
	}
	return fmt.Sprintf("prober threads waited runnable %.0f%% of the window", 100*h.RunWait)
}

// SpareCPU reports whether the host measurably had a CPU to spare over the
// window: its idle share was at least one CPU's worth, its CPU pressure
// (where read) stayed under limit, and no quota throttled the prober. Only
// then does spin-waiting (--spin) help a late generator.
func (h HostHealth) SpareCPU(limit float64) bool {
	if !h.Known || !h.BusyKnown || h.HostCPUs <= 0 {
		return false
	}
	if (1-h.Busy)*float64(h.HostCPUs) < 1 {
		return false
	}
	if (h.PressureKnown && h.Pressure >= limit) || (h.CgroupPressureKnown && h.CgroupPressure >= limit) {
		return false
	}
	return !h.ThrottleKnown || h.Throttled == 0
}

// hostThresholds fills the host thresholds of d (defaults) from c's
// non-zero fields.
func (d *ValidityConfig) hostThresholds(c ValidityConfig) {
	positive(&d.StarvedPressure, c.StarvedPressure)
	positive(&d.StarvedThrottled, c.StarvedThrottled)
	positive(&d.StarvedRunWait, c.StarvedRunWait)
	positive(&d.StarvedBusy, c.StarvedBusy)
}

// lateCause names why a generator was late, given the host's health over
// the same window and the lag's own words: cgroup_throttled when the
// prober's cgroup quota throttled it in StarvedThrottled or more of its
// periods; else host_starved when the host measurably lacked CPU (see
// starved); else dispatch_lag, whose advice suggests --spin only when the
// host had a CPU to spare.
func (c ValidityConfig) lateCause(h HostHealth, lag string) InvalidCause {
	throttled, why := starved(c, h)
	prober := "prober"
	if h.Source != "" { // a fleet step: the shard whose host it was
		prober = "prober (" + h.Source + ")"
	}
	switch {
	case throttled:
		return InvalidCause{Cause: cause.CgroupThrottled, Action: cause.CgroupThrottled.Action(),
			Reason: fmt.Sprintf("%s CPU-throttled by its cgroup quota: %s; %s: the generator did not keep its schedule because the prober's CPU limit held it back, not because of the target", prober, why, lag)}
	case why != "":
		return InvalidCause{Cause: cause.HostStarved, Action: cause.HostStarved.Action(),
			Reason: fmt.Sprintf("%s host starved: %s; %s: the generator did not keep its schedule because the prober lacked CPU, not because of the target", prober, why, lag)}
	case !h.Known:
		return InvalidCause{Cause: cause.DispatchLag,
			Reason: fmt.Sprintf("%s: the generator did not keep its schedule (the prober host's health was not measured)", lag),
			Action: "lower the rate or split it over more probers, or widen max_lag_p99 (--max-lag-p99); the host's CPU was not measured, so spin-waiting (--spin) is not advised: it would burn a CPU the host may lack"}
	case h.SpareCPU(c.StarvedPressure):
		return InvalidCause{Cause: cause.DispatchLag,
			Reason: fmt.Sprintf("%s: the generator did not keep its schedule (%s: the host was not measurably starved)", lag, h),
			Action: "spin-wait the last part of each wait for tighter dispatch (--spin: the host had a CPU to spare), lower the rate or split it over more probers, or widen max_lag_p99 (--max-lag-p99)"}
	}
	return InvalidCause{Cause: cause.DispatchLag,
		Reason: fmt.Sprintf("%s: the generator did not keep its schedule (%s: the host was not measurably starved)", lag, h),
		Action: "lower the rate or split it over more probers, or widen max_lag_p99 (--max-lag-p99); the host had no CPU clearly to spare, so spin-waiting (--spin) is not advised"}
}

// starved says how the host was starved ("" when it was not measurably),
// and whether its cgroup's CPU quota throttled it. The evidence, each
// against its ValidityConfig threshold: the prober's cgroup throttled in
// StarvedThrottled or more of its periods; host or cgroup CPU pressure
// StarvedPressure or more; the prober's threads waiting runnable
// StarvedRunWait or more per second; the host StarvedBusy or more busy;
// the Go scheduler making runnable goroutines wait StarvedSchedP99 or more
// at p99; the hypervisor stealing StarvedSteal or more; the prober using
// 90% or more of every CPU it may use.
func starved(c ValidityConfig, h HostHealth) (throttled bool, why string) {
	if !h.Known {
		return false, ""
	}
	var ws []string
	if h.ThrottleKnown && h.Periods > 0 && h.Throttled > 0 && float64(h.Throttled) >= c.StarvedThrottled*float64(h.Periods) {
		throttled = true
		ws = append(ws, h.throttleText())
	}
	if h.PressureKnown && h.Pressure >= c.StarvedPressure {
		ws = append(ws, fmt.Sprintf("host CPU pressure %.0f%%", 100*h.Pressure))
	}
	if h.CgroupPressureKnown && h.CgroupPressure >= c.StarvedPressure {
		ws = append(ws, fmt.Sprintf("cgroup CPU pressure %.0f%%", 100*h.CgroupPressure))
	}
	if h.RunWaitKnown && h.RunWait >= c.StarvedRunWait {
		ws = append(ws, h.runWaitText())
	}
	if h.BusyKnown && h.Busy >= c.StarvedBusy {
		ws = append(ws, fmt.Sprintf("host CPU %.0f%% busy of %d CPUs", 100*h.Busy, h.HostCPUs))
	}
	if h.SchedCount > 0 && h.SchedP99 >= c.StarvedSchedP99 {
		ws = append(ws, fmt.Sprintf("Go scheduler latency p99 %s (runnable goroutines waited that long for a CPU; %s or more is starvation)", fmtDur(h.SchedP99), fmtDur(c.StarvedSchedP99)))
	}
	if h.StealKnown && h.Steal >= c.StarvedSteal {
		ws = append(ws, fmt.Sprintf("CPU steal %.0f%% of the host's CPU time", 100*h.Steal))
	}
	if h.ProcessCPUKnown && h.CPUs > 0 && h.ProcessCPU >= 0.9*float64(h.CPUs) {
		ws = append(ws, fmt.Sprintf("the prober used %.2f of its %d cores", h.ProcessCPU, h.CPUs))
	}
	if h.ProcessCPUKnown && h.Quota > 0 && h.ProcessCPU >= 0.9*h.Quota {
		throttled = true
		ws = append(ws, fmt.Sprintf("the prober used %.2f of its %.3g CPU quota", h.ProcessCPU, h.Quota))
	}
	if len(ws) == 0 {
		return false, ""
	}
	return throttled, strings.Join(ws, "; ") + " [" + h.String() + "]"
}
