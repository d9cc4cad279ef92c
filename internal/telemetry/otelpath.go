package telemetry

import (
	"context"
	"errors"
	"fmt"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/llmprobe/llmprobe/internal/ledger"
)

// Instrument names of the path to the model: the OTel side of
// llmprobe_http_phase_seconds, llmprobe_http_connections_total,
// llmprobe_buffered_streams_total and the certificate expiry gauges.
const (
	InstrumentHTTPPhase          = "llmprobe.http.phase.duration"
	InstrumentHTTPConnections    = "llmprobe.http.connections"
	InstrumentBufferedStreams    = "llmprobe.buffered_streams"
	InstrumentLeafCertExpiry     = "llmprobe.tls.leaf_cert.expiry"
	InstrumentEarliestCertExpiry = "llmprobe.tls.earliest_cert.expiry"
	InstrumentLastChainExpiry    = "llmprobe.tls.last_chain.expiry"
)

// otelPath are the path's instruments: like their Prometheus twins they
// carry the target only (a phase is the path's, not the workload's).
type otelPath struct {
	phase                               metric.Float64Histogram
	conns, buffered                     metric.Int64Counter
	leafExpiry, earliestCert, lastChain metric.Float64Gauge
}

func newOtelPath(m metric.Meter) (otelPath, error) {
	var p otelPath
	var errs []error
	g := func(name, desc string) metric.Float64Gauge {
		v, err := m.Float64Gauge(name, metric.WithUnit("s"), metric.WithDescription(desc))
		errs = append(errs, err)
		return v
	}
	var err error
	p.phase, err = m.Float64Histogram(InstrumentHTTPPhase, metric.WithUnit("s"), metric.WithDescription(spec(metricHTTPPhase).Help))
	errs = append(errs, err)
	p.conns, err = m.Int64Counter(InstrumentHTTPConnections, metric.WithUnit("{request}"), metric.WithDescription(spec(metricHTTPConns).Help))
	errs = append(errs, err)
	p.buffered, err = m.Int64Counter(InstrumentBufferedStreams, metric.WithUnit("{request}"), metric.WithDescription(spec(metricBuffered).Help))
	errs = append(errs, err)
	p.leafExpiry = g(InstrumentLeafCertExpiry, spec(metricLeafExpiry).Help)
	p.earliestCert = g(InstrumentEarliestCertExpiry, spec(metricEarliestCert).Help)
	p.lastChain = g(InstrumentLastChainExpiry, spec(metricLastChainCert).Help)
	if err := errors.Join(errs...); err != nil {
		return otelPath{}, fmt.Errorf("telemetry: create OTel path instruments: %w", err)
	}
	return p, nil
}

// otelPathSeries are one target's attribute sets for the path's
// instruments, built once with the series.
type otelPathSeries struct {
	target        metric.MeasurementOption
	phases        []metric.MeasurementOption // by ledger.Phases' order
	fresh, reused metric.MeasurementOption
}

func newOtelPathSeries(target string) otelPathSeries {
	t := attribute.String("llmprobe.target", target)
	with := func(kv ...attribute.KeyValue) metric.MeasurementOption {
		return metric.WithAttributeSet(attribute.NewSet(append([]attribute.KeyValue{t}, kv...)...))
	}
	s := otelPathSeries{target: with(), phases: make([]metric.MeasurementOption, len(ledger.Phases)),
		fresh: with(attribute.Bool("llmprobe.reused", false)), reused: with(attribute.Bool("llmprobe.reused", true))}
	for i, p := range ledger.Phases {
		s.phases[i] = with(attribute.String("llmprobe.phase", string(p)))
	}
	return s
}

// record observes r's phases and connection, counts a buffered stream and
// sets the certificate expiry, as phaseMetrics.record and pathMetrics.record
// do on the Prometheus side.
func (p otelPath) record(s *otelPathSeries, r *ledger.Record) {
	ctx := context.Background()
	if r.Outcome == ledger.OK && r.BufferedByIntermediary {
		p.buffered.Add(ctx, 1, s.target)
	}
	if c := r.Conn; c != nil {
		for i, ph := range ledger.Phases {
			if d, ok := r.PhaseDuration(ph); ok {
				p.phase.Record(ctx, d.Seconds(), s.phases[i])
			}
		}
		if c.Reused {
			p.conns.Add(ctx, 1, s.reused)
		} else {
			p.conns.Add(ctx, 1, s.fresh)
		}
	}
	if c := r.Cert; c != nil {
		p.leafExpiry.Record(ctx, float64(c.LeafExpiry), s.target)
		p.earliestCert.Record(ctx, float64(c.EarliestExpiry), s.target)
		if c.LastChainExpiry > 0 {
			p.lastChain.Record(ctx, float64(c.LastChainExpiry), s.target)
		}
	}
}
