package telemetry

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"

	"github.com/llmprobe/llmprobe/internal/ledger"
)

// TestPhaseSeries: a new connection's record observes its dial phases, a
// reused one's none of them; both count their connection; the target has
// one info series, the last response's, and none after ForgetTarget.
func TestPhaseSeries(t *testing.T) {
	r, reg := newTestRecorder(t, Options{})
	fresh := &ledger.Record{Target: "gw", Class: "c", Traffic: ledger.TrafficBaseline, Dispatched: ms, Headers: 30 * ms, FirstByte: 31 * ms, FirstContent: 40 * ms,
		Outcome: ledger.OK, Reason: ledger.ReasonStop,
		Conn: &ledger.Conn{DNS: ms, Connect: 2 * ms, TLS: 7 * ms, Got: 11 * ms, Wrote: 12 * ms, HTTPVersion: "1.1", TLSVersion: "1.3", TLSCipher: "TLS_AES_128_GCM_SHA256", ALPN: "http/1.1"}}
	reused := &ledger.Record{Target: "gw", Class: "c", Traffic: ledger.TrafficBaseline, Dispatched: ms, Headers: 30 * ms, FirstByte: 31 * ms, FirstContent: 40 * ms,
		Outcome: ledger.OK, Reason: ledger.ReasonStop,
		Conn: &ledger.Conn{Reused: true, Got: 2 * ms, Wrote: 3 * ms, HTTPVersion: "2", TLSVersion: "1.3", TLSCipher: "TLS_AES_128_GCM_SHA256", ALPN: "h2"}}
	r.Record(fresh)
	r.Record(reused)
	r.Record(reused)
	want := map[ledger.Phase]uint64{ledger.PhaseResolve: 1, ledger.PhaseConnect: 1, ledger.PhaseTLS: 1,
		ledger.PhaseWrite: 3, ledger.PhaseProcessing: 3, ledger.PhaseFirstByte: 3, ledger.PhaseFirstContent: 3}
	for p, n := range want {
		if got := phaseCount(t, reg, "gw", p); got != n {
			t.Errorf("phase %s: %d observations, want %d", p, got, n)
		}
	}
	if n, u := testutil.ToFloat64(r.phases.conns.WithLabelValues("gw", "false")), testutil.ToFloat64(r.phases.conns.WithLabelValues("gw", "true")); n != 1 || u != 2 {
		t.Errorf("connections new %v reused %v, want 1 and 2", n, u)
	}
	if got := testutil.CollectAndCount(r.phases.info); got != 1 {
		t.Errorf("%d info series, want the target's one", got)
	}
	if v := testutil.ToFloat64(r.phases.info.WithLabelValues("gw", "2", "1.3", "TLS_AES_128_GCM_SHA256", "h2")); v != 1 {
		t.Errorf("info series of the last response %v, want 1", v)
	}
	r.ForgetTarget("gw")
	for _, c := range r.phases.collectors() {
		if n := testutil.CollectAndCount(c); n != 0 {
			t.Errorf("%d series left after ForgetTarget", n)
		}
	}
}

// phaseCount is the observation count of target's phase histogram.
func phaseCount(t *testing.T, reg *prometheus.Registry, target string, p ledger.Phase) uint64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != metricHTTPPhase {
			continue
		}
		for _, m := range mf.GetMetric() {
			if labelsAre(m, map[string]string{labelTarget: target, labelPhase: string(p)}) {
				h := m.GetHistogram()
				if len(h.GetBucket()) > 0 || h.Schema == nil {
					t.Errorf("phase %s: %d classic buckets, native schema %v: want native buckets only", p, len(h.GetBucket()), h.Schema)
				}
				return h.GetSampleCount()
			}
		}
	}
	return 0
}

func labelsAre(m *dto.Metric, want map[string]string) bool {
	n := 0
	for _, l := range m.GetLabel() {
		if v, ok := want[l.GetName()]; ok && v == l.GetValue() {
			n++
		}
	}
	return n == len(want)
}
