package telemetry

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// TestTargetFiles: one llmprobe_target_labels series per target with the
// union of the label names (empty where a target has none), replaced by
// each Set, and none when no target has labels; the change counters start at 0 for both results and count.
func TestTargetFiles(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	tf, err := NewTargetFiles(reg, "eu")
	if err != nil {
		t.Fatal(err)
	}
	tf.Set(map[string]map[string]string{"a": {"team": "x"}, "b": {"tier": "gold"}, "c": nil}, 2)
	tf.Changed(true)
	tf.Changed(false)
	tf.Changed(false)
	got := gatherLabels(t, reg)
	want := map[string]map[string]string{
		"a": {"team": "x", "tier": "", "region": "eu"},
		"b": {"team": "", "tier": "gold", "region": "eu"},
		"c": {"team": "", "tier": "", "region": "eu"},
	}
	if len(got.series) != len(want) {
		t.Fatalf("%d series, want %d: %v", len(got.series), len(want), got.series)
	}
	for target, w := range want {
		g := got.series[target]
		for k, v := range w {
			if g[k] != v {
				t.Errorf("%s: %s=%q, want %q (all: %v)", target, k, g[k], v, g)
			}
		}
	}
	if got.applied != 1 || got.refused != 2 || got.fromFiles != 2 {
		t.Errorf("applied %g refused %g targets %g, want 1 2 2", got.applied, got.refused, got.fromFiles)
	}
	tf.Set(map[string]map[string]string{"d": {"team": "y"}}, 0)
	if got := gatherLabels(t, reg); len(got.series) != 1 || got.series["d"]["team"] != "y" {
		t.Errorf("after a second Set: %v, want d alone with team y", got.series)
	}
	tf.Set(map[string]map[string]string{"d": nil, "e": {}}, 0)
	if got := gatherLabels(t, reg); len(got.series) != 0 {
		t.Errorf("no target has labels: %v, want no series", got.series)
	}
}

type gathered struct {
	series                      map[string]map[string]string
	applied, refused, fromFiles float64
}

func gatherLabels(t *testing.T, reg *prometheus.Registry) gathered {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	g := gathered{series: map[string]map[string]string{}}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			ls := labelMap(m)
			switch mf.GetName() {
			case metricTargetLabels:
				g.series[ls[labelTarget]] = ls
			case metricTargetFileChanges:
				if ls[labelResult] == ResultApplied {
					g.applied = m.GetCounter().GetValue()
				} else {
					g.refused = m.GetCounter().GetValue()
				}
			case metricTargetFileTargets:
				g.fromFiles = m.GetGauge().GetValue()
			}
		}
	}
	return g
}

func labelMap(m *dto.Metric) map[string]string {
	out := map[string]string{}
	for _, l := range m.GetLabel() {
		out[l.GetName()] = l.GetValue()
	}
	return out
}
