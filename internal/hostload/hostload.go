package hostload

import (
	"math"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"sync"
	"time"

	"github.com/prometheus/procfs"

	"github.com/llmprobe/llmprobe/internal/verdict"
)

// SchedLatencies is the runtime/metrics name of the Go scheduler latency
// histogram.
const SchedLatencies = "/sched/latencies:seconds"

// Snapshot is the host's cumulative counters at one instant.
type Snapshot struct {
	At      time.Time
	Sched   []uint64  // scheduler latency counts per bucket (nil: not available)
	Buckets []float64 // bucket boundaries, len(Sched)+1, seconds
	CPU     float64   // process CPU seconds (user + system)
	CPUOK   bool
	Steal   float64 // host CPU seconds stolen, all CPUs
	Idle    float64 // host CPU seconds idle or waiting for I/O, all CPUs
	// Busy is the host CPU seconds in every mode but idle and iowait, all
	// CPUs: a sum of counters that only grow, so it only grows (never
	// Total - Idle: iowait may go back, and a difference of floats rounds
	// either way).
	Busy    float64
	Total   float64 // host CPU seconds, all CPUs and modes
	StealOK bool
	CPUs    int // the host's CPUs (per-CPU lines of /proc/stat)
	Procs   int // GOMAXPROCS
	// PSI and CgroupPSI are the host's (/proc/pressure/cpu) and the
	// process's cgroup v2 (cpu.pressure) CPU pressure "some" totals.
	PSI, CgroupPSI     time.Duration
	PSIOK, CgroupPSIOK bool
	Throttle           Throttle
	// RunWait is each thread's time runnable but waiting for a CPU.
	RunWait   map[int]time.Duration
	RunWaitOK bool
}

// Reader takes snapshots. The zero value is not usable: call NewReader.
type Reader struct {
	fs   procfs.FS
	fsOK bool
	cg   cgroupDirs
}

// NewReader returns a reader of the default /proc and the cgroup
// hierarchies mounted for this process (host figures are unknown where
// there are none).
func NewReader() *Reader { return NewReaderAt("/") }

// NewReaderAt returns a reader of a file tree rooted at root: root/proc
// for procfs, and the cgroup hierarchies at root + their mount points
// (from root/proc/self/mountinfo). Tests give it a fixture tree.
func NewReaderAt(root string) *Reader {
	fs, err := procfs.NewFS(filepath.Join(root, "proc"))
	r := &Reader{fs: fs, fsOK: err == nil}
	if r.fsOK {
		r.cg = findCgroups(fs, root)
	}
	return r
}

// Take reads the counters now.
func (r *Reader) Take() Snapshot {
	s := Snapshot{At: time.Now(), Procs: runtime.GOMAXPROCS(0)}
	sample := []metrics.Sample{{Name: SchedLatencies}}
	metrics.Read(sample)
	if sample[0].Value.Kind() == metrics.KindFloat64Histogram {
		h := sample[0].Value.Float64Histogram()
		s.Sched = append([]uint64(nil), h.Counts...)
		s.Buckets = h.Buckets // immutable per the runtime/metrics documentation
	}
	if r.fsOK {
		if p, err := r.fs.Self(); err == nil {
			if st, err := p.Stat(); err == nil {
				s.CPU, s.CPUOK = st.CPUTime(), true
			}
		}
		if st, err := r.fs.Stat(); err == nil {
			c := st.CPUTotal
			s.Steal, s.Idle, s.CPUs = c.Steal, c.Idle+c.Iowait, len(st.CPU)
			s.Total = c.User + c.Nice + c.System + c.Idle + c.Iowait + c.IRQ + c.SoftIRQ + c.Steal
			s.Busy = c.User + c.Nice + c.System + c.IRQ + c.SoftIRQ + c.Steal
			s.StealOK = s.Total > 0
		}
		if p, err := r.fs.PSIStatsForResource("cpu"); err == nil && p.Some != nil {
			s.PSI, s.PSIOK = time.Duration(p.Some.Total)*time.Microsecond, true
		}
		s.CgroupPSI, s.CgroupPSIOK = readCgroupPSI(r.cg)
		s.Throttle = readThrottle(r.cg)
		s.RunWait, s.RunWaitOK = readRunWait(r.fs)
	}
	return s
}

