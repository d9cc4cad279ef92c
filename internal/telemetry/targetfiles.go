package telemetry

import (
	"fmt"
	"slices"
	"sync"

	"github.com/llmprobe/llmprobe/internal/metricdef"
	"github.com/prometheus/client_golang/prometheus"
)

// Metric names and label values of the targets taken from files
// (target_files) and of the targets' constant labels.
const (
	metricTargetLabels      = metricdef.TargetLabels
	metricTargetFileChanges = metricdef.TargetFileChanges
	metricTargetFileTargets = metricdef.TargetFileTargets
	labelResult             = "result"
	// ResultApplied and ResultRefused are the values of result on
	// llmprobe_target_files_changes_total.
	ResultApplied = "applied"
	ResultRefused = "refused"
)

// TargetFiles exports what the daemon's target files gave it: one
// llmprobe_target_labels series per target, carrying its constant labels
// (the Prometheus info idiom: value 1, joined with group_left), the count
// of targets taken from files, and the changes to the files seen, applied
// or refused.
type TargetFiles struct {
	labels  *targetLabels
	changes *prometheus.CounterVec
	targets prometheus.Gauge
}

// NewTargetFiles registers the series with reg; region, when set, is their
// constant region label (as on the Recorder's series).
func NewTargetFiles(reg prometheus.Registerer, region string) (*TargetFiles, error) {
	var cl prometheus.Labels
	if region != "" {
		cl = prometheus.Labels{"region": region}
	}
	ch, tg := spec(metricTargetFileChanges), spec(metricTargetFileTargets)
	t := &TargetFiles{
		labels:  &targetLabels{desc: spec(metricTargetLabels), region: region},
		changes: prometheus.NewCounterVec(prometheus.CounterOpts{Name: ch.Name, Help: ch.Help, ConstLabels: cl}, ch.Labels),
		targets: prometheus.NewGauge(prometheus.GaugeOpts{Name: tg.Name, Help: tg.Help, ConstLabels: cl}),
	}
	for _, r := range []string{ResultApplied, ResultRefused} {
		t.changes.WithLabelValues(r) // both exist from the start: a rate alert needs no absent()
	}
	for _, c := range []prometheus.Collector{t.labels, t.changes, t.targets} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("telemetry: register target files series: %w", err)
		}
	}
	return t, nil
}

// Set replaces the targets' constant labels (target name → labels; every
// running target, with or without labels) and the count of targets taken
// from files: after a configuration loaded.
func (t *TargetFiles) Set(labels map[string]map[string]string, fromFiles int) {
	t.labels.set(labels)
	t.targets.Set(float64(fromFiles))
}

// Changed counts one change to the target files: applied (the
// configuration reloaded) or refused.
func (t *TargetFiles) Changed(applied bool) {
	r := ResultRefused
	if applied {
		r = ResultApplied
	}
	t.changes.WithLabelValues(r).Inc()
}

// targetLabels is llmprobe_target_labels: an unchecked collector, since
// the label names are the configuration's. When any target has constant
// labels, every target has one series carrying the union of the names,
// empty (absent to Prometheus) where a target has none, so a group_left
// join keeps every target; when none has, there is no series.
type targetLabels struct {
	desc   MetricSpec
	region string
	mu     sync.Mutex
	byName map[string]map[string]string
}

func (c *targetLabels) set(m map[string]map[string]string) {
	cp := make(map[string]map[string]string, len(m))
	for n, ls := range m {
		cp[n] = ls // the caller's maps are the running configuration's: never written
	}
	c.mu.Lock()
	c.byName = cp
	c.mu.Unlock()
}

// Describe sends nothing: the label names follow the configuration.
func (c *targetLabels) Describe(chan<- *prometheus.Desc) {}

// Collect sends one series per target.
func (c *targetLabels) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	m := c.byName
	c.mu.Unlock()
	if len(m) == 0 {
		return
	}
	var names []string
	for _, ls := range m {
		for k := range ls {
			if !slices.Contains(names, k) {
				names = append(names, k)
			}
		}
	}
	if len(names) == 0 {
		return // no target has constant labels: nothing to join, no series (docs/metrics.md#cardinality)
	}
	slices.Sort(names)
	var cl prometheus.Labels
	if c.region != "" {
		cl = prometheus.Labels{"region": c.region}
	}
	desc := prometheus.NewDesc(c.desc.Name, c.desc.Help, append([]string{labelTarget}, names...), cl)
	for target, ls := range m {
		vals := make([]string, 0, len(names)+1)
		vals = append(vals, target)
		for _, n := range names {
			vals = append(vals, ls[n])
		}
		ch <- prometheus.MustNewConstMetric(desc, prometheus.GaugeValue, 1, vals...)
	}
}
