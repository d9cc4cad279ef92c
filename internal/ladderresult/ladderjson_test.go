package ladderresult

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/cause"
	"github.com/llmprobe/llmprobe/internal/ledger"
	"github.com/llmprobe/llmprobe/internal/quantile"
	"github.com/llmprobe/llmprobe/internal/servermetrics"
	"github.com/llmprobe/llmprobe/internal/stats"
	"github.com/llmprobe/llmprobe/internal/verdict"
)

// richLadder is a ladder result with every part of the schema filled: an
// invalid step with a named cause and host evidence, a saturated step, a
// step cut short, classes, per-class verdicts, a server view.
func richLadder() LadderResult {
	ms := time.Millisecond
	step := func(i int, rate float64, good int, p95 time.Duration) LadderStep {
		s := stats.Summary{Mode: ledger.ModeOpen, RequestedRate: rate, Window: 2 * time.Second, Planned: 2 * int(rate), Retries: 1,
			Attempts: 2*int(rate) + 1, Dispatched: 2*int(rate) + 1, Completed: 2 * int(rate), Rejected: 1, Good: good, InjectedCancels: 0,
			Outcomes:     stats.Outcomes{ByOutcome: map[ledger.Outcome]int{ledger.OK: 2 * int(rate), ledger.Rejected: 1}},
			AchievedRate: rate, GoodputPerSecond: float64(good) / 2, GoodFraction: float64(good) / (2 * rate),
			TTFT:        quantile.Percentiles{Count: 2 * int(rate), P50: p95 / 2, P90: p95 - ms, P95: p95, P99: p95 + 7*ms, Max: p95 + 9*ms, Exact: true},
			E2E:         quantile.Percentiles{Count: 2 * int(rate), P50: 3 * p95, P95: 5 * p95, Exact: true},
			DispatchLag: quantile.Percentiles{Count: 2*int(rate) + 1, P99: 3*ms + 123, Max: 4 * ms},
			PrefillGap:  quantile.Percentiles{Count: 3, P50: 2 * ms, P95: 4 * ms},
			Validity:    verdict.Validity{Valid: true},
		}
		return LadderStep{Index: i, Rate: rate, Summary: s}
	}
	s1, s2, s3 := step(1, 4, 8, 50*ms), step(2, 8, 16, 60*ms), step(3, 16, 10, 900*ms)
	s2.Server = &servermetrics.View{URL: "http://127.0.0.1:1/metrics", Flavour: servermetrics.VLLM, Scrapes: 3, Explanation: "queue steady"}
	s3.Summary.Validity = verdict.Validity{Valid: false, Causes: []verdict.InvalidCause{{Cause: cause.HostStarved, Reason: "starved: busy 0.98", Action: cause.HostStarved.Action()}},
		Host: verdict.HostHealth{Known: true, Busy: 0.98, BusyKnown: true, HostCPUs: 2, SchedCount: 40, SchedP99: 14 * ms, CPUs: 2, Source: "shard 1"}}
	s3.Summary.Window, s3.Summary.WindowAsked, s3.Summary.Pending = 1500*ms, 2*time.Second, 3
	s3.Summary.Steady = &verdict.Steady{SpanSeconds: 1, Arrivals: 16, Completions: 9, Judged: true, Saturated: true, Reason: "saturated: backlog +7"}
	s3.Aborted, s3.AbortReason = true, "TTFT p95 900ms above 5 × gate 100ms"
	for _, s := range []*LadderStep{&s1, &s2, &s3} {
		for _, c := range []struct {
			name  string
			share float64
		}{{"chat", 0.75}, {"long", 0.25}} {
			cs := s.Summary
			cs.Planned, cs.Good = int(float64(cs.Planned)*c.share), int(float64(cs.Good)*c.share)
			s.Classes = append(s.Classes, ClassStep{Class: c.name, Rate: s.Rate * c.share, Summary: cs})
		}
	}
	res := LadderResult{Target: "t", Trigger: "manual", Started: time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC), Finished: time.Date(2026, 1, 2, 3, 5, 0, 0, time.UTC),
		StepDuration: 2 * time.Second, Steps: []LadderStep{s1, s2, s3},
		ClassGates:         map[string]stats.Gates{"chat": {TTFT: 100 * ms}, "long": {E2E: 2 * time.Second}},
		GoodFractionTarget: 0.9, KneeFactor: 2, StopAt: "top", Aborted: true, AbortReason: "step 3: TTFT p95 900ms above 5 × gate 100ms"}
	res.Verdict, res.Classes = JudgeLadder(res.Steps, []string{"chat", "long"}, res.GoodFractionTarget, res.KneeFactor)
	return res
}

