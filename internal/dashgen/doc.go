// Package dashgen generates llmprobe's Grafana dashboards (with the Grafana
// Foundation SDK) and its Prometheus recording and alerting rules, and lists
// every dashboard query so that tests can run them against a real Prometheus.
//
// The generated files are committed: `go generate ./internal/dashgen` rewrites
// dashboards/*.json, alerts/llmprobe.rules.yml and
// deploy/kubernetes/base/prometheusrule.yaml, and TestGeneratedFilesUpToDate
// fails when the committed copies differ from the generator's output.
//
// Every figure read here is defined by the telemetry package's metric
// contract (names in Metrics); the package itself measures nothing.
package dashgen

//go:generate go run ./cmd/dashgen -root ../..
