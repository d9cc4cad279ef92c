package stats

import (
	"testing"
	"time"
)

func step(rate float64, ttftP95 time.Duration, goodFrac float64, valid bool) LadderStep {
	s := Summary{Planned: 100, GoodFraction: goodFrac, Validity: Validity{Valid: valid}}
	if ttftP95 > 0 {
		s.TTFT = Percentiles{Count: 100, P95: ttftP95}
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
		kneeRate       float64
		kneeStep       int
	}{
		{"rising", []LadderStep{
			step(1, 100*ms, 1, true), step(2, 110*ms, 0.99, true), step(4, 150*ms, 0.96, true),
			step(8, 400*ms, 0.7, true), step(16, 2000*ms, 0.2, true)},
			0.95, 2, 4, 3, 8, 4},
		{"invalid step skipped", []LadderStep{
			step(1, 100*ms, 1, true), step(2, 100*ms, 1, false)},
			0.95, 2, 1, 1, 0, 0},
		{"none qualifies", []LadderStep{step(1, 100*ms, 0.5, true)}, 0.95, 2, 0, 0, 0, 0},
		{"unsorted, base is lowest rate", []LadderStep{
			step(4, 350*ms, 0.97, true), step(1, 100*ms, 1, true), step(2, 250*ms, 1, true)},
			0.95, 2, 4, 1, 2, 3},
		{"no ttft at all", []LadderStep{step(1, 0, 0, true)}, 0.95, 2, 0, 0, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, s := Capacity(tt.steps, tt.target)
			if r != tt.capRate || s != tt.capStep {
				t.Errorf("capacity = %v@%d, want %v@%d", r, s, tt.capRate, tt.capStep)
			}
			r, s = Knee(tt.steps, tt.factor)
			if r != tt.kneeRate || s != tt.kneeStep {
				t.Errorf("knee = %v@%d, want %v@%d", r, s, tt.kneeRate, tt.kneeStep)
			}
		})
	}
}
