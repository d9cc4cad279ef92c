package ladder

import (
	"strings"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/ledger"
	"github.com/llmprobe/llmprobe/internal/stats"
)

func summary(planned, dispatched, ok, good, rejected, failed, unsent int, ttftP95 time.Duration, valid bool) stats.Summary {
	s := stats.Summary{
		Planned: planned, Dispatched: dispatched, Completed: ok, Good: good, Rejected: rejected, Unsent: unsent,
		Outcomes: stats.Outcomes{ByOutcome: map[ledger.Outcome]int{
			ledger.OK: ok, ledger.Rejected: rejected, ledger.Timeout: failed, ledger.Unsent: unsent,
		}},
		TTFT:     stats.Percentiles{Count: ok, P95: ttftP95},
		Validity: stats.Validity{Valid: valid},
	}
	if planned > 0 {
		s.GoodFraction = float64(good) / float64(planned)
	}
	if !valid {
		s.Validity.Reasons = []string{"dispatch lag"}
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
	steps := []stats.LadderStep{
		{Index: 1, Rate: 2, Summary: summary(100, 100, 100, 99, 0, 0, 0, 50*ms, true)},
		{Index: 2, Rate: 4, Summary: summary(100, 100, 100, 95, 0, 0, 0, 80*ms, true)},
		{Index: 3, Rate: 8, Summary: summary(100, 100, 100, 92, 0, 0, 0, 120*ms, false)}, // met gates but invalid
		{Index: 4, Rate: 16, Summary: summary(100, 100, 100, 40, 0, 0, 0, 400*ms, true), Aborted: true, AbortReason: "x"},
	}
	rows, capRate, capStep, knee, kneeStep := Analyze(steps, 0.9, 2)
	if capRate != 4 || capStep != 2 {
		t.Errorf("capacity %g (step %d), want 4 (step 2): an invalid step never counts", capRate, capStep)
	}
	if knee != 8 || kneeStep != 3 {
		t.Errorf("knee %g (step %d), want 8 (step 3): first p95 above 2 × 50ms", knee, kneeStep)
	}
	if len(rows) != 4 || !rows[1].Met || rows[2].Met || rows[3].AbortReason != "x" || rows[0].TTFTP95 != 0.05 {
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
