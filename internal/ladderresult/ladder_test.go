package ladderresult

import (
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/quantile"
	"github.com/llmprobe/llmprobe/internal/stats"
	"github.com/llmprobe/llmprobe/internal/verdict"
)

func step(rate float64, ttftP95 time.Duration, goodFrac float64, valid bool) LadderStep {
	s := stats.Summary{Planned: 100, GoodFraction: goodFrac, Validity: verdict.Validity{Valid: valid}}
	if ttftP95 > 0 {
		s.TTFT = quantile.Percentiles{Count: 100, P95: ttftP95}
	}
	return LadderStep{Rate: rate, Summary: s}
}

func TestCapacityAndKnee(t *testing.T) {
	tests := []struct {
		name           string
		steps          []LadderStep
		target, factor float64
		capRate        float64
		capStep        int
		bound          Bound
		kneeRate       float64
		kneeStep       int
	}{
		{"rising", []LadderStep{
			step(1, 100*ms, 1, true), step(2, 110*ms, 0.99, true), step(4, 150*ms, 0.96, true),
			step(8, 400*ms, 0.7, true), step(16, 2000*ms, 0.2, true)},
			0.95, 2, 4, 3, BoundMeasured, 8, 4},
		{"invalid step skipped", []LadderStep{
			step(1, 100*ms, 1, true), step(2, 100*ms, 1, false)},
			0.95, 2, 1, 1, BoundLower, 0, 0},
		// The seed experiment: the top step's generator was invalid (its
		// dispatch lag, not the target, made its TTFT p95 30× the base). It
		// must give neither the knee nor the capacity, and the capacity
		// below it is only a lower bound.
		{"invalid top step gives no knee", []LadderStep{
			step(100, 50*ms, 1, true), step(1000, 55*ms, 1, true), step(8000, 1500*ms, 0.3, false)},
			0.9, 2, 1000, 2, BoundLower, 0, 0},
		{"an invalid step between two valid ones", []LadderStep{
			step(1, 50*ms, 1, true), step(2, 900*ms, 0.1, false), step(4, 60*ms, 0.95, true), step(8, 500*ms, 0.5, true)},
			0.9, 2, 4, 3, BoundMeasured, 8, 4},
		{"top step passed: a lower bound", []LadderStep{
			step(1, 50*ms, 1, true), step(2, 50*ms, 1, true), step(4, 60*ms, 0.99, true)},
			0.9, 2, 4, 3, BoundLower, 0, 0},
		{"none qualifies", []LadderStep{step(1, 100*ms, 0.5, true)}, 0.95, 2, 0, 0, "", 0, 0},
		{"unsorted, base is lowest rate", []LadderStep{
			step(4, 350*ms, 0.97, true), step(1, 100*ms, 1, true), step(2, 250*ms, 1, true)},
			0.95, 2, 4, 1, BoundLower, 2, 3},
		{"lowest step invalid: the base is the lowest valid step", []LadderStep{
			step(1, 10*ms, 1, false), step(2, 100*ms, 1, true), step(4, 150*ms, 1, true)},
			0.95, 2, 4, 3, BoundLower, 0, 0},
		{"no ttft at all", []LadderStep{step(1, 0, 0, true)}, 0.95, 2, 0, 0, "", 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := Judge(tt.steps, tt.target, tt.factor)
			if v.Capacity != tt.capRate || v.CapacityStep != tt.capStep || v.CapacityBound != tt.bound {
				t.Errorf("capacity = %v@%d (%q), want %v@%d (%q)", v.Capacity, v.CapacityStep, v.CapacityBound, tt.capRate, tt.capStep, tt.bound)
			}
			if v.Knee != tt.kneeRate || v.KneeStep != tt.kneeStep {
				t.Errorf("knee = %v@%d, want %v@%d", v.Knee, v.KneeStep, tt.kneeRate, tt.kneeStep)
			}
		})
	}
}

