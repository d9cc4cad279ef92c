// Package telemetry turns finished ledger records into metrics. One Recorder
// is a ledger.Sink and feeds both Prometheus (client_golang, native and
// classic histograms on the same series, a registry per daemon) and
// OpenTelemetry (GenAI semantic-convention instruments plus llmprobe.*
// instruments, base-2 exponential histograms, OTLP export configured by the
// standard OTEL_EXPORTER_OTLP_* variables) from the same records.
//
// The package measures nothing itself: every latency comes from the
// record's offsets, from the planned time (no coordinated omission). Gauges
// that describe the daemon's state (in flight, capacity, ladder steps,
// budgets, target identity) are set through methods the daemon calls.
//
// Every llmprobe_* metric is described once, in the catalog (Metrics in
// catalog.go: name, type, unit, labels, help and the matching OTel
// instrument). The collectors are built from it and docs/metrics.md is
// generated from it (TestMetricsDoc).
//
// Labels are bounded sets (target and class names from config, traffic,
// outcome, reason, ladder step); never a URL, key, prompt or error text.
// The server-supplied values, the model a target names and the version it
// reports, appear only in llmprobe_target_info (one series per target,
// replaced on change, cleaned by the one sanitiser, internal/sanitize, to
// at most 128 bytes) and never as an OTel attribute.
package telemetry
