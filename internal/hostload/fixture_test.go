package hostload

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/procfs"

	"github.com/llmprobe/llmprobe/internal/cause"
	"github.com/llmprobe/llmprobe/internal/verdict"
)

// fixture copies testdata/<name> to a temporary root with proc/self
// pointing at the fixture's process (4242); overlay then lays
// testdata/<name>.after over it (the counters ten seconds later).
func fixture(t *testing.T, name string) string {
	t.Helper()
	root := t.TempDir()
	if err := os.CopyFS(root, os.DirFS(filepath.Join("testdata", name))); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("4242", filepath.Join(root, "proc", "self")); err != nil {
		t.Fatal(err)
	}
	return root
}

// overlay writes every file of testdata/<name>.after over root (CopyFS
// refuses to overwrite).
func overlay(t *testing.T, root, name string) {
	t.Helper()
	src := filepath.Join("testdata", name+".after")
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		dst := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		return os.WriteFile(dst, b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestFixtureTrees reads host pressure, cgroup throttling, run-queue wait
// and busy CPU from fixture /proc and cgroup trees (cgroup v1 on a hybrid
// host, pure cgroup v2 in a Kubernetes-like cgroup, an old kernel with
// neither), ten seconds apart, and judges a late generator on them.
func TestFixtureTrees(t *testing.T) {
	type want struct {
		pressure, cgPressure, runWait, busy float64 // -1: unknown
		periods, throttled                  uint64
		throttledTime                       time.Duration
		quota                               float64
		throttleKnown                       bool
		cgroup                              string
		cause                               cause.Cause
		reason                              []string
	}
	for _, tc := range []struct {
		name string
		want want
	}{
		{"v1", want{pressure: 0.92, cgPressure: -1, runWait: 0.35, busy: 0.95, periods: 50, throttled: 41, throttledTime: 2900 * time.Millisecond,
			quota: 0.5, throttleKnown: true, cgroup: "v1 cpu:/llmprobe-test", cause: cause.CgroupThrottled,
			reason: []string{"cgroup throttled 41 of 50 periods, 2.9s (quota 0.5 CPU)", "host CPU pressure 92%", "prober threads waited runnable 35% of the window", "host CPU 95% busy of 2 CPUs"}}},
		{"v2", want{pressure: 0.10, cgPressure: 0.60, runWait: 0.01, busy: 0.95, periods: 100, throttled: 60, throttledTime: 4100 * time.Millisecond,
			quota: 0.25, throttleKnown: true, cgroup: "v2 /kubepods.slice/pod1/ctr", cause: cause.CgroupThrottled,
			reason: []string{"cgroup throttled 60 of 100 periods, 4.1s (quota 0.25 CPU)", "cgroup CPU pressure 60%"}}},
		{"bare", want{pressure: -1, cgPressure: -1, runWait: -1, busy: 0.95, cause: cause.HostStarved,
			reason: []string{"prober host starved: host CPU 95% busy of 2 CPUs"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := fixture(t, tc.name)
			r := NewReaderAt(root)
			a := r.Take()
			overlay(t, root, tc.name)
			b := r.Take()
			b.At = a.At.Add(10 * time.Second)
			h := Between(a, b)
			w := tc.want
			for _, f := range []struct {
				what  string
				got   float64
				known bool
				want  float64
			}{
				{"host pressure", h.Pressure, h.PressureKnown, w.pressure},
				{"cgroup pressure", h.CgroupPressure, h.CgroupPressureKnown, w.cgPressure},
				{"run-queue wait", h.RunWait, h.RunWaitKnown, w.runWait},
				{"busy", h.Busy, h.BusyKnown, w.busy},
			} {
				if f.known != (f.want >= 0) || (f.known && math.Abs(f.got-f.want) > 1e-9) {
					t.Errorf("%s %.4f (known %v), want %.4f", f.what, f.got, f.known, f.want)
				}
			}
			if h.ThrottleKnown != w.throttleKnown || h.Periods != w.periods || h.Throttled != w.throttled || h.ThrottledTime != w.throttledTime ||
				math.Abs(h.Quota-w.quota) > 1e-9 || h.Cgroup != w.cgroup {
				t.Errorf("throttling %v %d/%d %v quota %v %q, want %v %d/%d %v quota %v %q", h.ThrottleKnown, h.Throttled, h.Periods, h.ThrottledTime,
					h.Quota, h.Cgroup, w.throttleKnown, w.throttled, w.periods, w.throttledTime, w.quota, w.cgroup)
			}
			v := verdict.ValidityConfig{}.Judge(verdict.Evidence{LagCount: 100, LagOver: 10, LagP99: 40 * time.Millisecond, Host: h})
			if v.Valid || len(v.Causes) != 1 || v.Causes[0].Cause != w.cause {
				t.Fatalf("causes %+v, want %s", v.Causes, w.cause)
			}
			for _, s := range w.reason {
				if !strings.Contains(v.Reasons()[0], s) {
					t.Errorf("reason %q lacks %q", v.Reasons()[0], s)
				}
			}
		})
	}
}

// TestMissingFilesUnknown: a root with no /proc at all leaves every figure
// unknown, never zero.
func TestMissingFilesUnknown(t *testing.T) {
	r := NewReaderAt(t.TempDir())
	a := r.Take()
	b := r.Take()
	b.At = a.At.Add(time.Second)
	h := Between(a, b)
	if h.PressureKnown || h.CgroupPressureKnown || h.ThrottleKnown || h.RunWaitKnown || h.BusyKnown || h.StealKnown || h.ProcessCPUKnown {
		t.Errorf("figures known without files: %+v", h)
	}
}

// TestCgroupDir maps a cgroup path to its directory, including a mount of
// a subtree (a container without its own cgroup namespace).
func TestCgroupDir(t *testing.T) {
	for _, tc := range []struct {
		root, mountRoot, mountPoint, path, want string
	}{
		{"/", "/", "/sys/fs/cgroup/cpu", "/kubepods/pod1", "/sys/fs/cgroup/cpu/kubepods/pod1"},
		{"/", "/", "/sys/fs/cgroup", "/", "/sys/fs/cgroup"},
		{"/x", "/kubepods/pod1", "/sys/fs/cgroup", "/kubepods/pod1/ctr", "/x/sys/fs/cgroup/ctr"},
	} {
		m := &procfs.MountInfo{Root: tc.mountRoot, MountPoint: tc.mountPoint}
		if got := cgroupDir(tc.root, m, tc.path); got != tc.want {
			t.Errorf("cgroupDir(%q, %q at %q, %q) = %q, want %q", tc.root, tc.mountRoot, tc.mountPoint, tc.path, got, tc.want)
		}
	}
}

// TestParseCPUMax reads cgroup v2 cpu.max.
func TestParseCPUMax(t *testing.T) {
	for in, want := range map[string]float64{"50000 100000\n": 0.5, "max 100000\n": 0, "200000 100000": 2, "": 0, "x 1": 0} {
		if got := parseCPUMax(in); got != want {
			t.Errorf("parseCPUMax(%q) = %v, want %v", in, got, want)
		}
	}
}

// TestSamplerTotals: the counters exported at scrape time are the files'
// cumulative values, and the run-queue wait is a monotonic sum over the
// sampler's ticks that keeps an exited thread's wait.
func TestSamplerTotals(t *testing.T) {
	root := fixture(t, "v1")
	s := NewSampler(NewReaderAt(root), time.Minute)
	if got := s.Totals(); !got.RunWaitOK || got.RunWait != 0 || !got.PSIOK || got.PSI != time.Second || !got.StatOK || got.Busy != 20 {
		t.Fatalf("totals at the start %+v", got)
	}
	overlay(t, root, "v1")
	s.Tick()
	// Thread 4243 exits: its 2 s of wait stay counted.
	if err := os.RemoveAll(filepath.Join(root, "proc", "4242", "task", "4243")); err != nil {
		t.Fatal(err)
	}
	got := s.Totals()
	if got.RunWait != 3500*time.Millisecond || got.PSI != 10200*time.Millisecond || got.Busy != 39 || got.CPUs != 2 {
		t.Errorf("run wait %v, PSI %v, busy %v s of %d CPUs; want 3.5s, 10.2s, 39 s of 2", got.RunWait, got.PSI, got.Busy, got.CPUs)
	}
	th := got.Throttle
	if !th.OK || th.Periods != 150 || th.Throttled != 51 || th.ThrottledTime != 3400*time.Millisecond || th.Quota != 0.5 {
		t.Errorf("throttle %+v", th)
	}
}

// TestCombinedCPUController finds the cgroup v1 cpu controller mounted
// together with cpuacct (cpu,cpuacct, as most distributions mount it).
func TestCombinedCPUController(t *testing.T) {
	root := t.TempDir()
	for name, body := range map[string]string{
		"proc/4242/cgroup":    "3:cpu,cpuacct:/kubepods/burstable/pod1/ctr\n1:name=systemd:/x\n",
		"proc/4242/mountinfo": "31 30 0:28 / /sys/fs/cgroup/cpu,cpuacct rw,relatime - cgroup cgroup rw,cpu,cpuacct\n",
		"sys/fs/cgroup/cpu,cpuacct/kubepods/burstable/pod1/ctr/cpu.stat":          "nr_periods 7\nnr_throttled 3\nthrottled_time 120000000\n",
		"sys/fs/cgroup/cpu,cpuacct/kubepods/burstable/pod1/ctr/cpu.cfs_quota_us":  "200000\n",
		"sys/fs/cgroup/cpu,cpuacct/kubepods/burstable/pod1/ctr/cpu.cfs_period_us": "100000\n",
	} {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("4242", filepath.Join(root, "proc", "self")); err != nil {
		t.Fatal(err)
	}
	th := NewReaderAt(root).Take().Throttle
	want := Throttle{OK: true, Cgroup: "v1 cpu:/kubepods/burstable/pod1/ctr", Periods: 7, Throttled: 3, ThrottledTime: 120 * time.Millisecond, Quota: 2}
	if th != want {
		t.Errorf("throttle %+v, want %+v", th, want)
	}
}
