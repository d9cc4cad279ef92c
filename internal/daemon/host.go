package daemon

import (
	"fmt"
	"time"

	"github.com/llmprobe/llmprobe/internal/hostload"
	"github.com/llmprobe/llmprobe/internal/stats"
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

// hostText is the status page's line on the prober host: the evidence the
// generator's verdict judged, over the window it was read over.
func hostText(h stats.HostHealth) string {
	if !h.Known {
		return "not measured yet"
	}
	return fmt.Sprintf("over the last %s: %s", h.Window.Round(time.Second), h)
}
