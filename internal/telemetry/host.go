package telemetry

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// HostCounters are the prober host's cumulative CPU counters as read at
// scrape time (internal/hostload reads them; the daemon hands them over).
// Each group has its OK flag: false where the platform or the process's
// cgroup does not expose it, and its series are then absent, never 0.
type HostCounters struct {
	// CPUOK: /proc/stat was read. Busy and steal CPU seconds over every
	// CPU of the host; CPUs is how many it has.
	CPUOK                           bool
	CPUBusySeconds, CPUStealSeconds float64
	CPUs                            int
	// PressureOK: /proc/pressure/cpu was read; PressureSeconds is its
	// "some" total.
	PressureOK      bool
	PressureSeconds float64
	// CgroupPressureOK: the process's own cgroup v2 cpu.pressure was read.
	CgroupPressureOK      bool
	CgroupPressureSeconds float64
	// ThrottleOK: the process's cgroup's cpu.stat was read (v1 cpu
	// controller or v2). QuotaCPUs is its CPU limit (0: none).
	ThrottleOK                bool
	Periods, ThrottledPeriods uint64
	ThrottledSeconds          float64
	QuotaCPUs                 float64
	// RunWaitOK: the threads' schedstat was read; RunWaitSeconds is the
	// time they waited runnable for a CPU.
	RunWaitOK      bool
	RunWaitSeconds float64
}

// hostCollector exports HostCounters at scrape time, its counters
// monotone by construction (monotone).
type hostCollector struct {
	read                                                       func() HostCounters
	busy, steal, cpus, psi, cgPSI, periods, throttled, thrSecs *prometheus.Desc
	quota, runWait                                             *prometheus.Desc
	mono                                                       monotone
}

// Describe implements prometheus.Collector.
func (c *hostCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.busy, c.steal, c.cpus, c.psi, c.cgPSI, c.periods, c.throttled, c.thrSecs, c.quota, c.runWait} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (c *hostCollector) Collect(ch chan<- prometheus.Metric) {
	h := c.read()
	counter := func(d *prometheus.Desc, v float64) {
		ch <- c.mono.counter(d, v)
	}
	if h.CPUOK {
		counter(c.busy, h.CPUBusySeconds)
		counter(c.steal, h.CPUStealSeconds)
		ch <- prometheus.MustNewConstMetric(c.cpus, prometheus.GaugeValue, float64(h.CPUs))
	}
	if h.PressureOK {
		counter(c.psi, h.PressureSeconds)
	}
	if h.CgroupPressureOK {
		counter(c.cgPSI, h.CgroupPressureSeconds)
	}
	if h.ThrottleOK {
		counter(c.periods, float64(h.Periods))
		counter(c.throttled, float64(h.ThrottledPeriods))
		counter(c.thrSecs, h.ThrottledSeconds)
		if h.QuotaCPUs > 0 {
			ch <- prometheus.MustNewConstMetric(c.quota, prometheus.GaugeValue, h.QuotaCPUs)
		}
	}
	if h.RunWaitOK {
		counter(c.runWait, h.RunWaitSeconds)
	}
}

// NewHostCollector returns a collector exporting the llmprobe_host_* and
// llmprobe_cgroup_* series and llmprobe_run_queue_wait_seconds_total from
// read, called at every scrape. Register it once per process.
func NewHostCollector(read func() HostCounters) prometheus.Collector {
	return &hostCollector{read: read,
		busy: desc(metricHostBusy), steal: desc(metricHostSteal), cpus: desc(metricHostCPUs),
		psi: desc(metricHostPressure), cgPSI: desc(metricCgroupPressure),
		periods: desc(metricCgroupPeriods), throttled: desc(metricCgroupThrottled), thrSecs: desc(metricCgroupThrottledSecs),
		quota: desc(metricCgroupQuota), runWait: desc(metricRunQueueWait)}
}

// WatchHost registers NewHostCollector(read) with reg.
func WatchHost(reg prometheus.Registerer, read func() HostCounters) error {
	if err := reg.Register(NewHostCollector(read)); err != nil {
		return fmt.Errorf("telemetry: register host collector: %w", err)
	}
	return nil
}
