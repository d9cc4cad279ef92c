package hostload

import "time"

// Totals are the host's cumulative counters as read now, for export as
// Prometheus counters (each with its OK flag: false where the file is
// missing, and the series is then absent).
type Totals struct {
	// Host CPU seconds over every CPU: busy (all but idle and iowait),
	// stolen, and in all; CPUs is the host's CPU count.
	Busy, Steal, Total float64
	CPUs               int
	StatOK             bool
	// CPU pressure "some" totals of the host and of the process's cgroup.
	PSI, CgroupPSI     time.Duration
	PSIOK, CgroupPSIOK bool
	// Throttle is the process's cgroup's CPU throttling and quota.
	Throttle Throttle
	// RunWait is the time the process's threads waited runnable for a
	// CPU since the sampler started (a monotonic sum: a thread's wait is
	// kept after it exits).
	RunWait   time.Duration
	RunWaitOK bool
}

// Totals reads the host's counters now (at scrape time), the run-queue
// wait continuing the sum kept over the sampler's ticks.
func (s *Sampler) Totals() Totals {
	snap := s.r.Take()
	s.mu.Lock()
	defer s.mu.Unlock()
	t := Totals{Busy: snap.Busy, Steal: snap.Steal, Total: snap.Total, CPUs: snap.CPUs, StatOK: snap.StealOK,
		PSI: snap.PSI, PSIOK: snap.PSIOK, CgroupPSI: snap.CgroupPSI, CgroupPSIOK: snap.CgroupPSIOK, Throttle: snap.Throttle}
	if n := len(s.snaps); n > 0 && s.snaps[n-1].RunWaitOK && snap.RunWaitOK {
		t.RunWait, t.RunWaitOK = s.runWait+runWaitBetween(s.snaps[n-1].RunWait, snap.RunWait), true
	}
	return t
}