// TestJudgeClass: each class is judged on its own figures, at its own
// offered rate; the step's validity applies to every class.
func TestJudgeClass(t *testing.T) {
	mk := func(rate float64, valid bool, chatGood, longGood float64, chatTTFT, longTTFT time.Duration) LadderStep {
		s := step(rate, chatTTFT, (chatGood*3+longGood)/4, valid)
		c := func(good float64, ttft time.Duration) stats.Summary {
			return stats.Summary{Planned: 100, GoodFraction: good, Validity: s.Summary.Validity, TTFT: quantile.Percentiles{Count: 100, P95: ttft}}
		}
		s.Classes = []ClassStep{
			{Class: "chat", Rate: rate * 0.75, Summary: c(chatGood, chatTTFT)},
			{Class: "long", Rate: rate * 0.25, Summary: c(longGood, longTTFT)},
		}
		return s
	}
	steps := []LadderStep{
		mk(4, true, 1, 1, 50*ms, 400*ms),
		mk(8, true, 1, 0.5, 60*ms, 1200*ms), // long fails its gates at 8
		mk(16, true, 0.95, 0.1, 90*ms, 3000*ms),
		mk(32, false, 0.2, 0, 900*ms, 9000*ms), // invalid: used by no class
	}
	chat := JudgeClass(steps, "chat", 0.9, 2)
	long := JudgeClass(steps, "long", 0.9, 2)
	if chat.Capacity != 12 || chat.CapacityStep != 3 || chat.CapacityBound != BoundLower {
		t.Errorf("chat capacity %+v, want 12 req/s of chat at step 3, a lower bound (step 4 was invalid)", chat)
	}
	if chat.KneeStep != 0 {
		t.Errorf("chat knee %+v: its only slow step was invalid", chat)
	}
	if long.Capacity != 1 || long.CapacityStep != 1 || long.CapacityBound != BoundMeasured {
		t.Errorf("long capacity %+v, want 1 req/s of long at step 1, measured", long)
	}
	if long.Knee != 2 || long.KneeStep != 2 {
		t.Errorf("long knee %+v, want 2 req/s of long (step 2: its TTFT p95 tripled)", long)
	}
	if chat.Capacity == long.Capacity {
		t.Error("the classes got the same capacity")
	}
	if v := JudgeClass(steps, "nope", 0.9, 2); v.CapacityStep != 0 || v.KneeStep != 0 {
		t.Errorf("an unknown class got %+v", v)
	}
}

const ms = time.Millisecond

// TestJudgeSaturatedNeverCapacity: a saturated step with a good fraction
// above the target is never the capacity; the capacity is measured below
// it, and the knee is at it when no TTFT p95 crossed the factor.
func TestJudgeSaturatedNeverCapacity(t *testing.T) {
	ok := func(rate float64, sat bool) LadderStep {
		s := stats.Summary{Planned: 100, Good: 99, GoodFraction: 0.99, Validity: verdict.Validity{Valid: true},
			TTFT: quantile.Percentiles{Count: 99, P95: 100 * time.Millisecond}, Steady: &verdict.Steady{Judged: true, Saturated: sat}}
		return LadderStep{Rate: rate, Summary: s}
	}
	for _, tc := range []struct {
		name           string
		steps          []LadderStep
		capacity, knee float64
		bound          Bound
	}{
		{"none saturated", []LadderStep{ok(2, false), ok(4, false), ok(8, false)}, 8, 0, BoundLower},
		{"top saturated", []LadderStep{ok(2, false), ok(4, false), ok(8, true)}, 4, 8, BoundMeasured},
		{"middle saturated", []LadderStep{ok(2, false), ok(4, true), ok(8, false)}, 2, 4, BoundMeasured},
		{"all saturated", []LadderStep{ok(2, true), ok(4, true)}, 0, 2, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := Judge(tc.steps, 0.9, 2)
			if v.Capacity != tc.capacity || v.Knee != tc.knee || v.CapacityBound != tc.bound {
				t.Errorf("verdict %+v, want capacity %g (%s) knee %g", v, tc.capacity, tc.bound, tc.knee)
			}
		})
	}
}
