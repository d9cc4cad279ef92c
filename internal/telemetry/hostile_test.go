package telemetry

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/llmprobe/llmprobe/internal/ledger"
)

// TestRecorderNeverPanicsOnNegativeUsage (issue 8, defect 1): a record whose
// usage carries a negative token count (decoders refuse them, but the
// recorder does not rely on it) is recorded without the count: no panic
// ("counter cannot decrease in value"), the rest of the record counted,
// the drop counted in llmprobe_telemetry_dropped_total{reason="negative"}
// and logged once.
func TestRecorderNeverPanicsOnNegativeUsage(t *testing.T) {
	var logs bytes.Buffer
	r, reg := newTestRecorder(t, Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	for i := range 3 {
		r.Record(&ledger.Record{ID: uint64(i + 1), Target: "t", Class: "c", Traffic: ledger.TrafficBaseline,
			Planned: ms, Dispatched: 2 * ms, FirstContent: 5 * ms, LastContent: 6 * ms, End: 7 * ms,
			Usage:   ledger.Usage{Known: true, Prompt: -5, Completion: 3},
			Outcome: ledger.OK, Reason: ledger.ReasonStop})
	}
	if got := testutil.ToFloat64(r.prom.dropped.WithLabelValues(DropNegative)); got != 3 {
		t.Errorf("dropped{negative} = %v, want 3", got)
	}
	if got := testutil.ToFloat64(r.prom.requests.WithLabelValues("t", "c", "baseline", "none", "ok", "stop")); got != 3 {
		t.Errorf("requests ok/stop = %v, want 3: the record itself must still count", got)
	}
	if got := testutil.ToFloat64(r.prom.tokens.WithLabelValues("t", "c", "baseline", "none", "output")); got != 9 {
		t.Errorf("output tokens = %v, want 9 (the valid count kept)", got)
	}
	if n := strings.Count(logs.String(), "not recorded"); n != 1 {
		t.Errorf("logged %d times, want once:\n%s", n, logs.String())
	}
	if _, err := reg.Gather(); err != nil {
		t.Errorf("gather: %v", err)
	}
}

// TestTargetInfoNeverPanics (issue 8, defects 2 and 3): an identity value
// that is not valid UTF-8, or longer than 128 bytes with a multi-byte
// character across the bound, becomes a clean label value: no panic
// ("label value ... is not valid UTF-8"), a valid exposition.
func TestTargetInfoNeverPanics(t *testing.T) {
	r, reg := newTestRecorder(t, Options{})
	long := strings.Repeat("a", 127) + "é" + strings.Repeat("b", 50)
	for i, v := range []struct{ model, version, want string }{
		{"m", "caf\xe9", "caf\uFFFD"},
		{"m\x1b[31m", long, strings.Repeat("a", 127)}, // cut before the character across 128 bytes
		{"m", "Bearer\x00\x07", "Bearer\uFFFD\uFFFD"},
	} {
		r.SetTargetInfo("t", v.model, v.version)
		// Each value in turn is published, clean.
		mfs, err := reg.Gather()
		if err != nil {
			t.Fatalf("value %d: gather: %v", i+1, err)
		}
		n := 0
		for _, mf := range mfs {
			if mf.GetName() != "llmprobe_target_info" {
				continue
			}
			for _, m := range mf.GetMetric() {
				n++
				for _, lp := range m.GetLabel() {
					if !utf8.ValidString(lp.GetValue()) || len(lp.GetValue()) > maxLabelBytes || strings.ContainsAny(lp.GetValue(), "\x00\x07\x1b") {
						t.Errorf("value %d: label %s=%q", i+1, lp.GetName(), lp.GetValue())
					}
					if lp.GetName() == "version" && lp.GetValue() != v.want {
						t.Errorf("value %d: version %q, want %q", i+1, lp.GetValue(), v.want)
					}
				}
			}
		}
		if n != 1 {
			t.Errorf("value %d: %d target_info series, want 1", i+1, n)
		}
	}
	if got := testutil.ToFloat64(r.prom.identityChanges.WithLabelValues("t")); got != 2 {
		t.Errorf("identity changes %v, want 2", got)
	}
}

// TestRecordOutsideTheClosedSetIsCounted: a label value the registry would refuse (here a
// record whose outcome/reason pair is outside the closed set and whose
// target is not valid UTF-8) is recorded as well as it can be or dropped
// and counted, never a crash.
func TestRecordOutsideTheClosedSetIsCounted(t *testing.T) {
	r, _ := newTestRecorder(t, Options{})
	r.Record(&ledger.Record{ID: 1, Target: "t\xff", Class: "c", Traffic: ledger.TrafficBaseline, Planned: ms,
		Outcome: ledger.Outcome("weird\xff"), Reason: ledger.Reason("odd\xfe")})
	// A pair outside the set in valid UTF-8 is counted on the series'
	// cleaned target, as the closed set's pairs are.
	r.Record(&ledger.Record{ID: 2, Target: "t\xff", Class: "c", Traffic: ledger.TrafficBaseline, Planned: ms,
		Outcome: ledger.Outcome("weird"), Reason: ledger.Reason("odd")})
	if got := testutil.ToFloat64(r.prom.dropped.WithLabelValues(DropLabel)); got != 1 {
		t.Errorf("dropped{label} = %v, want 1", got)
	}
	if got := testutil.ToFloat64(r.prom.requests.WithLabelValues("t\uFFFD", "c", "baseline", "none", "weird", "odd")); got != 1 {
		t.Errorf("requests{weird, odd} = %v, want 1 (on the cleaned target)", got)
	}
	if got := testutil.ToFloat64(r.prom.planned.WithLabelValues("t\uFFFD", "c", "baseline", "none")); got != 2 {
		t.Errorf("planned = %v, want 2 (the target label cleaned)", got)
	}
}

// TestRecorderRecoversAPanic: a value client_golang panics on (here an
// exemplar whose trace ID is longer than exemplar labels may be) is a
// counted, logged drop, never a crash, and the recorder goes on recording.
func TestRecorderRecoversAPanic(t *testing.T) {
	var logs bytes.Buffer
	r, reg := newTestRecorder(t, Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	rec := func(id uint64, trace string) *ledger.Record {
		return &ledger.Record{ID: id, Target: "t", Class: "c", Traffic: ledger.TrafficBaseline, TraceID: trace,
			Planned: ms, Dispatched: 2 * ms, FirstContent: 5 * ms, LastContent: 6 * ms, End: 7 * ms,
			Outcome: ledger.OK, Reason: ledger.ReasonStop}
	}
	r.Record(rec(1, strings.Repeat("f", 200)))
	r.Record(rec(2, strings.Repeat("f", 200)))
	r.Record(rec(3, ""))
	if got := testutil.ToFloat64(r.prom.dropped.WithLabelValues(DropPanic)); got != 2 {
		t.Errorf("dropped{panic} = %v, want 2", got)
	}
	if got := testutil.ToFloat64(r.prom.requests.WithLabelValues("t", "c", "baseline", "none", "ok", "stop")); got != 3 {
		t.Errorf("requests ok/stop = %v, want 3: every record counted before and after the panic", got)
	}
	if n := strings.Count(logs.String(), "reason=panic"); n != 1 {
		t.Errorf("logged %d times, want once:\n%s", n, logs.String())
	}
	if _, err := reg.Gather(); err != nil {
		t.Errorf("gather: %v", err)
	}
}
