package schedule

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"
)

func draw(t *testing.T, s *Sequence, n int) []time.Duration {
	t.Helper()
	out := make([]time.Duration, 0, n)
	for range n {
		off, ok := s.Next()
		if !ok {
			t.Fatalf("schedule exhausted after %d arrivals", len(out))
		}
		out = append(out, off)
	}
	return out
}

func TestReproducibleBySeed(t *testing.T) {
	for _, k := range Kinds {
		t.Run(string(k), func(t *testing.T) {
			mk := func(seed uint64) []time.Duration {
				s, err := New(Spec{Kind: k, Burstiness: 0.5, Seed: seed}, Step{Rate: 50})
				if err != nil {
					t.Fatal(err)
				}
				return draw(t, s, 2000)
			}
			a, b, c := mk(7), mk(7), mk(8)
			same, differ := true, false
			for i := range a {
				same = same && a[i] == b[i]
				differ = differ || a[i] != c[i]
				if i > 0 && a[i] < a[i-1] {
					t.Fatalf("offset %d (%v) before offset %d (%v)", i, a[i], i-1, a[i-1])
				}
			}
			if !same {
				t.Error("the same seed gave different offsets")
			}
			if k != Constant && !differ {
				t.Error("different seeds gave the same offsets")
			}
		})
	}
}

func TestInterArrivalStatistics(t *testing.T) {
	const n = 100000
	const rate = 1000.0
	cases := []struct {
		name   string
		spec   Spec
		cv     float64 // expected coefficient of variation
		excess float64 // excess kurtosis of the gap distribution (for the CV tolerance)
	}{
		{"poisson", Spec{Kind: Poisson, Seed: 1}, 1, 6},
		{"constant", Spec{Kind: Constant, Seed: 1}, 0, 0},
		{"gamma k=1 is poisson", Spec{Kind: Gamma, Burstiness: 1, Seed: 2}, 1, 6},
		{"gamma k=4 smooth", Spec{Kind: Gamma, Burstiness: 4, Seed: 3}, 0.5, 1.5},
		{"gamma k=0.25 bursty", Spec{Kind: Gamma, Burstiness: 0.25, Seed: 4}, 2, 24},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, err := New(tc.spec, Step{Rate: rate})
			if err != nil {
				t.Fatal(err)
			}
			// The gaps between consecutive arrivals (the wait for the
			// first is the equilibrium one, half a gap for constant).
			offs := draw(t, s, n+1)
			var sum, sum2 float64
			prev := offs[0]
			for _, o := range offs[1:] {
				g := (o - prev).Seconds()
				prev = o
				sum += g
				sum2 += g * g
			}
			mean := sum / n
			sd := math.Sqrt(math.Max(sum2/n-mean*mean, 0))
			cv := sd / mean
			// Five standard errors: the mean's is CV/sqrt(n) (relative), the
			// sample CV's is about CV*sqrt((2+excess)/n)/2; plus the 1ns
			// rounding of offsets.
			tolMean := 5*tc.cv/math.Sqrt(n) + 1e-6
			tolCV := 5*tc.cv*math.Sqrt((2+tc.excess)/n)/2 + 1e-3
			if rel := math.Abs(mean*rate - 1); rel > tolMean {
				t.Errorf("mean gap %.6fs, want %.6fs (relative error %.4f > %.4f)", mean, 1/rate, rel, tolMean)
			}
			if math.Abs(cv-tc.cv) > tolCV {
				t.Errorf("CV %.4f, want %.4f ± %.4f", cv, tc.cv, tolCV)
			}
		})
	}
}

