package telemetry

import (
	"context"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/prometheus/common/expfmt"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/llmprobe/llmprobe/internal/answercheck"
	"github.com/llmprobe/llmprobe/internal/ledger"
)

// checkFixture is a canary class's records: add passed twice and failed
// once (mismatch), schema failed (invalid_json) and was not judged once.
func checkFixture() []*ledger.Record {
	rec := func(id uint64, name string, res answercheck.Result, reason answercheck.Reason) *ledger.Record {
		o := ledger.OK
		if res == answercheck.NotJudged {
			o = ledger.HTTPError
		}
		return &ledger.Record{ID: id, Target: "sim", Class: "canary", Traffic: ledger.TrafficBaseline, Outcome: o,
			Check: &ledger.CheckRecord{Name: name, Result: res, Reason: reason}}
	}
	return []*ledger.Record{
		rec(61, "add", answercheck.Pass, ""), rec(62, "add", answercheck.Pass, ""), rec(63, "add", answercheck.Fail, answercheck.Mismatch),
		rec(64, "schema", answercheck.Fail, answercheck.InvalidJSON), rec(65, "schema", answercheck.NotJudged, ""),
	}
}

// TestAnswerChecks: a finished record's check is counted once by check,
// result and reason (the reason absent unless it failed), in Prometheus
// and in its OTel twin; a record without a check adds nothing; a result
// or reason outside the closed sets is dropped, never a label; InitChecks
// creates the series a check's kind can give at zero.
func TestAnswerChecks(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer mp.Shutdown(context.Background())
	r, _ := newTestRecorder(t, Options{MeterProvider: mp})
	r.InitChecks("sim", "canary", []answercheck.Check{{Name: "add", Expect: &answercheck.Expect{}}, {Name: "tool", Tool: &answercheck.ToolCheck{}}})
	if n := testutil.CollectAndCount(r.prom.answerChecks); n != 2+1+2+4 {
		t.Errorf("%d series at zero, want 9 (pass, not_judged and each reason of expect and tool_call)", n)
	}
	for _, rec := range checkFixture() {
		r.Record(rec)
	}
	r.Record(&ledger.Record{ID: 70, Target: "sim", Class: "canary", Outcome: ledger.OK})
	bad := []*ledger.CheckRecord{
		{Name: "add", Result: "maybe"},
		{Name: "add", Result: answercheck.Fail, Reason: "the server said <b>no</b>"},
	}
	for i, c := range bad {
		r.Record(&ledger.Record{ID: uint64(80 + i), Target: "sim", Class: "canary", Outcome: ledger.OK, Check: c})
	}
	for _, tc := range []struct {
		check, result, reason string
		want                  float64
	}{
		{"add", "pass", "", 2}, {"add", "fail", "mismatch", 1}, {"add", "not_judged", "", 0},
		{"schema", "fail", "invalid_json", 1}, {"schema", "not_judged", "", 1}, {"tool", "fail", "wrong_tool", 0},
	} {
		if got := testutil.ToFloat64(r.prom.answerChecks.WithLabelValues("sim", "canary", tc.check, tc.result, tc.reason)); got != tc.want {
			t.Errorf("%s %s %q: %v, want %v", tc.check, tc.result, tc.reason, got, tc.want)
		}
	}
	if got := testutil.ToFloat64(r.prom.dropped.WithLabelValues(DropLabel)); got != float64(len(bad)) {
		t.Errorf("dropped label values %v, want %d", got, len(bad))
	}
	out, err := testutil.CollectAndFormat(r.prom.answerChecks, expfmt.TypeTextPlain)
	if err != nil {
		t.Fatal(err)
	}
	if s := string(out); strings.Contains(s, "maybe") || strings.Contains(s, "server said") {
		t.Errorf("a value outside the closed sets reached a label:\n%s", s)
	}

	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	got := map[string]int64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != InstrumentAnswerChecks {
				continue
			}
			for _, dp := range m.Data.(metricdata.Sum[int64]).DataPoints {
				check, _ := attrValue(dp.Attributes, "llmprobe.check")
				res, _ := attrValue(dp.Attributes, "llmprobe.result")
				reason, _ := attrValue(dp.Attributes, "llmprobe.reason")
				got[check+" "+res+" "+reason] += dp.Value
			}
		}
	}
	want := map[string]int64{"add pass ": 2, "add fail mismatch": 1, "schema fail invalid_json": 1, "schema not_judged ": 1}
	if len(got) != len(want) {
		t.Errorf("OTel %s: %v, want %v", InstrumentAnswerChecks, got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("OTel %s %q: %d, want %d", InstrumentAnswerChecks, k, got[k], v)
		}
	}
}
