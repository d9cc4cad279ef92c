package ladder

import (
	"strings"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/cause"
	"github.com/llmprobe/llmprobe/internal/ladderresult"
	"github.com/llmprobe/llmprobe/internal/ledger"
	"github.com/llmprobe/llmprobe/internal/quantile"
	"github.com/llmprobe/llmprobe/internal/stats"
	"github.com/llmprobe/llmprobe/internal/verdict"
)

func summary(planned, dispatched, ok, good, rejected, failed, unsent int, ttftP95 time.Duration, valid bool) stats.Summary {
	s := stats.Summary{
		Planned: planned, Dispatched: dispatched, Completed: ok, Good: good, Rejected: rejected, Unsent: unsent,
		Outcomes: stats.Outcomes{ByOutcome: map[ledger.Outcome]int{
			ledger.OK: ok, ledger.Rejected: rejected, ledger.Timeout: failed, ledger.Unsent: unsent,
		}},
		TTFT:     quantile.Percentiles{Count: ok, P95: ttftP95},
		Validity: verdict.Validity{Valid: valid},
	}
	if planned > 0 {
		s.GoodFraction = float64(good) / float64(planned)
	}
	if !valid {
		s.Validity.Causes = []verdict.InvalidCause{{Cause: cause.DispatchLag, Reason: "dispatch lag"}}
	}
	return s
}

