package telemetry

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/llmprobe/llmprobe/internal/ledger"
	"github.com/llmprobe/llmprobe/internal/sanitize"
)

// Labels of the connection series.
const (
	labelPhase       = "phase"
	labelReused      = "reused"
	labelHTTPVersion = "http_version"
	labelTLSVersion  = "tls_version"
	labelTLSCipher   = "tls_cipher"
	labelALPN        = "alpn"
	// noTLS is the TLS labels' value on plain HTTP.
	noTLS = "none"
)

// phaseMetrics are the connection series of every target: the phases of
// each attempt (llmprobe_http_phase_seconds, one native histogram per
// target and phase, whatever the class or traffic: a phase is the path's,
// not the workload's), new and reused connections counted, and the
// connection's HTTP and TLS versions as an info series.
type phaseMetrics struct {
	phase *histVec
	conns *prometheus.CounterVec
	info  *prometheus.GaugeVec

	mu      sync.Mutex
	targets map[string]*phaseSeries
}

// phaseSeries are one target's children, resolved once. A phase's
// histogram is made at its first observation: a target whose connections
// are all reused, or plain, exports no tls or resolve series.
type phaseSeries struct {
	target        string
	fresh, reused prometheus.Counter
	mu            sync.Mutex
	phases        []prometheus.Observer // by ledger.Phases' order; nil: not observed yet
	info          []string              // the info series' label values (target first); nil before the first
}

// nativeHistogram builds a catalog entry's histogram with native buckets
// only: no classic buckets (each would be a series of its own).
func nativeHistogram(name string) *histVec {
	m := spec(name)
	return newHistVec(histOpts{name: m.Name, help: m.Help, labels: m.Labels, maxBuckets: nativeMaxBuckets, minReset: nativeMinResetPeriod})
}

func newPhaseMetrics() *phaseMetrics {
	return &phaseMetrics{
		phase:   nativeHistogram(metricHTTPPhase),
		conns:   counter(metricHTTPConns),
		info:    gauge(metricHTTPConnInfo),
		targets: make(map[string]*phaseSeries),
	}
}

func (m *phaseMetrics) collectors() []prometheus.Collector {
	return []prometheus.Collector{m.phase, m.conns, m.info}
}

// seriesOf returns target's children, creating them the first time (both
// connection counters at zero).
func (m *phaseMetrics) seriesOf(target string) *phaseSeries {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.targets[target]
	if s == nil {
		s = &phaseSeries{target: target, phases: make([]prometheus.Observer, len(ledger.Phases)),
			fresh: m.conns.WithLabelValues(target, "false"), reused: m.conns.WithLabelValues(target, "true")}
		m.targets[target] = s
	}
	return s
}

// record observes the phases rec's attempt had, counts its connection and
// sets the target's info series.
func (m *phaseMetrics) record(rec *ledger.Record) {
	c := rec.Conn
	if c == nil {
		return
	}
	target := sanitize.String(rec.Target, maxLabelBytes)
	s := m.seriesOf(target)
	for i, p := range ledger.Phases {
		if d, ok := rec.PhaseDuration(p); ok {
			m.observer(s, i).Observe(d.Seconds())
		}
	}
	if c.Reused {
		s.reused.Inc()
	} else {
		s.fresh.Inc()
	}
	if c.HTTPVersion != "" {
		m.setInfo(s, []string{target, c.HTTPVersion, orNone(c.TLSVersion), orNone(c.TLSCipher), orNone(c.ALPN)})
	}
}

// observer is s's histogram of phase i, made the first time.
func (m *phaseMetrics) observer(s *phaseSeries, i int) prometheus.Observer {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.phases[i] == nil {
		s.phases[i] = m.phase.WithLabelValues(s.target, string(ledger.Phases[i]))
	}
	return s.phases[i]
}

// setInfo makes values the target's one info series.
func (m *phaseMetrics) setInfo(s *phaseSeries, values []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if equal(s.info, values) {
		return
	}
	if s.info != nil {
		m.info.DeleteLabelValues(s.info...)
	}
	s.info = values
	m.info.WithLabelValues(values...).Set(1)
}

// forget drops target's series.
func (m *phaseMetrics) forget(target string) {
	m.mu.Lock()
	delete(m.targets, target)
	m.mu.Unlock()
	for _, v := range []interface {
		DeletePartialMatch(prometheus.Labels) int
	}{m.phase, m.conns, m.info} {
		v.DeletePartialMatch(prometheus.Labels{labelTarget: target})
	}
}

// orNone is v, or none when empty (plain HTTP has no TLS).
func orNone(v string) string {
	if v == "" {
		return noTLS
	}
	return v
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