// Between returns the host's health from a to b (b taken after a).
func Between(a, b Snapshot) verdict.HostHealth {
	h := verdict.HostHealth{Known: true, CPUs: b.Procs, Window: b.At.Sub(a.At)}
	if len(a.Sched) == len(b.Sched) && len(b.Buckets) == len(b.Sched)+1 {
		diff := make([]uint64, len(b.Sched))
		var n uint64
		for i := range diff {
			if b.Sched[i] >= a.Sched[i] {
				diff[i] = b.Sched[i] - a.Sched[i]
			}
			n += diff[i]
		}
		h.SchedCount = n
		h.SchedP99 = quantile(diff, b.Buckets, n, 0.99)
	}
	if secs := b.At.Sub(a.At).Seconds(); secs > 0 && a.CPUOK && b.CPUOK {
		h.ProcessCPU, h.ProcessCPUKnown = math.Max(b.CPU-a.CPU, 0)/secs, true
	}
	if a.StealOK && b.StealOK {
		if total := b.Total - a.Total; total > 0 {
			h.Steal, h.StealKnown = math.Max(b.Steal-a.Steal, 0)/total, true
			idle := math.Max(b.Idle-a.Idle, 0)
			h.Busy, h.BusyKnown, h.HostCPUs = clamp01(1-idle/total), true, b.CPUs
		}
	}
	win := b.At.Sub(a.At)
	if win <= 0 {
		return h
	}
	share := func(x, y time.Duration) float64 { return clamp01(float64(y-x) / float64(win)) }
	if a.PSIOK && b.PSIOK {
		h.Pressure, h.PressureKnown = share(a.PSI, b.PSI), true
	}
	if a.CgroupPSIOK && b.CgroupPSIOK {
		h.CgroupPressure, h.CgroupPressureKnown = share(a.CgroupPSI, b.CgroupPSI), true
	}
	if ta, tb := a.Throttle, b.Throttle; ta.OK && tb.OK && ta.Cgroup == tb.Cgroup {
		h.ThrottleKnown, h.Quota, h.Cgroup = true, tb.Quota, tb.Cgroup
		if tb.Periods >= ta.Periods && tb.Throttled >= ta.Throttled && tb.ThrottledTime >= ta.ThrottledTime {
			h.Periods, h.Throttled, h.ThrottledTime = tb.Periods-ta.Periods, tb.Throttled-ta.Throttled, tb.ThrottledTime-ta.ThrottledTime
		}
	}
	if a.RunWaitOK && b.RunWaitOK {
		h.RunWait, h.RunWaitKnown = float64(runWaitBetween(a.RunWait, b.RunWait))/float64(win), true
	}
	return h
}

func clamp01(x float64) float64 { return math.Min(math.Max(x, 0), 1) }

// quantile is the nearest-rank q-quantile of bucketed counts, as the upper
// bound of the bucket holding it (its lower bound when that is infinite):
// never below the true value.
func quantile(counts []uint64, bounds []float64, n uint64, q float64) time.Duration {
	if n == 0 {
		return 0
	}
	rank := uint64(math.Ceil(q * float64(n)))
	rank = min(max(rank, 1), n)
	var seen uint64
	for i, c := range counts {
		seen += c
		if seen >= rank {
			v := bounds[i+1]
			if math.IsInf(v, 1) {
				v = bounds[i]
			}
			return time.Duration(v * 1e9)
		}
	}
	return 0
}

// Sampler keeps the snapshots of a sliding window (Tick once a second or
// so) and reports the host's health over it. Safe for concurrent use.
type Sampler struct {
	r      *Reader
	window time.Duration

	mu      sync.Mutex
	snaps   []Snapshot    // oldest first; snaps[0] is the newest at least window old, when there is one
	runWait time.Duration // the threads' run-queue wait gained since the first Tick (Totals)
}

// NewSampler returns a sampler over the given window; it takes its first
// snapshot now.
func NewSampler(r *Reader, window time.Duration) *Sampler {
	s := &Sampler{r: r, window: window}
	s.Tick()
	return s
}

// Tick takes a snapshot and forgets those no longer needed.
func (s *Sampler) Tick() {
	snap := s.r.Take()
	s.mu.Lock()
	defer s.mu.Unlock()
	if n := len(s.snaps); n > 0 && s.snaps[n-1].RunWaitOK && snap.RunWaitOK {
		s.runWait += runWaitBetween(s.snaps[n-1].RunWait, snap.RunWait)
	}
	s.snaps = append(s.snaps, snap)
	// Keep one snapshot at least window old as the window's base.
	cut := 0
	for i := range s.snaps {
		if snap.At.Sub(s.snaps[i].At) >= s.window {
			cut = i
		}
	}
	s.snaps = s.snaps[cut:]
}

// Recent returns the health between the window's base snapshot and the
// latest (Known false before the second Tick).
func (s *Sampler) Recent() verdict.HostHealth {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.snaps) < 2 {
		return verdict.HostHealth{}
	}
	return Between(s.snaps[0], s.snaps[len(s.snaps)-1])
}
