package ladderresult

import (
	"math"
	"time"

	"github.com/llmprobe/llmprobe/internal/quantile"
	"github.com/llmprobe/llmprobe/internal/stats"
	"github.com/llmprobe/llmprobe/internal/verdict"
)

// The JSON shapes of the figures: durations in seconds. They are shared by
// the probe report (internal/report) and the ladder result schema
// (ladderjson.go), and each converts both ways, so a decoded result carries
// the figures it was encoded from.

// DistJSON is a distribution in seconds.
type DistJSON struct {
	Count int     `json:"count"`
	P50   float64 `json:"p50"`
	P90   float64 `json:"p90"`
	P95   float64 `json:"p95"`
	P99   float64 `json:"p99"`
	Max   float64 `json:"max"`
	Exact bool    `json:"exact"` // false: read from the bounded histogram
}

// DistJSONOf converts percentiles to seconds.
func DistJSONOf(p quantile.Percentiles) DistJSON {
	return DistJSON{Count: p.Count, P50: p.P50.Seconds(), P90: p.P90.Seconds(), P95: p.P95.Seconds(),
		P99: p.P99.Seconds(), Max: p.Max.Seconds(), Exact: p.Exact}
}

// Percentiles converts back from seconds (to the nanosecond the seconds
// were written from).
func (d DistJSON) Percentiles() quantile.Percentiles {
	return quantile.Percentiles{Count: d.Count, P50: secs(d.P50), P90: secs(d.P90), P95: secs(d.P95), P99: secs(d.P99), Max: secs(d.Max), Exact: d.Exact}
}

// secs converts seconds to a duration, rounded to the nanosecond.
func secs(s float64) time.Duration { return time.Duration(math.Round(s * 1e9)) }

// GatesJSON are the gates in seconds (0 = none).
type GatesJSON struct {
	TTFT float64 `json:"ttft"`
	TPOT float64 `json:"tpot"`
	E2E  float64 `json:"e2e"`
}

// GatesJSONOf converts gates to seconds.
func GatesJSONOf(g stats.Gates) GatesJSON {
	return GatesJSON{TTFT: g.TTFT.Seconds(), TPOT: g.TPOT.Seconds(), E2E: g.E2E.Seconds()}
}

// Gates converts back from seconds.
func (g GatesJSON) Gates() stats.Gates {
	return stats.Gates{TTFT: secs(g.TTFT), TPOT: secs(g.TPOT), E2E: secs(g.E2E)}
}

// MatchedGaps are the per-request client − server gaps in seconds (nil
// when no request carried server timings).
type MatchedGaps struct {
	Prefill DistJSON `json:"prefill"` // TTFT from dispatch − server prompt_ms
	TPOT    DistJSON `json:"tpot"`    // TPOT − server predicted_per_token_ms
}

// MatchedGapsOf is a summary's per-request gaps, nil without any.
func MatchedGapsOf(s stats.Summary) *MatchedGaps {
	if s.PrefillGap.Count == 0 && s.TPOTGap.Count == 0 {
		return nil
	}
	return &MatchedGaps{Prefill: DistJSONOf(s.PrefillGap), TPOT: DistJSONOf(s.TPOTGap)}
}

// HostJSON is the prober host's health over a window (fields a platform
// cannot read are absent).
type HostJSON struct {
	SchedLatencyP99 *float64 `json:"sched_latency_p99_s,omitempty"` // Go scheduler latency p99, seconds
	SchedSamples    uint64   `json:"sched_latency_samples"`
	ProcessCPU      *float64 `json:"process_cpu_cores,omitempty"` // CPU seconds per second
	CPUs            int      `json:"cpus"`                        // GOMAXPROCS
	CPUSteal        *float64 `json:"cpu_steal_fraction,omitempty"`
	// The host's CPU evidence (docs/figures.md, "Host causes"): its
	// non-idle share and CPU count, CPU pressure (host, and the prober's
	// own cgroup v2), the prober's threads' run-queue wait per second, and
	// its cgroup's throttling.
	HostBusy       *float64      `json:"host_cpu_busy_fraction,omitempty"`
	HostCPUs       int           `json:"host_cpus,omitempty"`
	Pressure       *float64      `json:"cpu_pressure_fraction,omitempty"`
	CgroupPressure *float64      `json:"cgroup_cpu_pressure_fraction,omitempty"`
	RunQueueWait   *float64      `json:"run_queue_wait_fraction,omitempty"`
	Throttling     *ThrottleJSON `json:"cgroup_throttling,omitempty"`
	// Source names the prober the health was read on when not this one
	// ("shard 1": a fleet step's, the shard FleetHost chose); absent here.
	Source string `json:"source,omitempty"`
}

