package telemetry

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// allHostCounters has every group read, for the catalog test.
var allHostCounters = HostCounters{CPUOK: true, CPUBusySeconds: 1900, CPUStealSeconds: 3, CPUs: 2,
	PressureOK: true, PressureSeconds: 92, CgroupPressureOK: true, CgroupPressureSeconds: 60,
	ThrottleOK: true, Periods: 50, ThrottledPeriods: 41, ThrottledSeconds: 2.9, QuotaCPUs: 0.5,
	RunWaitOK: true, RunWaitSeconds: 3.5}

// TestHostCollector exports what was read, at scrape time, and leaves out
// (never zeroes) what was not.
func TestHostCollector(t *testing.T) {
	for _, tc := range []struct {
		name   string
		in     HostCounters
		want   string
		absent []string
	}{
		{"everything", allHostCounters, `
# HELP llmprobe_cgroup_cpu_quota_cpus CPU limit of the prober's cgroup in CPUs (cpu.max or cpu.cfs_quota_us / cpu.cfs_period_us); absent without a quota.
# TYPE llmprobe_cgroup_cpu_quota_cpus gauge
llmprobe_cgroup_cpu_quota_cpus 0.5
# HELP llmprobe_cgroup_cpu_throttled_periods_total Periods in which the prober's cgroup ran out of its CPU quota and was throttled (cpu.stat nr_throttled).
# TYPE llmprobe_cgroup_cpu_throttled_periods_total counter
llmprobe_cgroup_cpu_throttled_periods_total 41
# HELP llmprobe_cgroup_cpu_throttled_seconds_total Time the prober cgroup's tasks were held back by its CPU quota (cpu.stat throttled_time or throttled_usec).
# TYPE llmprobe_cgroup_cpu_throttled_seconds_total counter
llmprobe_cgroup_cpu_throttled_seconds_total 2.9
# HELP llmprobe_host_cpu_pressure_waiting_seconds_total Host CPU pressure: time in which at least one runnable task on the prober's host waited for a CPU (/proc/pressure/cpu, some total); rate() is the share of time stalled.
# TYPE llmprobe_host_cpu_pressure_waiting_seconds_total counter
llmprobe_host_cpu_pressure_waiting_seconds_total 92
# HELP llmprobe_run_queue_wait_seconds_total Time the prober's threads were runnable but waiting for a CPU, summed over threads (/proc/self/task/*/schedstat).
# TYPE llmprobe_run_queue_wait_seconds_total counter
llmprobe_run_queue_wait_seconds_total 3.5
`, nil},
		{"no cgroup quota, no PSI", HostCounters{CPUOK: true, CPUBusySeconds: 10, CPUs: 4, ThrottleOK: true, Periods: 0}, `
# HELP llmprobe_host_cpus CPUs of the prober's host (/proc/stat).
# TYPE llmprobe_host_cpus gauge
llmprobe_host_cpus 4
# HELP llmprobe_cgroup_cpu_throttled_periods_total Periods in which the prober's cgroup ran out of its CPU quota and was throttled (cpu.stat nr_throttled).
# TYPE llmprobe_cgroup_cpu_throttled_periods_total counter
llmprobe_cgroup_cpu_throttled_periods_total 0
`, []string{metricCgroupQuota, metricHostPressure, metricCgroupPressure, metricRunQueueWait}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reg := prometheus.NewPedanticRegistry()
			calls := 0
			if err := WatchHost(reg, func() HostCounters { calls++; return tc.in }); err != nil {
				t.Fatal(err)
			}
			names := []string{metricCgroupQuota, metricCgroupThrottled, metricCgroupThrottledSecs, metricHostPressure, metricRunQueueWait, metricHostCPUs}
			// Only the series the expectation names are compared; absent
			// ones must be absent.
			var want []string
			for _, n := range names {
				if strings.Contains(tc.want, "\n"+n+" ") {
					want = append(want, n)
				}
			}
			if err := testutil.GatherAndCompare(reg, strings.NewReader(tc.want), want...); err != nil {
				t.Error(err)
			}
			mfs, err := reg.Gather()
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]bool{}
			for _, mf := range mfs {
				got[mf.GetName()] = true
			}
			if len(tc.absent) == 0 && len(got) != len(names)+4 { // every series of the collector
				t.Errorf("%d series exported, want all %d", len(got), len(names)+4)
			}
			for _, n := range tc.absent {
				if got[n] {
					t.Errorf("%s exported though not read", n)
				}
			}
			if calls == 0 {
				t.Error("the counters were not read at scrape time")
			}
		})
	}
}
