// Package admin serves the daemon's HTTP endpoints: /metrics (Prometheus,
// OpenMetrics and protobuf negotiated, so native histograms survive the
// scrape), /-/healthy, /-/ready, /debug/requests (recent ledger records per
// target from a ledger.Ring), /config (the effective configuration with
// secrets redacted) and, at /, the status page it is handed (statuspage).
//
// TLS and basic authentication come from a Prometheus exporter-toolkit web
// configuration file. The package holds no state of its own beyond views
// of what the daemon hands it.
package admin
