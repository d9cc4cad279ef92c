package telemetry

import (
	"context"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/llmprobe/llmprobe/internal/ledger"
)

// TestOTelPathInstruments: the path's OTel instruments carry what their
// Prometheus twins do, from the same records: a new connection's dial
// phases and none for a reused one, connections by reuse, a buffered ok
// stream counted (a buffered failure not), the certificate expiry of the
// latest record over TLS.
func TestOTelPathInstruments(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader), sdkmetric.WithView(ExponentialHistogramView()))
	defer mp.Shutdown(context.Background())
	r, _ := newTestRecorder(t, Options{MeterProvider: mp})
	old, later := time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC).Unix(), time.Date(2027, 3, 1, 0, 0, 0, 0, time.UTC).Unix()
	base := func(c *ledger.Conn, cert *ledger.CertFacts, buffered bool, o ledger.Outcome) *ledger.Record {
		return &ledger.Record{Target: "gw", Class: "c", Traffic: ledger.TrafficBaseline, Dispatched: ms, Headers: 30 * ms, FirstByte: 31 * ms, FirstContent: 40 * ms,
			Outcome: o, Reason: ledger.ReasonStop, Conn: c, Cert: cert, BufferedByIntermediary: buffered}
	}
	r.Record(base(&ledger.Conn{DNS: ms, Connect: 2 * ms, TLS: 7 * ms, Got: 11 * ms, Wrote: 12 * ms, HTTPVersion: "1.1"},
		&ledger.CertFacts{LeafExpiry: old, EarliestExpiry: old, LastChainExpiry: old}, true, ledger.OK))
	r.Record(base(&ledger.Conn{Reused: true, Got: 2 * ms, Wrote: 3 * ms, HTTPVersion: "2"},
		&ledger.CertFacts{LeafExpiry: later, EarliestExpiry: old}, false, ledger.OK))
	r.Record(base(&ledger.Conn{Reused: true, Got: 2 * ms, Wrote: 3 * ms, HTTPVersion: "2"}, nil, true, ledger.Timeout))
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	ms := map[string]metricdata.Metrics{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			ms[m.Name] = m
		}
	}
	phases := map[string]uint64{}
	for _, dp := range mustData[metricdata.ExponentialHistogram[float64]](t, ms, InstrumentHTTPPhase).DataPoints {
		onlyTarget(t, dp.Attributes, "gw", "llmprobe.phase")
		p, _ := attrValue(dp.Attributes, "llmprobe.phase")
		phases[p] += dp.Count
	}
	want := map[string]uint64{"resolve": 1, "connect": 1, "tls": 1, "write": 3, "processing": 3, "first_byte": 3, "first_content": 3}
	for p, n := range want {
		if phases[p] != n {
			t.Errorf("phase %s: %d observations, want %d (all: %v)", p, phases[p], n, phases)
		}
	}
	conns := map[string]int64{}
	for _, dp := range mustData[metricdata.Sum[int64]](t, ms, InstrumentHTTPConnections).DataPoints {
		onlyTarget(t, dp.Attributes, "gw", "llmprobe.reused")
		v, _ := attrValue(dp.Attributes, "llmprobe.reused")
		conns[v] += dp.Value
	}
	if conns["false"] != 1 || conns["true"] != 2 {
		t.Errorf("connections %v, want 1 new and 2 reused", conns)
	}
	if got := sumOf(mustData[metricdata.Sum[int64]](t, ms, InstrumentBufferedStreams)); got != 1 {
		t.Errorf("buffered streams %d, want 1 (the ok one; a failed stream is no verdict)", got)
	}
	for name, want := range map[string]int64{InstrumentLeafCertExpiry: later, InstrumentEarliestCertExpiry: old, InstrumentLastChainExpiry: old} {
		g := mustData[metricdata.Gauge[float64]](t, ms, name)
		if len(g.DataPoints) != 1 || g.DataPoints[0].Value != float64(want) {
			t.Errorf("%s = %+v, want one point at %d", name, g.DataPoints, want)
			continue
		}
		onlyTarget(t, g.DataPoints[0].Attributes, "gw")
	}
}

// mustData is instrument name's data, of type D.
func mustData[D any](t *testing.T, ms map[string]metricdata.Metrics, name string) D {
	t.Helper()
	d, ok := ms[name].Data.(D)
	if !ok {
		t.Fatalf("%s is %T, want %T; have %v", name, ms[name].Data, *new(D), keys(ms))
	}
	return d
}

func sumOf(s metricdata.Sum[int64]) int64 {
	var n int64
	for _, dp := range s.DataPoints {
		n += dp.Value
	}
	return n
}

// onlyTarget fails unless set holds llmprobe.target=target and the extra
// keys, nothing else (the path's series are per target, never per class).
func onlyTarget(t *testing.T, set attribute.Set, target string, extra ...string) {
	t.Helper()
	if v, _ := attrValue(set, "llmprobe.target"); v != target || set.Len() != 1+len(extra) {
		t.Errorf("attributes %v, want llmprobe.target=%s and %v only", set.ToSlice(), target, extra)
	}
	for _, k := range extra {
		if _, ok := attrValue(set, k); !ok {
			t.Errorf("attributes %v lack %s", set.ToSlice(), k)
		}
	}
}
