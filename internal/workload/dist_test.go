package workload

import (
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

func moments(d LengthDist, n int, seed uint64) (mean, sd float64, lo, hi int, vals []int) {
	r := rand.New(rand.NewPCG(seed, 1))
	lo, hi = math.MaxInt, math.MinInt
	sum, sum2 := 0.0, 0.0
	vals = make([]int, n)
	for i := range n {
		v := d.Sample(r)
		vals[i] = v
		sum += float64(v)
		sum2 += float64(v) * float64(v)
		lo, hi = min(lo, v), max(hi, v)
	}
	mean = sum / float64(n)
	return mean, math.Sqrt(sum2/float64(n) - mean*mean), lo, hi, vals
}

func median(vals []int) float64 {
	s := append([]int(nil), vals...)
	sort.Ints(s)
	return float64(s[len(s)/2])
}

func TestDistributionMoments(t *testing.T) {
	const n = 40000
	mustLN := func(d LogNormal, err error) LogNormal {
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	tests := []struct {
		name           string
		d              LengthDist
		mean, sd       float64 // expected (sd < 0: not checked)
		median         float64 // expected (0: not checked)
		lo, hi         int     // observed range must stay inside
		tolMean, tolSD float64 // relative tolerances
	}{
		{"fixed", Fixed{128}, 128, 0, 128, 128, 128, 0, 0},
		{"uniform", Uniform{100, 200}, 150, math.Sqrt((101*101 - 1) / 12.0), 0, 100, 200, 0.01, 0.02},
		{"normal", Normal{500, 50}, 500, 50, 500, 1, math.MaxInt, 0.01, 0.03},
		{"lognormal median", mustLN(NewLogNormalMedian(300, 0.5)), 300 * math.Exp(0.125), -1, 300, 1, math.MaxInt, 0.02, 0},
		{"lognormal mean", mustLN(NewLogNormalMean(300, 0.8)), 300, -1, 0, 1, math.MaxInt, 0.03, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mean, sd, lo, hi, vals := moments(tt.d, n, 7)
			if lo < tt.lo || hi > tt.hi {
				t.Errorf("range [%d,%d] outside [%d,%d]", lo, hi, tt.lo, tt.hi)
			}
			if math.Abs(mean-tt.mean) > tt.tolMean*tt.mean+1e-9 {
				t.Errorf("mean %.2f, want %.2f ±%.0f%%", mean, tt.mean, tt.tolMean*100)
			}
			if tt.sd >= 0 && math.Abs(sd-tt.sd) > tt.tolSD*tt.sd+1e-9 {
				t.Errorf("sd %.2f, want %.2f ±%.0f%%", sd, tt.sd, tt.tolSD*100)
			}
			if tt.median > 0 {
				if m := median(vals); math.Abs(m-tt.median) > 0.03*tt.median {
					t.Errorf("median %.1f, want %.1f", m, tt.median)
				}
			}
		})
	}
}

func TestNormalTruncatedAtOne(t *testing.T) {
	_, _, lo, _, vals := moments(Normal{2, 10}, 10000, 3)
	if lo < 1 {
		t.Fatalf("normal drew %d < 1", lo)
	}
	ones := 0
	for _, v := range vals {
		if v == 1 {
			ones++
		}
	}
	// Truncation redraws rather than clamps: 1 must not collect the whole lower tail
	// (clamping would put ≈ 45% of draws at 1).
	if ones > len(vals)/5 {
		t.Errorf("%d of %d draws are 1: looks clamped, not truncated", ones, len(vals))
	}
}

func TestEmpiricalResamples(t *testing.T) {
	e, err := ParseEmpirical(strings.NewReader("# observed\n10\n\n20\n20\n 30 \n"), "obs.txt")
	if err != nil {
		t.Fatal(err)
	}
	if e.Len() != 4 {
		t.Fatalf("len %d, want 4", e.Len())
	}
	counts := map[int]int{}
	_, _, _, _, vals := moments(e, 40000, 11)
	for _, v := range vals {
		counts[v]++
	}
	if len(counts) != 3 {
		t.Fatalf("values %v, want only 10, 20, 30", counts)
	}
	for v, want := range map[int]float64{10: 0.25, 20: 0.5, 30: 0.25} {
		if got := float64(counts[v]) / 40000; math.Abs(got-want) > 0.02 {
			t.Errorf("share of %d = %.3f, want %.2f", v, got, want)
		}
	}
}

func TestDistSpecErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	bad := write("bad.txt", "12\n13\ntwelve\n")
	neg := write("neg.txt", "5\n0\n")
	empty := write("empty.txt", "\n# nothing\n")
	good := write("good.txt", "5\n6\n")
	tests := []struct {
		spec DistSpec
		want string // substring of the error; "" = no error
	}{
		{DistSpec{Dist: "fixed", Value: 10}, ""},
		{DistSpec{Dist: "fixed"}, "k: fixed length 0 must be ≥ 1"},
		{DistSpec{Dist: "uniform", Min: 10, Max: 5}, "k: uniform min 10 is greater than max 5"},
		{DistSpec{Dist: "uniform", Min: 0, Max: 5}, "uniform min 0 must be ≥ 1"},
		{DistSpec{Dist: "normal", Mean: 100, Stddev: -1}, "k: normal stddev -1 must be ≥ 0"},
		{DistSpec{Dist: "normal", Mean: math.NaN(), Stddev: 1}, "must be finite"},
		{DistSpec{Dist: "lognormal", Median: 100, Sigma: -0.5}, "lognormal sigma -0.5 must be ≥ 0"},
		{DistSpec{Dist: "lognormal", Median: 100, Mean: 100, Sigma: 0.5}, "median or mean, not both"},
		{DistSpec{Dist: "lognormal", Sigma: 0.5}, "lognormal needs median or mean"},
		{DistSpec{Dist: "lognormal", Mean: 100, Sigma: 0.5}, ""},
		{DistSpec{Dist: "poisson"}, `k: unknown dist "poisson"`},
		{DistSpec{}, "k: dist is required"},
		{DistSpec{Dist: "empirical"}, "empirical needs file"},
		{DistSpec{Dist: "empirical", File: bad}, bad + ":3: not an integer length"},
		{DistSpec{Dist: "empirical", File: neg}, neg + ":2: length 0 must be ≥ 1"},
		{DistSpec{Dist: "empirical", File: empty}, empty + ": no lengths (empty file)"},
		{DistSpec{Dist: "empirical", File: filepath.Join(dir, "missing.txt")}, "missing.txt"},
		{DistSpec{Dist: "empirical", File: good}, ""},
	}
	for _, tt := range tests {
		d, err := tt.spec.Build("k")
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%+v: unexpected error %v", tt.spec, err)
		case tt.want == "" && d == nil:
			t.Errorf("%+v: nil distribution", tt.spec)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%+v: error %v, want it to contain %q", tt.spec, err, tt.want)
		case tt.want != "" && !strings.HasPrefix(err.Error(), "k: "):
			t.Errorf("%+v: error %q must start with the key", tt.spec, err)
		}
	}
}
