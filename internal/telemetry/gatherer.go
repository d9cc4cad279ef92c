package telemetry

import (
	dto "github.com/prometheus/client_model/go"

	"github.com/prometheus/client_golang/prometheus"
)

// RefreshingGatherer returns a Gatherer that calls refresh before every
// gather, so gauges the daemon sets from live state (in flight, oldest in
// flight, budgets) are current at scrape time rather than at the last tick.
// refresh must be quick and safe for concurrent use.
func RefreshingGatherer(g prometheus.Gatherer, refresh func()) prometheus.Gatherer {
	return prometheus.GathererFunc(func() ([]*dto.MetricFamily, error) {
		if refresh != nil {
			refresh()
		}
		return g.Gather()
	})
}
