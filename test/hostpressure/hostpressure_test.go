package hostpressure

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/cause"
	"github.com/llmprobe/llmprobe/internal/report"
	"github.com/llmprobe/llmprobe/internal/testutil"
)

var llmprobe testutil.Binary

// llmprobeBin builds the binary once per test process.
func llmprobeBin(t *testing.T) string { return llmprobe.Path(t) }

func TestMain(m *testing.M) { os.Exit(llmprobe.Main(m)) }

// probeArgs is a short probe of the in-process simulator; quotaArgs a
// heavier one, whose streams cost the prober (and the simulator in its
// process) more than 0.1 CPU.
var (
	probeArgs = []string{"probe", "--json", "--rate", "5", "--duration", "6s", "--max-tokens", "16", "--drain", "60s"}
	quotaArgs = []string{"probe", "--json", "--rate", "40", "--duration", "6s", "--max-tokens", "64", "--drain", "90s"}
)

// result is one run of the binary.
type result struct {
	code   int
	probe  report.Probe
	stderr string
}

// run runs the binary (through sh -c script when wrap is set: "$@" is
// the binary and its arguments) and decodes its JSON report.
func run(t *testing.T, wrap string, probe []string) result {
	t.Helper()
	args := append([]string{llmprobeBin(t)}, probe...)
	if wrap != "" {
		args = append([]string{"sh", "-c", wrap, "sh"}, args...)
	}
	stdout, stderr, code := testutil.Run(t, 3*time.Minute, nil, args[0], args[1:]...)
	r := result{code: code, stderr: string(stderr)}
	if err := json.Unmarshal(stdout, &r.probe); err != nil {
		t.Fatalf("exit %d, report not JSON: %v\nstdout: %.2000s\nstderr: %s", r.code, err, stdout, r.stderr)
	}
	return r
}

// hostCause reports whether every cause of an invalid verdict about
// dispatch is a host cause, and names the causes.
func hostCause(p report.Probe) (bool, string) {
	var names []string
	ok := true
	for _, c := range p.InvalidCauses {
		names = append(names, c.Cause)
		if c.Cause == string(cause.DispatchLag) {
			ok = false
		}
	}
	return ok, strings.Join(names, ",")
}

// spinAdvised reports whether any advice suggests spinning.
func spinAdvised(p report.Probe) bool {
	for _, c := range p.InvalidCauses {
		if strings.Contains(c.WhatToDo, "(--spin") && !strings.Contains(c.WhatToDo, "not advised") && !strings.Contains(c.WhatToDo, "do not spin") {
			return true
		}
	}
	return false
}

func linuxLong(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("runs the built binary for seconds under CPU load")
	}
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc and cgroups")
	}
}

// TestBusyLoopsNameTheHost: with more busy loops than CPUs, `llmprobe
// probe` is valid, or invalid with the host named (host_starved, never
// dispatch_lag), its host evidence shows the busy CPU, and no advice
// suggests --spin.
func TestBusyLoopsNameTheHost(t *testing.T) {
	linuxLong(t)
	bin := llmprobeBin(t) // build before the loops take the CPUs
	_ = bin
	testutil.BusyLoops(t, max(3, runtime.NumCPU()+1), 5*time.Minute)
	time.Sleep(300 * time.Millisecond)
	r := run(t, "", probeArgs)
	h := r.probe.Host
	if h == nil || h.HostBusy == nil || *h.HostBusy < 0.9 {
		t.Fatalf("host evidence %+v: want the host ≥ 90%% busy under busy loops", h)
	}
	if h.Pressure != nil && *h.Pressure < 0.2 {
		t.Errorf("host CPU pressure %.2f under busy loops, want ≥ 0.2", *h.Pressure)
	}
	ok, causes := hostCause(r.probe)
	if !r.probe.Valid && !ok {
		t.Errorf("exit %d, causes %s: a late generator on a busy host blamed on dispatch\n%+v", r.code, causes, r.probe.InvalidCauses)
	}
	if spinAdvised(r.probe) {
		t.Errorf("advice suggests --spin on a busy host: %+v", r.probe.InvalidCauses)
	}
	t.Logf("exit %d, valid %v, causes %s; host busy %.2f", r.code, r.probe.Valid, causes, *h.HostBusy)
}

