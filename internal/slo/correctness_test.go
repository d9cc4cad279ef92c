package slo

import "testing"

// TestCorrectness: what the correctness SLI counts, result by result.
func TestCorrectness(t *testing.T) {
	for _, c := range []struct {
		result     string
		event, bad bool
	}{
		{"pass", true, false},
		{"fail", true, true},
		{"not_judged", false, false},
		{"", false, false},
		{"mystery", false, false},
	} {
		e, b := Correctness(c.result)
		if e != c.event || b != c.bad {
			t.Errorf("%q: event %v bad %v, want %v %v", c.result, e, b, c.event, c.bad)
		}
	}
	if !(0 < CorrectnessObjective && CorrectnessObjective < 1) {
		t.Error("the correctness objective must be a fraction")
	}
	// One always-failing check in a rotation of thirteen burns faster than
	// the first page tier: the documented promise of the objective.
	if 1.0/13 <= PageTiers()[0].BurnRate(CorrectnessObjective) {
		t.Errorf("one failing check of thirteen (%.3f) does not exceed the page tier's %.3f", 1.0/13, PageTiers()[0].BurnRate(CorrectnessObjective))
	}
}
