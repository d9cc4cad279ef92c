package verdict

import (
	"fmt"
	"math"
	"time"
)

// A fleet step's host evidence. Each shard reads its own host over its
// share of a step (as a prober alone does); the coordinator checks what it
// is sent (Check), and the merged step carries the evidence of the shard
// most starved (FleetHost), named by its Source, so that a merged verdict
// names a host cause, and the shard it came from, as a prober alone's
// does.

// Check reports what makes a host health read from a peer unbelievable: a
// figure not finite or out of its range. Texts (Cgroup, Source) are the
// caller's to clean.
func (h HostHealth) Check() error {
	for _, f := range []struct {
		name    string
		v, hi   float64
		bounded bool
	}{
		{"process CPU", h.ProcessCPU, 1 << 16, true}, {"steal", h.Steal, 1, true}, {"busy", h.Busy, 1, true},
		{"pressure", h.Pressure, 1, true}, {"cgroup pressure", h.CgroupPressure, 1, true},
		{"quota", h.Quota, 1 << 16, true}, {"run wait", h.RunWait, 1 << 16, true},
	} {
		if math.IsNaN(f.v) || math.IsInf(f.v, 0) || f.v < 0 || f.v > f.hi {
			return fmt.Errorf("host: %s %g out of range", f.name, f.v)
		}
	}
	switch {
	case h.CPUs < 0 || h.CPUs > 1<<16 || h.HostCPUs < 0 || h.HostCPUs > 1<<16:
		return fmt.Errorf("host: %d CPUs, %d host CPUs", h.CPUs, h.HostCPUs)
	case h.Throttled > h.Periods:
		return fmt.Errorf("host: throttled %d of %d periods", h.Throttled, h.Periods)
	case h.SchedP99 < 0 || h.ThrottledTime < 0 || h.Window < 0 || h.Window > 24*time.Hour:
		return fmt.Errorf("host: a negative or impossible duration")
	}
	return nil
}

// FleetHost is the host evidence of a fleet step from its shards' (each
// with its Source): the first shard whose cgroup quota throttled it, else
// the first whose host was starved by c's thresholds, else the one with
// the most CPU pressure (host or cgroup; the most run-queue wait on a tie);
// not Known when no shard's host was measured.
func FleetHost(c ValidityConfig, hosts []HostHealth) HostHealth {
	c = c.withDefaults()
	var starvedAt, worst = -1, -1
	score := func(h HostHealth) (float64, float64) { return max(h.Pressure, h.CgroupPressure), h.RunWait }
	for i, h := range hosts {
		if !h.Known {
			continue
		}
		throttled, why := starved(c, h)
		if throttled {
			return h
		}
		if why != "" && starvedAt < 0 {
			starvedAt = i
		}
		if worst < 0 {
			worst = i
			continue
		}
		p, w := score(h)
		bp, bw := score(hosts[worst])
		if p > bp || (p == bp && w > bw) {
			worst = i
		}
	}
	switch {
	case starvedAt >= 0:
		return hosts[starvedAt]
	case worst >= 0:
		return hosts[worst]
	}
	return HostHealth{}
}
