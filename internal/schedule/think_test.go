package schedule

import (
	"math"
	"strings"
	"testing"
	"time"
)

func TestThinkStatistics(t *testing.T) {
	const n = 50000
	mean := 200 * time.Millisecond
	for _, tc := range []struct {
		spec ThinkSpec
		cv   float64
	}{
		{ThinkSpec{Kind: ThinkConstant, Mean: mean}, 0},
		{ThinkSpec{Kind: ThinkExponential, Mean: mean}, 1},
		{ThinkSpec{Kind: ThinkLognormal, Mean: mean, Sigma: 0.5}, math.Sqrt(math.Exp(0.25) - 1)},
	} {
		t.Run(string(tc.spec.Kind), func(t *testing.T) {
			th, err := NewThink(tc.spec, 42, 1)
			if err != nil {
				t.Fatal(err)
			}
			var sum, sum2 float64
			for range n {
				d := th.Next()
				if d < 0 {
					t.Fatalf("negative think time %v", d)
				}
				x := d.Seconds()
				sum += x
				sum2 += x * x
			}
			m := sum / n
			cv := math.Sqrt(math.Max(sum2/n-m*m, 0)) / m
			if rel := math.Abs(m/mean.Seconds() - 1); rel > 6*tc.cv/math.Sqrt(n)+1e-6 {
				t.Errorf("mean %.4fs, want %.4fs (relative error %.4f)", m, mean.Seconds(), rel)
			}
			if math.Abs(cv-tc.cv) > 0.05*tc.cv+1e-6 {
				t.Errorf("CV %.4f, want %.4f", cv, tc.cv)
			}
		})
	}
}

func TestThinkSeededPerUser(t *testing.T) {
	spec := ThinkSpec{Kind: ThinkExponential, Mean: time.Second}
	a, _ := NewThink(spec, 1, 1)
	b, _ := NewThink(spec, 1, 1)
	c, _ := NewThink(spec, 1, 2)
	differ := false
	for range 100 {
		x, y, z := a.Next(), b.Next(), c.Next()
		if x != y {
			t.Fatal("same seed and stream gave different think times")
		}
		differ = differ || x != z
	}
	if !differ {
		t.Error("different users drew the same think times")
	}
}

func TestThinkBadSpecs(t *testing.T) {
	for _, tc := range []struct {
		spec ThinkSpec
		want string
	}{
		{ThinkSpec{Kind: "pareto", Mean: time.Second}, "unknown think-time"},
		{ThinkSpec{Mean: -time.Second}, "mean must be ≥ 0"},
		{ThinkSpec{Kind: ThinkLognormal, Mean: time.Second}, "sigma > 0"},
		{ThinkSpec{Kind: ThinkLognormal, Mean: time.Second, Sigma: math.NaN()}, "sigma > 0"},
	} {
		if _, err := NewThink(tc.spec, 1, 1); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("NewThink(%+v): err = %v, want one containing %q", tc.spec, err, tc.want)
		}
	}
}

func TestThinkZeroMean(t *testing.T) {
	th, err := NewThink(ThinkSpec{Kind: ThinkLognormal, Sigma: 1}, 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	if d := th.Next(); d != 0 {
		t.Errorf("zero-mean think time drew %v", d)
	}
}

// TestParseThink: the --think-time and session think syntax.
func TestParseThink(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want ThinkSpec
		bad  bool
	}{
		{"900ms", ThinkSpec{Kind: ThinkConstant, Mean: 900 * time.Millisecond}, false},
		{" 2s ", ThinkSpec{Kind: ThinkConstant, Mean: 2 * time.Second}, false},
		{"constant:900ms", ThinkSpec{Kind: ThinkConstant, Mean: 900 * time.Millisecond}, false},
		{"exponential:1s", ThinkSpec{Kind: ThinkExponential, Mean: time.Second}, false},
		{"lognormal:1s:0.5", ThinkSpec{Kind: ThinkLognormal, Mean: time.Second, Sigma: 0.5}, false},
		{"900", ThinkSpec{}, true},
		{"-1s", ThinkSpec{}, true},
		{"lognormal:1s", ThinkSpec{}, true},
		{"lognormal:1s:x", ThinkSpec{}, true},
		{"exponential:x", ThinkSpec{}, true},
		{"pareto:1s", ThinkSpec{}, true},
		{"constant:1s:2:3", ThinkSpec{}, true},
	} {
		got, err := ParseThink(tc.in)
		if (err != nil) != tc.bad || (!tc.bad && got != tc.want) {
			t.Errorf("ParseThink(%q) = %+v, %v; want %+v (bad %v)", tc.in, got, err, tc.want, tc.bad)
		}
	}
}
