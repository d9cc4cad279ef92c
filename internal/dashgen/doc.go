// Package dashgen generates llmprobe's Grafana dashboards (with the Grafana
// Foundation SDK) and its Prometheus recording and alerting rules, and lists
// every dashboard query so that tests can run them against a real Prometheus.
//
// The generated files are committed: `go generate ./internal/dashgen` rewrites
// dashboards/*.json, alerts/llmprobe.rules.yml and
// deploy/kubernetes/base/prometheusrule.yaml, and TestGeneratedFilesUpToDate
// fails when the committed copies differ from the generator's output.
//
// The rules and dashboards are generated from one configuration, as the
// Prometheus ecosystem's mixins are: RuleOptions, whose Mixin (runbook URL
// pattern, severity per alert, scrape selector, extra alert labels) a
// deployment supplies as a YAML or JSON file (LoadMixin; `dashgen -config
// FILE -out DIR`). The committed files are the defaults' output.
//
// Every figure read here is defined by the telemetry package's metric
// contract (names in Metrics); the package itself measures nothing.
package dashgen

//go:generate go run ./cmd/dashgen -root ../..
