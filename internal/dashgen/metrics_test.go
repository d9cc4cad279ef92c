package dashgen

import (
	"slices"
	"testing"

	"github.com/llmprobe/llmprobe/internal/telemetry"
)

// TestMetricsAreTheCatalog keeps Metrics equal to the telemetry catalog, so
// that a renamed or new metric reaches the dashboards' known series (and a
// query of a name the prober no longer exports fails
// TestQueriesReadOnlyKnownSeries).
func TestMetricsAreTheCatalog(t *testing.T) {
	var catalog []string
	for _, m := range telemetry.Metrics() {
		catalog = append(catalog, m.Name)
	}
	slices.Sort(catalog)
	got := slices.Sorted(slices.Values(Metrics))
	if !slices.Equal(got, catalog) {
		for _, n := range got {
			if !slices.Contains(catalog, n) {
				t.Errorf("dashgen.Metrics lists %s, which the telemetry catalog does not have", n)
			}
		}
		for _, n := range catalog {
			if !slices.Contains(got, n) {
				t.Errorf("the telemetry catalog has %s, which dashgen.Metrics does not list", n)
			}
		}
	}
	if len(got) != len(slices.Compact(slices.Clone(got))) {
		t.Errorf("dashgen.Metrics lists a name twice: %v", got)
	}
}
