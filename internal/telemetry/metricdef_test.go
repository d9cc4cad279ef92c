package telemetry

import (
	"slices"
	"testing"

	"github.com/llmprobe/llmprobe/internal/metricdef"
)

// TestCatalogIsMetricdef keeps the catalog equal to internal/metricdef's
// names, the one source dashgen reads too: a metric renamed or added there
// reaches the catalog (its collector, docs/metrics.md) and the dashboards'
// known series at once, and a query of a name the prober no longer exports
// fails dashgen's TestQueriesReadOnlyKnownSeries.
func TestCatalogIsMetricdef(t *testing.T) {
	var catalog []string
	for _, m := range Metrics() {
		catalog = append(catalog, m.Name)
	}
	slices.Sort(catalog)
	names := slices.Sorted(slices.Values(metricdef.Prober))
	for _, n := range names {
		if !slices.Contains(catalog, n) {
			t.Errorf("metricdef.Prober lists %s, which the telemetry catalog does not have", n)
		}
	}
	for _, n := range catalog {
		if !slices.Contains(names, n) {
			t.Errorf("the telemetry catalog has %s, which metricdef.Prober does not list", n)
		}
	}
	if len(names) != len(slices.Compact(slices.Clone(names))) {
		t.Errorf("metricdef.Prober lists a name twice: %v", names)
	}
}