// TestQuietHostValid: without added load the probe is valid, or, the
// machine being shared, invalid with a host cause only.
func TestQuietHostValid(t *testing.T) {
	linuxLong(t)
	r := run(t, "", probeArgs)
	if ok, causes := hostCause(r.probe); !r.probe.Valid && (!ok || r.code != 4) {
		t.Errorf("exit %d, causes %s: want valid, or invalid with a host cause\n%+v", r.code, causes, r.probe.InvalidCauses)
	} else if !r.probe.Valid {
		t.Logf("the shared host was busy: %s (%+v)", causes, r.probe.InvalidCauses)
	}
}

// v1CPU is the cgroup v1 cpu controller's mount point (/proc/self/mountinfo),
// "" when it has none.
func v1CPU(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(b), "\n") {
		pre, post, ok := strings.Cut(line, " - ")
		f, g := strings.Fields(pre), strings.Fields(post)
		if !ok || len(f) < 5 || len(g) < 3 || g[0] != "cgroup" {
			continue
		}
		for _, o := range strings.Split(g[2], ",") {
			if o == "cpu" {
				return f[4]
			}
		}
	}
	return ""
}

// TestCgroupV1QuotaNamed runs `llmprobe probe` inside a cgroup v1 with a
// CPU quota of 0.1 CPU (cpu.cfs_quota_us 10000 of 100000): the verdict is
// invalid with cgroup_throttled named and its evidence quoted, or valid
// with the throttling shown in the host evidence. Root only; the cgroup is
// removed after.
func TestCgroupV1QuotaNamed(t *testing.T) {
	linuxLong(t)
	if os.Geteuid() != 0 {
		t.Skip("creating a cgroup needs root")
	}
	mnt := v1CPU(t)
	if mnt == "" {
		t.Skip("no cgroup v1 cpu controller mounted (/proc/self/mountinfo)")
	}
	suffix := make([]byte, 4)
	_, _ = rand.Read(suffix)
	dir := filepath.Join(mnt, "llmprobe-test-"+hex.EncodeToString(suffix))
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Skipf("cannot create a cgroup under %s: %v", mnt, err)
	}
	t.Cleanup(func() {
		// The probe has exited: the cgroup is empty and removable.
		for i := 0; i < 50; i++ {
			if err := os.Remove(dir); err == nil || os.IsNotExist(err) {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
		t.Errorf("cgroup %s not removed", dir)
	})
	for f, v := range map[string]string{"cpu.cfs_period_us": "100000", "cpu.cfs_quota_us": "10000"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte(v), 0o644); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
	}
	llmprobeBin(t)
	r := run(t, `echo $$ > `+filepath.Join(dir, "cgroup.procs")+` && exec "$@"`, quotaArgs)
	h := r.probe.Host
	if h == nil || h.Throttling == nil {
		t.Fatalf("exit %d: no cgroup throttling in the host evidence %+v", r.code, h)
	}
	th := h.Throttling
	if th.QuotaCPUs < 0.099 || th.QuotaCPUs > 0.101 || !strings.HasSuffix(th.Cgroup, filepath.Base(dir)) {
		t.Errorf("throttling %+v: want quota 0.1 CPU in %s", th, filepath.Base(dir))
	}
	if r.probe.Valid {
		if th.ThrottledPeriods == 0 {
			t.Errorf("valid under a 0.1 CPU quota without a throttled period shown: %+v", th)
		}
		t.Logf("valid; throttling shown: %+v", th)
		return
	}
	var named *report.CauseJSON
	for i, c := range r.probe.InvalidCauses {
		if c.Cause == string(cause.CgroupThrottled) {
			named = &r.probe.InvalidCauses[i]
		}
	}
	if named == nil || r.code != 4 {
		t.Fatalf("exit %d, causes %+v: want cgroup_throttled (throttling %+v)", r.code, r.probe.InvalidCauses, th)
	}
	if !strings.Contains(named.Reason, "cgroup throttled ") || !strings.Contains(named.Reason, "(quota 0.1 CPU)") ||
		!strings.Contains(named.WhatToDo, "CPU limit") || spinAdvised(r.probe) {
		t.Errorf("cause %+v", named)
	}
	if !strings.Contains(r.stderr, "exit 4: generator invalid (cgroup_throttled") {
		t.Errorf("stderr: %s", r.stderr)
	}
	t.Logf("%s\nwhat to do: %s", named.Reason, named.WhatToDo)
}
