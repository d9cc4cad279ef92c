package dashgen

import "github.com/llmprobe/llmprobe/internal/metricdef"

// Metrics are the metric names of llmprobe's telemetry contract that the
// dashboards and rules may read (histograms by their native name; the
// classic series add _bucket, _sum and _count): internal/metricdef's, the
// one source the telemetry catalog is built from.
var Metrics = metricdef.Prober

// ScrapeMetrics are the series Prometheus itself writes for the llmprobe job.
var ScrapeMetrics = []string{"up", "scrape_duration_seconds"}

// HostMetrics are the prober process's own health series (client_golang's
// Go and process collectors): Go scheduler latency (a classic histogram)
// and CPU time, which tell a starved prober host from a slow target.
var HostMetrics = []string{"go_sched_latencies_seconds", "process_cpu_seconds_total"}
