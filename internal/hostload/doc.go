// Package hostload measures the prober host's own health, so that a late
// generator can be blamed on the host that ran it rather than on the target.
// It reads the host where its CPU pressure lives, because another process
// holding the cores or a cgroup quota delays the prober's timers without
// any goroutine waiting runnable:
//
//   - host CPU pressure (/proc/pressure/cpu "some") and the process's own
//     cgroup v2 cpu.pressure;
//   - CPU throttling of the process's cgroup and its quota (cgroup v1 cpu
//     controller or v2 cpu.stat, cpu.cfs_quota_us or cpu.max), found from
//     /proc/self/cgroup and /proc/self/mountinfo;
//   - the process's threads' run-queue wait (/proc/self/task/*/schedstat);
//   - the host's busy CPU and steal (/proc/stat), the process's CPU time
//     (/proc/self/stat) and the Go scheduler latency (runtime/metrics
//     /sched/latencies:seconds).
//
// A Snapshot is cumulative; Between turns two snapshots into a
// verdict.HostHealth over the time between them (a probe's window, a ladder
// step). A Sampler keeps the snapshots of a sliding window for the daemon,
// and its Totals are what the daemon exports at scrape time. What cannot be
// read (no /proc, an old kernel without PSI, no cgroup of the process's
// own) is reported unknown, never as zero. NewReaderAt reads a file tree
// under another root (tests use fixture trees in testdata).
//
// The Go scheduler latency is exported to Prometheus the ecosystem's way,
// as go_sched_latencies_seconds by client_golang's Go collector (see
// internal/telemetry.NewRegistry).
package hostload