// TestLadderJSONRoundTrip: a result written in the schema and read back
// writes the same bytes again (every figure of the schema survives its
// own round trip), and keeps its verdicts and causes.
func TestLadderJSONRoundTrip(t *testing.T) {
	res := richLadder()
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	var back LadderResult
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	again, err := json.Marshal(back)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b, again) {
		t.Errorf("round trip changed the line:\n%s\n%s", b, again)
	}
	for _, want := range []string{`"schema_version":2`, `"kind":"ladder"`, `"invalid_steps":[3]`, `"saturated_steps":[]`, `"window_s":1.5`,
		`"invalid_reasons":["starved: busy 0.98"]`, `"host_cpu_busy_fraction":0.98`, `"source":"shard 1"`, `"class_gates":{"chat":{"ttft":0.1,"tpot":0,"e2e":0}`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("line lacks %s:\n%s", want, b)
		}
	}
	if back.Verdict != res.Verdict || !reflect.DeepEqual(back.Classes, res.Classes) || back.Steps[2].Summary.Validity.Reasons()[0] != "starved: busy 0.98" ||
		!back.Steps[2].Summary.Validity.Host.BusyKnown || back.Steps[2].Summary.Validity.Host.Source != "shard 1" || back.Steps[2].Summary.TTFT != res.Steps[2].Summary.TTFT || !back.Started.Equal(res.Started) {
		t.Errorf("read back %+v\nwant %+v", back, res)
	}
	// The verdicts judged again from the decoded figures are the same.
	v, per := JudgeLadder(back.Steps, []string{"chat", "long"}, back.GoodFractionTarget, back.KneeFactor)
	if v != res.Verdict || !reflect.DeepEqual(per, res.Classes) {
		t.Errorf("judged from the decoded steps: %+v %+v, want %+v %+v", v, per, res.Verdict, res.Classes)
	}
}

// TestLadderJSONRefuses: a newer schema, another kind of line, or a line
// without a kind is refused rather than read as an empty ladder.
func TestLadderJSONRefuses(t *testing.T) {
	for _, line := range []string{`{"schema_version":3,"kind":"ladder"}`, `{"schema_version":2,"kind":"probe"}`, `{"target":"t"}`, `[1]`} {
		var r LadderResult
		if err := json.Unmarshal([]byte(line), &r); err == nil {
			t.Errorf("%s: decoded as %+v", line, r)
		}
	}
}

// TestLadderLegacyHistoryLine: lines of the flat history format (version
// 1, written before schema_version: testdata/history-v1.jsonl, written by
// that release's `llmprobe ladder --history`) decode into the one model
// with their figures, and re-encode in the current schema.
func TestLadderLegacyHistoryLine(t *testing.T) {
	f, err := os.Open("testdata/history-v1.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var got []LadderResult
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var r LadderResult
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("v1 line: %v", err)
		}
		got = append(got, r)
	}
	if len(got) != 2 {
		t.Fatalf("%d lines", len(got))
	}
	ok, bad := got[0], got[1]
	s := ok.Steps[0]
	if ok.Capacity != 10 || ok.CapacityStep != 2 || ok.CapacityBound != BoundLower || ok.StepDuration != 2*time.Second || ok.Trigger != "manual" ||
		ok.ClassGates["default"].TTFT != 30*time.Second || s.Index != 1 || s.Rate != 5 || s.Summary.Planned != 10 || s.Summary.Completed != 10 ||
		s.Summary.TTFT.P95 != 139132137*time.Nanosecond || s.Summary.TTFT.Count != 10 || s.Summary.E2E.Count != s.Summary.Completed || !s.Summary.Validity.Valid || s.Server == nil || s.Summary.Steady == nil {
		t.Errorf("v1 line read as %+v", ok)
	}
	if !stats.Qualifies(s.Summary, ok.GoodFractionTarget) {
		t.Errorf("v1 step 1 (met in its line) is not met when judged again")
	}
	st := bad.Steps[1]
	if st.Summary.Validity.Valid || !st.Summary.Validity.Has(cause.InFlightCap) || !strings.Contains(st.Summary.Validity.Reasons()[0], "in-flight cap full") ||
		!st.Aborted || !strings.Contains(st.AbortReason, "unsent fraction") || st.Summary.Unsent != 15 || !bad.Aborted || stats.Qualifies(st.Summary, bad.GoodFractionTarget) {
		t.Errorf("v1 invalid step read as %+v", st)
	}
	b, err := json.Marshal(bad)
	if err != nil {
		t.Fatal(err)
	}
	var again LadderResult
	if err := json.Unmarshal(b, &again); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"schema_version":2`) || !strings.Contains(string(b), `"invalid_steps":[2]`) || again.Verdict != bad.Verdict ||
		again.Steps[1].Summary.TTFT.P95 != st.Summary.TTFT.P95 {
		t.Errorf("v1 line re-encoded: %s", b)
	}
}