func TestAbortRules(t *testing.T) {
	all := AbortRules{ErrorFraction: 0.1, RejectionFraction: 0.2, TTFTGateMultiple: 3, OnUnsent: true, UnsentFraction: 0.05, OnGeneratorInvalid: true}
	gate := 100 * time.Millisecond
	cases := []struct {
		name  string
		rules AbortRules
		s     stats.Summary
		want  string // substring; "" = go on
	}{
		{"healthy", all, summary(100, 100, 100, 100, 0, 0, 0, 120*time.Millisecond, true), ""},
		{"errors", all, summary(100, 100, 80, 80, 0, 20, 0, 0, true), "error fraction 0.200"},
		{"errors at the limit go on", all, summary(100, 100, 90, 90, 0, 10, 0, 0, true), ""},
		{"rejections", all, summary(100, 100, 70, 70, 30, 0, 0, 0, true), "rejection fraction 0.300"},
		{"ttft", all, summary(100, 100, 100, 50, 0, 0, 0, 301*time.Millisecond, true), "TTFT p95"},
		{"ttft rule off without a gate", AbortRules{TTFTGateMultiple: 3}, summary(100, 100, 100, 0, 0, 0, 0, time.Hour, true), ""},
		{"unsent", all, summary(100, 90, 90, 90, 0, 0, 10, 0, true), "unsent fraction 0.100"},
		{"unsent any", AbortRules{OnUnsent: true}, summary(100, 99, 99, 99, 0, 0, 1, 0, true), "unsent fraction"},
		{"unsent rule off", AbortRules{}, summary(100, 50, 50, 50, 0, 0, 50, 0, true), ""},
		{"invalid", all, summary(100, 100, 100, 100, 0, 0, 0, 0, false), "generator invalid: dispatch lag"},
		{"invalid rule off", AbortRules{}, summary(100, 100, 100, 100, 0, 0, 0, 0, false), ""},
		{"nothing sent", all, summary(0, 0, 0, 0, 0, 0, 0, 0, true), ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := gate
			if tc.name == "ttft rule off without a gate" {
				g = 0
			}
			got := tc.rules.Check(tc.s, g)
			if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
				t.Fatalf("Check = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestAnalyze(t *testing.T) {
	ms := time.Millisecond
	steps := []ladderresult.LadderStep{
		{Index: 1, Rate: 2, Summary: summary(100, 100, 100, 99, 0, 0, 0, 50*ms, true)},
		{Index: 2, Rate: 4, Summary: summary(100, 100, 100, 95, 0, 0, 0, 80*ms, true)},
		{Index: 3, Rate: 8, Summary: summary(100, 100, 100, 92, 0, 0, 0, 120*ms, false)}, // met gates but invalid
		{Index: 4, Rate: 16, Summary: summary(100, 100, 100, 40, 0, 0, 0, 400*ms, true), Aborted: true, AbortReason: "x"},
	}
	res := Conclude(Config{GoodFractionTarget: 0.9, KneeFactor: 2, Now: time.Now}, Result{GoodFractionTarget: 0.9}, steps, false)
	v, classes, rows := res.Verdict, res.Classes, rows(t, res)
	capRate, capStep, knee, kneeStep := v.Capacity, v.CapacityStep, v.Knee, v.KneeStep
	if capRate != 4 || capStep != 2 || v.CapacityBound != ladderresult.BoundMeasured {
		t.Errorf("capacity %g (step %d, %s), want 4 (step 2, measured): an invalid step never counts", capRate, capStep, v.CapacityBound)
	}
	if knee != 16 || kneeStep != 4 {
		t.Errorf("knee %g (step %d), want 16 (step 4): the invalid step 3 (p95 above 2 × 50ms) is never the knee", knee, kneeStep)
	}
	if classes != nil {
		t.Errorf("per-class results without classes: %+v", classes)
	}
	if len(rows) != 4 || !rows[1].Met || rows[2].Met || rows[3].AbortReason != "x" || rows[0].TTFT.P95 != 0.05 {
		t.Errorf("rows: %+v", rows)
	}
	if rows[0].Outcomes["ok"] != 100 || rows[0].Outcomes["timeout"] != 0 {
		t.Errorf("row outcomes %v", rows[0].Outcomes)
	}
	// The table and the capacity apply one rule: the met steps are exactly
	// those capacity could pick, and the capacity is the fastest of them.
	wantMet := []bool{true, true, false, false}
	best := 0.0
	for i, r := range rows {
		if r.Met != wantMet[i] {
			t.Errorf("step %d met = %v, want %v", r.Step, r.Met, wantMet[i])
		}
		if r.Met {
			best = max(best, r.Rate)
		}
	}
	if best != capRate {
		t.Errorf("fastest met step %g, capacity %g", best, capRate)
	}
}

// TestAnalyzePerClass: each class gets its own capacity and knee from its own
// figures, in its own offered rate; the rows carry the classes.
func TestAnalyzePerClass(t *testing.T) {
	ms := time.Millisecond
	mk := func(index int, rate float64, valid bool, chatGood, longGood int, chatTTFT, longTTFT time.Duration) ladderresult.LadderStep {
		all := summary(100, 100, 100, chatGood+longGood, 0, 0, 0, chatTTFT, valid)
		chat := summary(75, 75, 75, chatGood, 0, 0, 0, chatTTFT, valid)
		long := summary(25, 25, 25, longGood, 0, 0, 0, longTTFT, valid)
		return ladderresult.LadderStep{Index: index, Rate: rate, Summary: all, Classes: []ladderresult.ClassStep{
			{Class: "chat", Rate: rate * 0.75, Summary: chat}, {Class: "long", Rate: rate * 0.25, Summary: long}}}
	}
	steps := []ladderresult.LadderStep{
		mk(1, 4, true, 75, 25, 50*ms, 300*ms),
		mk(2, 8, true, 74, 10, 55*ms, 900*ms),
		mk(3, 16, false, 20, 0, 800*ms, 5000*ms),
	}
	res := Conclude(Config{GoodFractionTarget: 0.9, KneeFactor: 2, Now: time.Now, Classes: []Class{{Name: "chat"}, {Name: "long"}}},
		Result{GoodFractionTarget: 0.9}, steps, false)
	v, classes, rows := res.Verdict, res.Classes, rows(t, res)
	if len(classes) != 2 {
		t.Fatalf("classes %+v", classes)
	}
	chat, long := classes[0], classes[1]
	if chat.Class != "chat" || chat.Capacity != 6 || chat.CapacityStep != 2 || chat.CapacityBound != ladderresult.BoundLower {
		t.Errorf("chat %+v: want 6 req/s of chat at step 2, a lower bound (step 3 was invalid)", chat)
	}
	if long.Class != "long" || long.Capacity != 1 || long.CapacityStep != 1 || long.CapacityBound != ladderresult.BoundMeasured || long.Knee != 2 || long.KneeStep != 2 {
		t.Errorf("long %+v: want 1 req/s of long at step 1 (measured), knee 2 req/s at step 2", long)
	}
	if v.Capacity != 4 || v.CapacityStep != 1 {
		t.Errorf("every class together: %+v, want 4 req/s at step 1 (84 of 100 good at step 2)", v)
	}
	if len(rows[0].Classes) != 2 || rows[1].Classes[1].Met || !rows[1].Classes[0].Met || rows[1].Classes[0].Rate != 6 {
		t.Errorf("class rows %+v", rows[1].Classes)
	}
}
