package hostload

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/procfs"
)

// cgroupDirs are the directories of the process's own cgroups: the cgroup
// v1 `cpu` controller's and the cgroup v2 (unified) hierarchy's, each
// under root ("" when the process has none there). They are found once,
// from /proc/self/cgroup and /proc/self/mountinfo.
type cgroupDirs struct {
	v1CPU, v1Path string // directory, and the path /proc/self/cgroup names
	v2, v2Path    string
}

// findCgroups locates the process's cgroups; a missing or unreadable file
// leaves the dirs empty (the figures are then unknown).
func findCgroups(fs procfs.FS, root string) cgroupDirs {
	var d cgroupDirs
	self, err := fs.Self()
	if err != nil {
		return d
	}
	groups, err := self.Cgroups()
	if err != nil {
		return d
	}
	mounts, err := fs.GetMounts()
	if err != nil {
		return d
	}
	for _, g := range groups {
		switch {
		case g.HierarchyID == 0 && len(g.Controllers) == 0: // the unified (v2) hierarchy
			if m := findMount(mounts, func(m *procfs.MountInfo) bool { return m.FSType == "cgroup2" }); m != nil {
				d.v2, d.v2Path = cgroupDir(root, m, g.Path), g.Path
			}
		case contains(g.Controllers, "cpu"):
			if m := findMount(mounts, func(m *procfs.MountInfo) bool { _, ok := m.SuperOptions["cpu"]; return m.FSType == "cgroup" && ok }); m != nil {
				d.v1CPU, d.v1Path = cgroupDir(root, m, g.Path), g.Path
			}
		}
	}
	return d
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

func findMount(ms []*procfs.MountInfo, ok func(*procfs.MountInfo) bool) *procfs.MountInfo {
	for _, m := range ms {
		if ok(m) {
			return m
		}
	}
	return nil
}

// cgroupDir is the directory of cgroup path p in the hierarchy mounted at
// m, under root. A mount of a subtree (mountinfo's root field not "/", as
// in a container without a cgroup namespace) holds p less that subtree.
func cgroupDir(root string, m *procfs.MountInfo, p string) string {
	if m.Root != "/" && m.Root != "" {
		if rest, ok := strings.CutPrefix(p, m.Root); ok {
			p = rest
		}
	}
	return filepath.Join(root, m.MountPoint, filepath.FromSlash(p))
}

// Throttle is a cgroup's cumulative CPU throttling (cpu.stat) and quota.
type Throttle struct {
	OK            bool
	Cgroup        string // "v1 cpu:/path" or "v2 /path"
	Periods       uint64 // enforcement periods with runnable tasks
	Throttled     uint64 // periods the quota ran out in
	ThrottledTime time.Duration
	Quota         float64 // CPUs (quota ÷ period); 0: no quota
}

// readThrottle reads the cgroup v1 cpu controller's throttling when the
// process has one (a hybrid host binds the cpu controller to v1), else
// the v2 cgroup's (its cpu.stat has nr_periods only with the cpu
// controller enabled).
func readThrottle(d cgroupDirs) Throttle {
	if d.v1CPU != "" {
		if st, err := readKV(filepath.Join(d.v1CPU, "cpu.stat")); err == nil {
			if p, ok := st["nr_periods"]; ok {
				t := Throttle{OK: true, Cgroup: "v1 cpu:" + d.v1Path, Periods: p, Throttled: st["nr_throttled"],
					ThrottledTime: time.Duration(st["throttled_time"])} // nanoseconds
				quota, qerr := readInt(filepath.Join(d.v1CPU, "cpu.cfs_quota_us"))
				period, perr := readInt(filepath.Join(d.v1CPU, "cpu.cfs_period_us"))
				if qerr == nil && perr == nil && quota > 0 && period > 0 {
					t.Quota = float64(quota) / float64(period)
				}
				return t
			}
		}
	}
	if d.v2 != "" {
		if st, err := readKV(filepath.Join(d.v2, "cpu.stat")); err == nil {
			if p, ok := st["nr_periods"]; ok {
				t := Throttle{OK: true, Cgroup: "v2 " + d.v2Path, Periods: p, Throttled: st["nr_throttled"],
					ThrottledTime: time.Duration(st["throttled_usec"]) * time.Microsecond}
				if b, err := os.ReadFile(filepath.Join(d.v2, "cpu.max")); err == nil {
					t.Quota = parseCPUMax(string(b))
				}
				return t
			}
		}
	}
	return Throttle{}
}

// parseCPUMax reads cgroup v2 cpu.max ("50000 100000", or "max 100000"
// for none) as CPUs (0: no quota or unreadable).
func parseCPUMax(s string) float64 {
	f := strings.Fields(s)
	if len(f) != 2 || f[0] == "max" {
		return 0
	}
	q, err1 := strconv.ParseFloat(f[0], 64)
	p, err2 := strconv.ParseFloat(f[1], 64)
	if err1 != nil || err2 != nil || q <= 0 || p <= 0 {
		return 0
	}
	return q / p
}

// readCgroupPSI reads the v2 cgroup's cpu.pressure "some" total, only when
// the process has a cgroup of its own (the root cgroup's is the host's).
func readCgroupPSI(d cgroupDirs) (time.Duration, bool) {
	if d.v2 == "" || d.v2Path == "/" {
		return 0, false
	}
	return readPSISome(filepath.Join(d.v2, "cpu.pressure"))
}

// readPSISome reads the "some" line's total (microseconds) of a pressure
// file (the format of /proc/pressure/cpu; procfs reads only that one).
func readPSISome(path string) (time.Duration, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, false
	}
	for line := range strings.Lines(string(b)) {
		rest, ok := strings.CutPrefix(line, "some ")
		if !ok {
			continue
		}
		for _, f := range strings.Fields(rest) {
			if v, ok := strings.CutPrefix(f, "total="); ok {
				us, err := strconv.ParseUint(v, 10, 64)
				return time.Duration(us) * time.Microsecond, err == nil
			}
		}
	}
	return 0, false
}

