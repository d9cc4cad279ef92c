package report

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/ladderresult"
	"github.com/llmprobe/llmprobe/internal/verdict"
)

// TestHostJSONEvidence: the host's CPU evidence reaches the JSON report,
// and what was not read is absent rather than 0.
func TestHostJSONEvidence(t *testing.T) {
	h := verdict.HostHealth{Known: true, Busy: 0.98, BusyKnown: true, HostCPUs: 2, Pressure: 0.92, PressureKnown: true,
		RunWait: 0.35, RunWaitKnown: true, ThrottleKnown: true, Cgroup: "v1 cpu:/x", Periods: 50, Throttled: 41,
		ThrottledTime: 2900 * time.Millisecond, Quota: 0.5}
	b, err := json.Marshal(ladderresult.HostJSONOf(h))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"host_cpu_busy_fraction":0.98`, `"host_cpus":2`, `"cpu_pressure_fraction":0.92`, `"run_queue_wait_fraction":0.35`,
		`"cgroup_throttling":{"cgroup":"v1 cpu:/x","periods":50,"throttled_periods":41,"throttled_s":2.9,"quota_cpus":0.5}`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("%s lacks %s", b, want)
		}
	}
	if strings.Contains(string(b), "cgroup_cpu_pressure") {
		t.Errorf("%s: cgroup pressure not read, yet present", b)
	}
}
