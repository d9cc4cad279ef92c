package telemetry

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/llmprobe/llmprobe/internal/ledger"
)

// certExpiry is the fixture's certificate expiry: three days after fixedNow.
var certExpiry = fixedNow.Add(72 * time.Hour)

// feedPath records the path facts of one buffered stream over TLS on the
// fixture's target, without counting it as a request again (Record's path
// to them: TestPathSeries).
func feedPath(r *Recorder) {
	rec := &ledger.Record{Target: "sim", Outcome: ledger.OK, BufferedByIntermediary: true,
		Cert: &ledger.CertFacts{LeafExpiry: certExpiry.Unix(), EarliestExpiry: certExpiry.Unix(), LastChainExpiry: certExpiry.Unix()}}
	r.prom.path.record(r.prom.path.buffered.WithLabelValues("sim"), "sim", rec)
	if r.otel != nil { // and their OTel twins, alone likewise
		s := newOtelPathSeries("sim")
		r.otel.path.record(&s, rec)
	}
}

func TestPathSeries(t *testing.T) {
	in3days, inAYear := certExpiry.Unix(), fixedNow.AddDate(1, 0, 0).Unix()
	base := ledger.Record{Target: "tls-gw", Class: "short", Traffic: ledger.TrafficBaseline, Planned: ms, Dispatched: 2 * ms,
		FirstContent: 900 * ms, LastContent: 901 * ms, End: 901 * ms, ContentEvents: 32, Outcome: ledger.OK, Reason: ledger.ReasonStop}
	buffered := base
	buffered.BufferedByIntermediary = true
	buffered.Cert = &ledger.CertFacts{LeafExpiry: inAYear, EarliestExpiry: in3days, LastChainExpiry: in3days}
	skipVerify := base
	skipVerify.Cert = &ledger.CertFacts{LeafExpiry: inAYear, EarliestExpiry: inAYear}
	failedButFlagged := base // a flag on a failed record is not counted
	failedButFlagged.Outcome, failedButFlagged.Reason, failedButFlagged.BufferedByIntermediary = ledger.StreamError, ledger.ReasonTruncated, true

	r, _ := newTestRecorder(t, Options{})
	r.Record(&base)
	if got := testutil.ToFloat64(r.prom.path.buffered.WithLabelValues("tls-gw")); got != 0 {
		t.Errorf("buffered streams %v after an unbuffered one, want 0 (the series exists from the first record)", got)
	}
	for _, rec := range []*ledger.Record{&buffered, &failedButFlagged, &buffered} {
		r.Record(rec)
	}
	if got := testutil.ToFloat64(r.prom.path.buffered.WithLabelValues("tls-gw")); got != 2 {
		t.Errorf("buffered streams %v, want 2", got)
	}
	checks := []struct {
		name string
		got  float64
		want int64
	}{
		{metricLeafExpiry, testutil.ToFloat64(r.prom.path.leafExpiry.WithLabelValues("tls-gw")), inAYear},
		{metricEarliestCert, testutil.ToFloat64(r.prom.path.earliestCert.WithLabelValues("tls-gw")), in3days},
		{metricLastChainCert, testutil.ToFloat64(r.prom.path.lastChain.WithLabelValues("tls-gw")), in3days},
	}
	for _, c := range checks {
		if c.got != float64(c.want) {
			t.Errorf("%s = %v, want %d", c.name, c.got, c.want)
		}
	}
	// A later connection that skipped verification updates what it saw
	// and leaves the verified chain's figure as it was.
	r.Record(&skipVerify)
	if got := testutil.ToFloat64(r.prom.path.earliestCert.WithLabelValues("tls-gw")); got != float64(inAYear) {
		t.Errorf("earliest expiry %v after a renewal, want %d", got, inAYear)
	}
	r.ForgetTarget("tls-gw")
	if n := testutil.CollectAndCount(r.prom.path.earliestCert); n != 0 {
		t.Errorf("%d certificate series left after ForgetTarget", n)
	}
}
