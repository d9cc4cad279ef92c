// Package hostload measures the prober host's own health, so that a late
// generator can be blamed on the host that ran it rather than on the target:
// Go scheduler latency (runtime/metrics /sched/latencies:seconds: how long
// runnable goroutines waited for a CPU), the process's CPU time (from
// /proc/self/stat) and the host's CPU steal (from /proc/stat, where the
// kernel reports it).
//
// A Snapshot is cumulative; Between turns two snapshots into a
// stats.HostHealth over the time between them (a probe's window, a ladder
// step). A Sampler keeps the snapshots of a sliding window for the daemon.
// What cannot be read on a platform (no /proc) is reported unknown, never
// as zero.
//
// The same scheduler latency is exported to Prometheus the ecosystem's way,
// as go_sched_latencies_seconds by client_golang's Go collector (see
// internal/telemetry.NewRegistry).
package hostload