func TestStepPlanCounts(t *testing.T) {
	steps := []Step{
		{Rate: 100, Duration: 10 * time.Second},
		{Rate: 0, Duration: 5 * time.Second},
		{Rate: 300, Duration: 10 * time.Second},
		{Rate: 50, Duration: 4 * time.Second},
	}
	for _, tc := range []struct {
		spec Spec
		cv   float64
	}{
		{Spec{Kind: Poisson, Seed: 11}, 1},
		{Spec{Kind: Constant, Seed: 11}, 0},
		{Spec{Kind: Gamma, Burstiness: 0.25, Seed: 11}, 2},
	} {
		t.Run(string(tc.spec.Kind), func(t *testing.T) {
			s, err := New(tc.spec, steps...)
			if err != nil {
				t.Fatal(err)
			}
			counts := make([]int, len(steps))
			var last time.Duration
			for {
				off, ok := s.Next()
				if !ok {
					break
				}
				if off < last {
					t.Fatalf("offsets decrease: %v after %v", off, last)
				}
				last = off
				i := s.StepAt(off)
				if i < 0 {
					t.Fatalf("offset %v is outside the plan", off)
				}
				counts[i]++
			}
			if _, ok := s.Next(); ok {
				t.Error("Next yielded after exhaustion")
			}
			for i, st := range steps {
				want := st.Rate * st.Duration.Seconds()
				// Counting process variance ≈ N·CV² for a renewal process.
				tol := 5*math.Sqrt(want)*tc.cv + 2
				if got := float64(counts[i]); math.Abs(got-want) > tol {
					t.Errorf("step %d (%v req/s for %v): %d arrivals, want %.0f ± %.0f", i, st.Rate, st.Duration, counts[i], want, tol)
				}
			}
			if counts[1] != 0 {
				t.Errorf("%d arrivals in the zero-rate gap", counts[1])
			}
		})
	}
}

func TestRateChangesAtBoundary(t *testing.T) {
	// Constant arrivals: 10/s for 1s then 100/s. Each step starts its own
	// grid half an interval in: 50ms, 150ms, … 950ms, then 1005ms, 1015ms.
	s, err := New(Spec{Kind: Constant}, Step{Rate: 10, Duration: time.Second}, Step{Rate: 100})
	if err != nil {
		t.Fatal(err)
	}
	offs := draw(t, s, 12)
	want := []time.Duration{50000, 150000, 250000, 350000, 450000, 550000, 650000, 750000, 850000, 950000, 1005000, 1015000}
	for i, w := range want {
		if d := offs[i] - w*time.Microsecond; d < -time.Microsecond || d > time.Microsecond {
			t.Errorf("arrival %d at %v, want %v", i+1, offs[i], w*time.Microsecond)
		}
	}
}

// TestConstantExactCounts: a constant process at rate r over a window W
// plans exactly r·W arrivals when r·W is whole, both as one finite step (a
// ladder step) and as a forever step cut by the window (probe, daemon), the
// first half an interval in. These are the seed experiments (1/s × 10s,
// 40/s × 4s) and the ladder steps that used to plan one too few.
func TestConstantExactCounts(t *testing.T) {
	for _, tc := range []struct {
		rate float64
		dur  time.Duration
		want int
	}{
		{1, 10 * time.Second, 10},
		{40, 4 * time.Second, 160},
		{2, 4 * time.Second, 8},
		{5, 4 * time.Second, 20},
		{100, 3 * time.Second, 300},
		{200, 3 * time.Second, 600},
		{8000, 3 * time.Second, 24000},
		{0.2, 10 * time.Second, 2},
		{3, 1500 * time.Millisecond, 4}, // 4.5: halves round down
		{0.7, time.Second, 1},           // 0.7 rounds to 1
		{0.3, time.Second, 0},           // 0.3 rounds to 0
		{7, 1234 * time.Millisecond, 9}, // 8.638 → 9
		{1000, 999 * time.Millisecond, 999},
	} {
		finite, err := New(Spec{Kind: Constant}, Step{Rate: tc.rate, Duration: tc.dur})
		if err != nil {
			t.Fatal(err)
		}
		forever, err := New(Spec{Kind: Constant}, Step{Rate: tc.rate})
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for {
			off, ok := finite.Next()
			if !ok {
				break
			}
			if n == 0 {
				if want := time.Duration(0.5 / tc.rate * 1e9); off != want {
					t.Errorf("%g/s: first arrival at %v, want half an interval, %v", tc.rate, off, want)
				}
			}
			n++
		}
		if n != tc.want {
			t.Errorf("%g/s for %v as a finite step: %d arrivals, want %d", tc.rate, tc.dur, n, tc.want)
		}
		m := 0
		for {
			off, ok := forever.Next()
			if !ok || off >= tc.dur {
				break
			}
			m++
		}
		if m != tc.want {
			t.Errorf("%g/s for %v as a forever step cut by the window: %d arrivals, want %d", tc.rate, tc.dur, m, tc.want)
		}
	}
}