// ThrottleJSON is the prober cgroup's CPU throttling over the window.
type ThrottleJSON struct {
	Cgroup           string  `json:"cgroup"`
	Periods          uint64  `json:"periods"`
	ThrottledPeriods uint64  `json:"throttled_periods"`
	ThrottledSeconds float64 `json:"throttled_s"`
	QuotaCPUs        float64 `json:"quota_cpus"` // 0: no quota
}

// known returns &v when ok, else nil (absent from the JSON).
func known(v float64, ok bool) *float64 {
	if !ok {
		return nil
	}
	return &v
}

// HostJSONOf is the JSON of h, nil when nothing was measured.
func HostJSONOf(h verdict.HostHealth) *HostJSON {
	if !h.Known {
		return nil
	}
	j := &HostJSON{SchedSamples: h.SchedCount, CPUs: h.CPUs, Source: h.Source}
	if h.SchedCount > 0 {
		v := h.SchedP99.Seconds()
		j.SchedLatencyP99 = &v
	}
	j.ProcessCPU, j.CPUSteal = known(h.ProcessCPU, h.ProcessCPUKnown), known(h.Steal, h.StealKnown)
	j.HostBusy, j.Pressure = known(h.Busy, h.BusyKnown), known(h.Pressure, h.PressureKnown)
	if h.BusyKnown {
		j.HostCPUs = h.HostCPUs
	}
	j.CgroupPressure, j.RunQueueWait = known(h.CgroupPressure, h.CgroupPressureKnown), known(h.RunWait, h.RunWaitKnown)
	if h.ThrottleKnown {
		j.Throttling = &ThrottleJSON{Cgroup: h.Cgroup, Periods: h.Periods, ThrottledPeriods: h.Throttled,
			ThrottledSeconds: h.ThrottledTime.Seconds(), QuotaCPUs: h.Quota}
	}
	return j
}

// Health converts back (nil: nothing measured). The window is not in the
// JSON: it is the step's or the run's.
func (j *HostJSON) Health() verdict.HostHealth {
	if j == nil {
		return verdict.HostHealth{}
	}
	h := verdict.HostHealth{Known: true, SchedCount: j.SchedSamples, CPUs: j.CPUs, Source: j.Source}
	if j.SchedLatencyP99 != nil {
		h.SchedP99 = secs(*j.SchedLatencyP99)
	}
	read := func(p *float64) (float64, bool) {
		if p == nil {
			return 0, false
		}
		return *p, true
	}
	h.ProcessCPU, h.ProcessCPUKnown = read(j.ProcessCPU)
	h.Steal, h.StealKnown = read(j.CPUSteal)
	h.Busy, h.BusyKnown = read(j.HostBusy)
	if h.BusyKnown {
		h.HostCPUs = j.HostCPUs
	}
	h.Pressure, h.PressureKnown = read(j.Pressure)
	h.CgroupPressure, h.CgroupPressureKnown = read(j.CgroupPressure)
	h.RunWait, h.RunWaitKnown = read(j.RunQueueWait)
	if t := j.Throttling; t != nil {
		h.ThrottleKnown, h.Cgroup, h.Periods, h.Throttled = true, t.Cgroup, t.Periods, t.ThrottledPeriods
		h.ThrottledTime, h.Quota = secs(t.ThrottledSeconds), t.QuotaCPUs
	}
	return h
}
