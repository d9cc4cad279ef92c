package daemon

import (
	"github.com/llmprobe/llmprobe/internal/hostload"
	"github.com/llmprobe/llmprobe/internal/telemetry"
)

// hostCounters hands the host's cumulative counters to the telemetry
// collector (telemetry and hostload are of one rank and do not import
// each other).
func hostCounters(t hostload.Totals) telemetry.HostCounters {
	return telemetry.HostCounters{
		CPUOK: t.StatOK, CPUBusySeconds: t.Busy, CPUStealSeconds: t.Steal, CPUs: t.CPUs,
		PressureOK: t.PSIOK, PressureSeconds: t.PSI.Seconds(),
		CgroupPressureOK: t.CgroupPSIOK, CgroupPressureSeconds: t.CgroupPSI.Seconds(),
		ThrottleOK: t.Throttle.OK, Periods: t.Throttle.Periods, ThrottledPeriods: t.Throttle.Throttled,
		ThrottledSeconds: t.Throttle.ThrottledTime.Seconds(), QuotaCPUs: t.Throttle.Quota,
		RunWaitOK: t.RunWaitOK, RunWaitSeconds: t.RunWait.Seconds(),
	}
}
