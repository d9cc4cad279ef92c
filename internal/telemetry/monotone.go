package telemetry

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

// monotone keeps the counters a collector reads from cumulative sources
// (the kernel's, a sink's) monotone by construction: each series exports
// the largest value it has exported, so a source that steps back (a float
// derived by subtraction, a kernel counter such as iowait that may go
// back) never reads as a counter reset — a false spike in rate(). A value
// held is the source's own earlier reading; the source's next rise
// passes it again. Counters kept by prometheus.Counter are monotone
// already (Add refuses a negative).
type monotone struct {
	mu   sync.Mutex
	last map[*prometheus.Desc]float64
}

// counter returns the const counter of d at v, or at the largest value d
// exported before when v is below it (or not a number).
func (m *monotone) counter(d *prometheus.Desc, v float64) prometheus.Metric {
	m.mu.Lock()
	if m.last == nil {
		m.last = make(map[*prometheus.Desc]float64)
	}
	if last, ok := m.last[d]; ok && !(v >= last) {
		v = last
	}
	m.last[d] = v
	m.mu.Unlock()
	return prometheus.MustNewConstMetric(d, prometheus.CounterValue, v)
}
