package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/ladderresult"
	"github.com/llmprobe/llmprobe/internal/ledger"
	"github.com/llmprobe/llmprobe/internal/stats"
)

// A ladder judged by class gates says so: one class's gates, or each
// class's, never "none".
func TestLadderGatesPerClass(t *testing.T) {
	for _, tc := range []struct {
		gates map[string]stats.Gates
		want  []string
	}{
		{map[string]stats.Gates{"default": {TTFT: 300 * time.Millisecond}}, []string{"gates: TTFT ≤ 300ms;"}},
		{map[string]stats.Gates{"chat": {TTFT: time.Second}, "long": {E2E: 5 * time.Second}}, []string{"chat: TTFT ≤ 1s", "long: e2e ≤ 5s"}},
		{nil, []string{"gates: none"}},
	} {
		var b bytes.Buffer
		if err := LadderText(&b, ladderresult.LadderResult{Target: "t", ClassGates: tc.gates, GoodFractionTarget: 0.9, KneeFactor: 2}); err != nil {
			t.Fatal(err)
		}
		for _, w := range tc.want {
			if !strings.Contains(b.String(), w) {
				t.Errorf("gates %v: report lacks %q:\n%s", tc.gates, w, b.String())
			}
		}
	}
}

// A ladder's JSON carries its class gates, and every ladder report names a
// TTFT boundary that is not the default; a step whose planned arrivals were
// all injected cancellations has no good fraction ("n/a"), in the ladder
// reports as in the probe report.
func TestLadderBoundaryClassGatesAndGoodFraction(t *testing.T) {
	ms := time.Millisecond
	sent := func(id uint64, o ledger.Outcome, why ledger.Reason) ledger.Record {
		return ledger.Record{ID: id, Mode: ledger.ModeOpen, TTFTBoundary: ledger.TTFTAnyToken, Planned: ms, Dispatched: 2 * ms,
			FirstReasoning: 5 * ms, FirstContent: 9 * ms, LastContent: 20 * ms, End: 21 * ms, Outcome: o, Reason: why}
	}
	cancelled := stats.Summarize(stats.Config{}, []ledger.Record{sent(1, ledger.Cancelled, ledger.ReasonInjected)})
	answered := stats.Summarize(stats.Config{}, []ledger.Record{sent(2, ledger.OK, ledger.ReasonStop)})
	res := ladderresult.LadderResult{Target: "t", GoodFractionTarget: 0.9, KneeFactor: 2,
		ClassGates: map[string]stats.Gates{"chat": {TTFT: time.Second}},
		Steps:      []ladderresult.LadderStep{{Index: 1, Rate: 1, Summary: cancelled}, {Index: 2, Rate: 2, Summary: answered}}}

	var txt, page bytes.Buffer
	if err := LadderText(&txt, res); err != nil {
		t.Fatal(err)
	}
	if err := LadderHTML(&page, res, Meta{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(txt.String(), "TTFT to the first token of any kind") {
		t.Errorf("ladder text does not name the any-token TTFT boundary:\n%s", txt.String())
	}
	if !strings.Contains(page.String(), "TTFT = the first token of any kind") || strings.Contains(page.String(), "TTFT = first visible content") {
		t.Errorf("ladder page names the wrong TTFT boundary:\n%s", page.String())
	}
	step1 := strings.Split(txt.String(), "\n")[4]
	if !strings.Contains(step1, "n/a") || strings.Contains(step1, "0.0%") {
		t.Errorf("step of injected cancellations only: want good fraction n/a, got row %q", step1)
	}
	if !strings.Contains(page.String(), "<td>n/a</td>") {
		t.Errorf("ladder page: want good fraction n/a for the step of injected cancellations")
	}

	l := ladderOf(t, res)
	if l.TTFTBoundary != string(ledger.TTFTAnyToken) || l.ClassGates["chat"].TTFT != 1 {
		t.Errorf("ladder JSON: ttft_boundary %q, class gates %+v", l.TTFTBoundary, l.ClassGates)
	}
	if d := ladderOf(t, ladderResult("x")); d.TTFTBoundary != "" || d.ClassGates != nil {
		t.Errorf("default ladder JSON: ttft_boundary %q, class gates %+v; want both absent", d.TTFTBoundary, d.ClassGates)
	}
}

// TestLadderJSONGates: a ladder's JSON "gates" are the gates every record
// was judged by: the one class's (a ladder run with --slo-ttft has only
// class gates), the shared ones when every class has the same, and absent
// when the classes differ (class_gates then says which applied where),
// never a zero that reads as "no gate".
func TestLadderJSONGates(t *testing.T) {
	ttft := stats.Gates{TTFT: 300 * time.Millisecond}
	for _, tc := range []struct {
		name  string
		res   ladderresult.LadderResult
		want  *GatesJSON
		wantJ string // in the encoded line
	}{
		{"one class (--slo-ttft)", ladderresult.LadderResult{ClassGates: map[string]stats.Gates{"default": ttft}}, &GatesJSON{TTFT: 0.3}, `"gates":{"ttft":0.3,"tpot":0,"e2e":0}`},
		{"classes with the same gates", ladderresult.LadderResult{ClassGates: map[string]stats.Gates{"a": ttft, "b": ttft}}, &GatesJSON{TTFT: 0.3}, `"gates":{"ttft":0.3,`},
		{"classes with their own gates", ladderresult.LadderResult{ClassGates: map[string]stats.Gates{"a": ttft, "b": {E2E: time.Second}}}, nil, `"class_gates":`},
		{"no classes", ladderresult.LadderResult{Gates: ttft}, &GatesJSON{TTFT: 0.3}, `"gates":{"ttft":0.3,`},
		{"no gates at all", ladderresult.LadderResult{ClassGates: map[string]stats.Gates{"default": {}}}, &GatesJSON{}, `"gates":{"ttft":0,"tpot":0,"e2e":0}`},
	} {
		l := ladderOf(t, tc.res)
		if (l.Gates == nil) != (tc.want == nil) || (l.Gates != nil && *l.Gates != *tc.want) {
			t.Errorf("%s: gates %+v, want %+v", tc.name, l.Gates, tc.want)
		}
		b, err := json.Marshal(tc.res)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), tc.wantJ) || (tc.want == nil && strings.Contains(string(b), `"gates":`)) {
			t.Errorf("%s: JSON %s\nwant %s", tc.name, b, tc.wantJ)
		}
	}
}
