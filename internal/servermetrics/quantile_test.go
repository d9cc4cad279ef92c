package servermetrics

import (
	"math"
	"math/rand/v2"
	"sort"
	"testing"
)

// cumulative builds buckets with the given bounds (+Inf added) from
// observations.
func cumulative(bounds []float64, obs []float64) []Bucket {
	sort.Float64s(obs)
	out := make([]Bucket, 0, len(bounds)+1)
	for _, ub := range append(bounds, math.Inf(1)) {
		n := sort.Search(len(obs), func(i int) bool { return obs[i] > ub })
		out = append(out, Bucket{UpperBound: ub, Count: float64(n)})
	}
	return out
}

// exactQuantile is the q-quantile of sorted observations (nearest rank).
func exactQuantile(sorted []float64, q float64) float64 {
	i := int(math.Ceil(q*float64(len(sorted)))) - 1
	return sorted[max(0, i)]
}

// TestBucketQuantileKnownDistributions: quantiles from buckets of known
// distributions land within one bucket of the exact quantile (and, for a
// uniform distribution with aligned buckets, on it).
func TestBucketQuantileKnownDistributions(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	linear := func(step, top float64) []float64 {
		var b []float64
		for x := step; x <= top+1e-12; x += step {
			b = append(b, x)
		}
		return b
	}
	exponential := func(start, factor float64, n int) []float64 {
		b := make([]float64, n)
		for i := range b {
			b[i] = start * math.Pow(factor, float64(i))
		}
		return b
	}
	tests := []struct {
		name   string
		bounds []float64
		draw   func() float64
		// tol is the allowed error relative to the exact quantile's bucket
		// width: 1 = anywhere in the right bucket.
		tol float64
	}{
		{"uniform 0-1, buckets of 0.1", linear(0.1, 1), rng.Float64, 0.05},
		{"exponential mean 50ms, exponential buckets", exponential(0.001, 1.25, 60), func() float64 { return rng.ExpFloat64() * 0.05 }, 1},
		{"lognormal median 0.8s, vLLM e2e buckets", []float64{0.3, 0.5, 0.8, 1, 1.5, 2, 2.5, 5, 10, 15, 20, 30, 40, 50, 60, 120, 240, 480, 960, 1920, 7680},
			func() float64 { return 0.8 * math.Exp(0.5*rng.NormFloat64()) }, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obs := make([]float64, 100000)
			for i := range obs {
				obs[i] = tt.draw()
			}
			bs := cumulative(tt.bounds, obs)
			sort.Float64s(obs)
			for _, q := range []float64{0.5, 0.95, 0.99} {
				exact := exactQuantile(obs, q)
				got := BucketQuantile(q, bs)
				if got == nil || got.LowerBound {
					t.Fatalf("q%v: %+v", q, got)
				}
				// The bucket the exact quantile falls in.
				i := sort.SearchFloat64s(tt.bounds, exact)
				lo, hi := 0.0, tt.bounds[i]
				if i > 0 {
					lo = tt.bounds[i-1]
				}
				if got.Value < lo || got.Value > hi || math.Abs(got.Value-exact) > tt.tol*(hi-lo) {
					t.Errorf("q%v = %v, exact %v, bucket (%v, %v]", q, got.Value, exact, lo, hi)
				}
			}
		})
	}
}

// TestBucketQuantileEdges: worked cases and the edges.
func TestBucketQuantileEdges(t *testing.T) {
	inf := math.Inf(1)
	tests := []struct {
		name    string
		q       float64
		buckets []Bucket
		want    *Quantile
	}{
		{"middle of the first bucket starts at 0", 0.5, []Bucket{{1, 10}, {inf, 10}}, &Quantile{Value: 0.5}},
		{"interpolated in the second bucket", 0.75, []Bucket{{1, 10}, {3, 20}, {inf, 20}}, &Quantile{Value: 2}},
		{"in the +Inf bucket: the highest bound, a lower bound", 0.99, []Bucket{{1, 10}, {2, 10}, {inf, 11}}, &Quantile{Value: 2, LowerBound: true}},
		{"only a +Inf bucket", 0.5, []Bucket{{inf, 10}}, nil},
		{"no observations", 0.5, []Bucket{{1, 0}, {inf, 0}}, nil},
		{"empty", 0.5, nil, nil},
		{"q out of range", 1.5, []Bucket{{1, 10}, {inf, 10}}, nil},
		{"q NaN", math.NaN(), []Bucket{{1, 10}, {inf, 10}}, nil},
		{"a non-positive first bound is returned as it is", 0.5, []Bucket{{-1, 10}, {inf, 10}}, &Quantile{Value: -1}},
		{"a dip in a float sum is read as flat", 0.5, []Bucket{{1, 4}, {2, 3.9999}, {4, 10}, {inf, 10}}, &Quantile{Value: 2 + 2*(5-4.0)/(10-4)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := BucketQuantile(tt.q, tt.buckets)
			if (got == nil) != (tt.want == nil) || (got != nil && (!near(got.Value, tt.want.Value) || got.LowerBound != tt.want.LowerBound)) {
				t.Errorf("BucketQuantile(%v) = %+v, want %+v", tt.q, got, tt.want)
			}
		})
	}
}