// TestConstantStepPlanExact: in a multi-step constant plan every step plans
// its own exact count, whatever the steps before it planned (a step of
// 2.5 arrivals does not shift the next step's grid).
func TestConstantStepPlanExact(t *testing.T) {
	steps := []Step{
		{Rate: 2.5, Duration: time.Second}, // 2.5 → 2
		{Rate: 0, Duration: 500 * time.Millisecond},
		{Rate: 40, Duration: 4 * time.Second}, // 160
		{Rate: 8000, Duration: 3 * time.Second},
		{Rate: 1, Duration: 10 * time.Second},
	}
	want := []int{2, 0, 160, 24000, 10}
	s, err := New(Spec{Kind: Constant}, steps...)
	if err != nil {
		t.Fatal(err)
	}
	got := make([]int, len(steps))
	for {
		off, ok := s.Next()
		if !ok {
			break
		}
		got[s.StepAt(off)]++
	}
	for i := range steps {
		if got[i] != want[i] {
			t.Errorf("step %d (%g/s for %v): %d arrivals, want %d", i+1, steps[i].Rate, steps[i].Duration, got[i], want[i])
		}
	}
}

// TestMeanCountOverSeeds: for Poisson and gamma arrivals the count over a
// window is random, but its mean over many seeds is r·W, within its
// statistical tolerance (4.5 standard errors of the mean, from the sample
// variance). A gamma process started with an ordinary gap (not the
// equilibrium one) is biased by (CV² − 1)/2 arrivals: +1.5 at k = 0.25,
// −0.375 at k = 4, which this test detects.
func TestMeanCountOverSeeds(t *testing.T) {
	const seeds = 4000
	plans := []struct {
		name  string
		steps []Step
		from  time.Duration // count arrivals planned in [from, to)
		to    time.Duration
		want  float64
	}{
		{"one step 10/s × 2s", []Step{{Rate: 10, Duration: 2 * time.Second}}, 0, 2 * time.Second, 20},
		{"forever 40/s cut at 0.5s", []Step{{Rate: 40}}, 0, 500 * time.Millisecond, 20},
		{"second step of a plan", []Step{{Rate: 3, Duration: time.Second}, {Rate: 25, Duration: 800 * time.Millisecond}}, time.Second, 1800 * time.Millisecond, 20},
	}
	for _, spec := range []Spec{
		{Kind: Poisson},
		{Kind: Gamma, Burstiness: 0.25},
		{Kind: Gamma, Burstiness: 0.5},
		{Kind: Gamma, Burstiness: 4},
	} {
		for _, p := range plans {
			t.Run(fmt.Sprintf("%s k=%g %s", spec.Kind, spec.Burstiness, p.name), func(t *testing.T) {
				var sum, sum2 float64
				for seed := range uint64(seeds) {
					spec.Seed = seed + 1
					s, err := New(spec, p.steps...)
					if err != nil {
						t.Fatal(err)
					}
					n := 0
					for {
						off, ok := s.Next()
						if !ok || off >= p.to {
							break
						}
						if off >= p.from {
							n++
						}
					}
					sum += float64(n)
					sum2 += float64(n) * float64(n)
				}
				mean := sum / seeds
				variance := (sum2 - sum*sum/seeds) / (seeds - 1)
				se := math.Sqrt(variance / seeds)
				if math.Abs(mean-p.want) > 4.5*se {
					t.Errorf("mean count %.3f over %d seeds, want %.0f ± %.3f (4.5 standard errors)", mean, seeds, p.want, 4.5*se)
				}
			})
		}
	}
}

func TestForeverZeroRateExhausts(t *testing.T) {
	s, err := New(Spec{Kind: Constant}, Step{Rate: 2, Duration: 1100 * time.Millisecond}, Step{Rate: 0})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for {
		if _, ok := s.Next(); !ok {
			break
		}
		n++
		if n > 10 {
			t.Fatal("a forever zero-rate step kept yielding")
		}
	}
	if n != 2 || s.Count() != 2 {
		t.Errorf("got %d arrivals (Count %d), want 2", n, s.Count())
	}
}

