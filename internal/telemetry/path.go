package telemetry

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/llmprobe/llmprobe/internal/ledger"
	"github.com/llmprobe/llmprobe/internal/metricdef"
)

// The path to the model: what lies between the prober and the server (a
// buffering intermediary, the server's certificates).
const (
	metricBuffered      = metricdef.Buffered
	metricLeafExpiry    = metricdef.LeafExpiry
	metricEarliestCert  = metricdef.EarliestCert
	metricLastChainCert = metricdef.LastChainCert
)

// pathSpecs are the catalog entries of the path's metrics.
func pathSpecs() []MetricSpec {
	targetOnly := []string{labelTarget}
	return []MetricSpec{
		{Name: metricBuffered, Kind: KindCounter, Unit: unitRequests, Labels: targetOnly, OTel: InstrumentBufferedStreams,
			Help: "Streams that ended ok with their tokens in one burst, or a few bursts each at once, though the server generated them over longer (ledger buffered_by_intermediary): an intermediary buffers the stream, so TTFT there is the full response time or its first buffer's."},
		{Name: metricLeafExpiry, Kind: KindGauge, Unit: unitTimestamp, Labels: targetOnly, OTel: InstrumentLeafCertExpiry,
			Help: "NotAfter of the target's own (leaf) TLS certificate, as its latest request over TLS saw it."},
		{Name: metricEarliestCert, Kind: KindGauge, Unit: unitTimestamp, Labels: targetOnly, OTel: InstrumentEarliestCertExpiry,
			Help: "Earliest NotAfter of every certificate the target presented (leaf and intermediates), as its latest request over TLS saw it; blackbox_exporter's probe_ssl_earliest_cert_expiry."},
		{Name: metricLastChainCert, Kind: KindGauge, Unit: unitTimestamp, Labels: targetOnly, OTel: InstrumentLastChainExpiry,
			Help: "Over the chains verified to a trusted root, the latest of each chain's earliest NotAfter (absent when verification is skipped); blackbox_exporter's probe_ssl_last_chain_expiry_timestamp_seconds."},
	}
}

// pathMetrics are the collectors of the path's metrics.
type pathMetrics struct {
	buffered                            *prometheus.CounterVec
	leafExpiry, earliestCert, lastChain *prometheus.GaugeVec
}

func newPathMetrics() pathMetrics {
	return pathMetrics{
		buffered:     counter(metricBuffered),
		leafExpiry:   gauge(metricLeafExpiry),
		earliestCert: gauge(metricEarliestCert),
		lastChain:    gauge(metricLastChainCert),
	}
}

func (p pathMetrics) collectors() []prometheus.Collector {
	return []prometheus.Collector{p.buffered, p.leafExpiry, p.earliestCert, p.lastChain}
}

func (p pathMetrics) perTarget() []interface {
	DeletePartialMatch(prometheus.Labels) int
} {
	return []interface {
		DeletePartialMatch(prometheus.Labels) int
	}{p.buffered, p.leafExpiry, p.earliestCert, p.lastChain}
}

// record counts a buffered stream and sets the target's certificate expiry
// from a record made over TLS. target is the label value, sanitised.
func (p pathMetrics) record(buffered prometheus.Counter, target string, r *ledger.Record) {
	if r.Outcome == ledger.OK && r.BufferedByIntermediary {
		buffered.Inc()
	}
	c := r.Cert
	if c == nil {
		return
	}
	p.leafExpiry.WithLabelValues(target).Set(float64(c.LeafExpiry))
	p.earliestCert.WithLabelValues(target).Set(float64(c.EarliestExpiry))
	if c.LastChainExpiry > 0 {
		p.lastChain.WithLabelValues(target).Set(float64(c.LastChainExpiry))
	}
}
