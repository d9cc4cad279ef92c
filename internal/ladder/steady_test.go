package ladder

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/ladderresult"
	"github.com/llmprobe/llmprobe/internal/stats"
	"github.com/llmprobe/llmprobe/internal/verdict"
)

// TestSaturatedStepInResultAndHistory: a saturated step with a good
// fraction above the target is not met, stops a stop_at capacity ladder
// with its reason, is never the capacity, and its verdict and evidence
// reach the history line; judgeSteady gives the server's queue to the
// verdict and the step's verdict to every class.
func TestSaturatedStepInResultAndHistory(t *testing.T) {
	step := func(n int, rate float64, s *verdict.Steady) ladderresult.LadderStep {
		sum := stats.Summary{Planned: 100, Good: 99, GoodFraction: 0.99, Validity: verdict.Validity{Valid: true}, Steady: s}
		return ladderresult.LadderStep{Index: n, Rate: rate, Summary: sum,
			Classes: []ladderresult.ClassStep{{Class: "chat", Rate: rate, Summary: stats.Summary{Planned: 100, Good: 99, GoodFraction: 0.99, Validity: verdict.Validity{Valid: true}}}}}
	}
	steady := &verdict.Steady{Judged: true, Arrivals: 60}
	// the client's evidence alone is short of the rule; the server's queue 0→16 is not
	weak := verdict.Steady{SpanSeconds: 6.67, Arrivals: 97, Completions: 88, InFlightStart: 12, InFlightEnd: 21, Backlog: 9, BacklogZ: 9 / 5.8}
	if verdict.JudgeSteady(weak).Saturated {
		t.Fatal("fixture: the client's evidence alone names the step saturated")
	}
	top := step(3, 16, &weak)
	judgeSteady(&top, serverQueue{start: 0, end: 16, ok: true})
	if !top.Summary.Saturated() || top.Classes[0].Summary.Steady != top.Summary.Steady {
		t.Fatalf("judgeSteady: %+v, class %+v", top.Summary.Steady, top.Classes[0].Summary.Steady)
	}
	steps := []ladderresult.LadderStep{step(1, 4, steady), step(2, 8, steady), top}
	cfg := baseConfig("sim")
	cfg.Steps, cfg.StopAt, cfg.Now = []float64{4, 8, 16, 32}, StopAtCapacity, time.Now
	if why := stopHere(steps, cfg); !strings.Contains(why, "step 3 was saturated: completions") {
		t.Errorf("stop_at: %q", why)
	}
	res := Conclude(cfg, Result{Target: "sim"}, steps, false)
	if res.Capacity != 8 || res.CapacityBound != ladderresult.BoundMeasured || res.Knee != 16 {
		t.Errorf("capacity %g (%s), knee %g: want 8 measured, knee 16", res.Capacity, res.CapacityBound, res.Knee)
	}
	path := filepath.Join(t.TempDir(), "h.jsonl")
	if err := AppendHistory(path, res); err != nil {
		t.Fatal(err)
	}
	got, _, err := ReadHistory(path, 0)
	if err != nil || len(got) != 1 {
		t.Fatalf("history: %v %d", err, len(got))
	}
	row := rows(t, got[0])[2]
	if !row.Saturated || row.Met || !strings.Contains(row.Saturation, "server queue 0→16") || row.Steady == nil ||
		row.Steady.ServerWaitingEnd == nil || *row.Steady.ServerWaitingEnd != 16 || len(got[0].SaturatedSteps()) != 1 || got[0].SaturatedSteps()[0] != 3 {
		t.Errorf("history row %+v, saturated steps %v", row, got[0].SaturatedSteps())
	}
	if r := rows(t, got[0])[1]; r.Saturated || !r.Met {
		t.Errorf("steady step row %+v", r)
	}
}