func TestStepAtRateExpected(t *testing.T) {
	s, err := New(Spec{}, Step{Rate: 1, Duration: time.Second}, Step{Rate: 0, Duration: time.Second}, Step{Rate: 4, Duration: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		off      time.Duration
		step     int
		rate     float64
		expected float64
	}{
		{-1, -1, 0, 0},
		{0, 0, 1, 0},
		{500 * time.Millisecond, 0, 1, 0.5},
		{time.Second, 1, 0, 1},
		{2500 * time.Millisecond, 2, 4, 3},
		{3 * time.Second, -1, 0, 5},
		{10 * time.Second, -1, 0, 5},
	} {
		if got := s.StepAt(tc.off); got != tc.step {
			t.Errorf("StepAt(%v) = %d, want %d", tc.off, got, tc.step)
		}
		if got := s.Rate(tc.off); got != tc.rate {
			t.Errorf("Rate(%v) = %v, want %v", tc.off, got, tc.rate)
		}
		if got := s.Expected(tc.off); math.Abs(got-tc.expected) > 1e-9 {
			t.Errorf("Expected(%v) = %v, want %v", tc.off, got, tc.expected)
		}
	}
}

func TestBadSpecsRejected(t *testing.T) {
	for _, tc := range []struct {
		name  string
		spec  Spec
		steps []Step
		want  string
	}{
		{"no steps", Spec{}, nil, "no steps"},
		{"negative rate", Spec{}, []Step{{Rate: -1}}, "step 1: rate"},
		{"NaN rate", Spec{}, []Step{{Rate: math.NaN()}}, "rate must be a finite"},
		{"infinite rate", Spec{}, []Step{{Rate: 1, Duration: time.Second}, {Rate: math.Inf(1)}}, "step 2: rate"},
		{"negative duration", Spec{}, []Step{{Rate: 1, Duration: -time.Second}}, "duration must be ≥ 0"},
		{"forever in the middle", Spec{}, []Step{{Rate: 1}, {Rate: 2, Duration: time.Second}}, "only allowed on the last step"},
		{"unknown kind", Spec{Kind: "weibull"}, []Step{{Rate: 1}}, `unknown arrival process "weibull"`},
		{"negative shape", Spec{Kind: Gamma, Burstiness: -2}, []Step{{Rate: 1}}, "burstiness"},
		{"infinite shape", Spec{Kind: Gamma, Burstiness: math.Inf(1)}, []Step{{Rate: 1}}, "burstiness"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := New(tc.spec, tc.steps...)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("New: err = %v, want one containing %q", err, tc.want)
			}
		})
	}
}

func TestParseKind(t *testing.T) {
	for in, want := range map[string]Kind{"": Poisson, "Poisson": Poisson, " constant ": Constant, "gamma": Gamma} {
		if got, err := ParseKind(in); err != nil || got != want {
			t.Errorf("ParseKind(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := ParseKind("uniform"); err == nil {
		t.Error("ParseKind accepted an unknown kind")
	}
}

// TestKindUnmarshalText: the configuration's arrival keys are read by
// Kind itself: ParseKind's names (any case, "" Poisson), anything else
// refused with the choices, the value left alone.
func TestKindUnmarshalText(t *testing.T) {
	for in, want := range map[string]Kind{"": Poisson, "GAMMA": Gamma, "constant": Constant} {
		var k Kind
		if err := k.UnmarshalText([]byte(in)); err != nil || k != want {
			t.Errorf("UnmarshalText(%q) = %q, %v; want %q", in, k, err, want)
		}
	}
	k := Constant
	if err := k.UnmarshalText([]byte("bursty")); err == nil || err.Error() != `want poisson, constant or gamma, got "bursty"` || k != Constant {
		t.Errorf("UnmarshalText(bursty) = %q, %v", k, err)
	}
	for k, want := range map[Kind]bool{"": true, Poisson: true, Gamma: true, "bursty": false, "Poisson": false} {
		if k.Valid() != want {
			t.Errorf("%q.Valid() = %v", k, !want)
		}
	}
}

func BenchmarkSequenceNext(b *testing.B) {
	for _, k := range Kinds {
		b.Run(string(k), func(b *testing.B) {
			s, err := New(Spec{Kind: k, Burstiness: 0.5, Seed: 1}, Step{Rate: 1e6})
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				s.Next()
			}
		})
	}
}
