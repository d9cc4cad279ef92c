package schedule

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestWeightsSplit: a rate splits in proportion to the weights, the
// shares add up to it, and Share is Split's element.
func TestWeightsSplit(t *testing.T) {
	for _, tc := range []struct {
		w    Weights
		rate float64
		want []float64
	}{
		{Weights{1}, 5, []float64{5}},
		{Weights{1, 3}, 8, []float64{2, 6}},
		{Weights{0.2, 0.2, 0.6}, 10, []float64{2, 2, 6}},
	} {
		got, sum := tc.w.Split(tc.rate), 0.0
		for i := range got {
			if math.Abs(got[i]-tc.want[i]) > 1e-12 || got[i] != tc.w.Share(tc.rate, i) {
				t.Errorf("%v split %g: share %d = %g (Share %g), want %g", tc.w, tc.rate, i, got[i], tc.w.Share(tc.rate, i), tc.want[i])
			}
			sum += got[i]
		}
		if math.Abs(sum-tc.rate) > 1e-9 {
			t.Errorf("%v split %g: shares add up to %g", tc.w, tc.rate, sum)
		}
	}
	type class struct{ w float64 }
	if w := WeightsOf([]class{{2}, {5}}, func(c class) float64 { return c.w }); len(w) != 2 || w[0] != 2 || w[1] != 5 {
		t.Errorf("WeightsOf = %v", w)
	}
}

// TestPick: each class is picked in proportion to its weight, the table
// ends at exactly 1, and a draw at a boundary goes to the next class.
func TestPick(t *testing.T) {
	w := Weights{1, 3, 6}
	cum := w.Cumulative()
	if cum[len(cum)-1] != 1 || math.Abs(cum[0]-0.1) > 1e-12 || math.Abs(cum[1]-0.4) > 1e-12 {
		t.Fatalf("Cumulative = %v", cum)
	}
	if Pick(cum, 0) != 0 || Pick(cum, cum[0]) != 1 || Pick(cum, 0.999999) != 2 || Pick([]float64{1}, 0.5) != 0 {
		t.Errorf("Pick at the boundaries: %d %d %d", Pick(cum, 0), Pick(cum, cum[0]), Pick(cum, 0.999999))
	}
	r := rand.New(rand.NewPCG(1, 2))
	n := [3]int{}
	const draws = 100000
	for range draws {
		n[Pick(cum, r.Float64())]++
	}
	for i, x := range w {
		p := x / w.Total()
		sd := math.Sqrt(draws * p * (1 - p))
		if math.Abs(float64(n[i])-draws*p) > 5*sd {
			t.Errorf("class %d picked %d times of %d, want %g ± %g", i, n[i], draws, draws*p, 5*sd)
		}
	}
}