// readKV reads a flat keyed file ("nr_periods 12\n…").
func readKV(path string) (map[string]uint64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("hostload: %w", err)
	}
	out := map[string]uint64{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) != 2 {
			continue
		}
		if v, err := strconv.ParseUint(f[1], 10, 64); err == nil {
			out[f[0]] = v
		}
	}
	if len(out) == 0 {
		return nil, errors.New("hostload: " + path + ": no keyed values")
	}
	return out, nil
}

// readInt reads a file holding one integer (cpu.cfs_quota_us is -1 for
// none).
func readInt(path string) (int64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, fmt.Errorf("hostload: %w", err)
	}
	v, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("hostload: %s: %w", path, err)
	}
	return v, nil
}

// readRunWait reads each of the process's threads' time runnable but
// waiting for a CPU (/proc/self/task/*/schedstat, second field), by thread
// id.
func readRunWait(fs procfs.FS) (map[int]time.Duration, bool) {
	self, err := fs.Self()
	if err != nil {
		return nil, false
	}
	threads, err := fs.AllThreads(self.PID)
	if err != nil || len(threads) == 0 {
		return nil, false
	}
	out := make(map[int]time.Duration, len(threads))
	for _, t := range threads {
		if s, err := t.Schedstat(); err == nil { // a thread may exit meanwhile
			out[t.PID] = time.Duration(s.WaitingNanoseconds)
		}
	}
	return out, len(out) > 0
}

// runWaitBetween is the run-queue wait the threads of b gained since a (a
// thread born since counts whole; one gone is lost with its last part).
func runWaitBetween(a, b map[int]time.Duration) time.Duration {
	var sum time.Duration
	for tid, w := range b {
		if p, ok := a[tid]; ok && p <= w {
			sum += w - p
		} else if !ok {
			sum += w
		}
	}
	return sum
}
