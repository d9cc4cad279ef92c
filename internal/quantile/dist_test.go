package quantile

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

func TestDistNearestRank(t *testing.T) {
	tests := []struct {
		name    string
		samples []time.Duration
		want    Percentiles
	}{
		{"empty", nil, Percentiles{Exact: true}},
		{"one", []time.Duration{7}, Percentiles{Count: 1, P50: 7, P90: 7, P95: 7, P99: 7, Max: 7, Exact: true}},
		{"1..100 shuffled", shuffled(100), Percentiles{Count: 100, P50: 50, P90: 90, P95: 95, P99: 99, Max: 100, Exact: true}},
		{"1..10", seq(10), Percentiles{Count: 10, P50: 5, P90: 9, P95: 10, P99: 10, Max: 10, Exact: true}},
		{"1..1000", seq(1000), Percentiles{Count: 1000, P50: 500, P90: 900, P95: 950, P99: 990, Max: 1000, Exact: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := NewDist(0)
			for _, s := range tt.samples {
				d.Add(s)
			}
			if got := d.Percentiles(); got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestDistAddAfterQuery(t *testing.T) {
	d := NewDist(0)
	for _, v := range []time.Duration{5, 1, 3} {
		d.Add(v)
	}
	if got := d.Quantile(0.5); got != 3 {
		t.Fatalf("p50 = %v, want 3", got)
	}
	d.Add(0)
	d.Add(2)
	if got := d.Quantile(0.5); got != 2 {
		t.Fatalf("p50 after more adds = %v, want 2", got)
	}
}

func TestDistHistogramBoundedError(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	const n = 20000
	exact := make([]time.Duration, 0, n)
	d := NewDist(1000)
	for range n {
		v := time.Duration(math.Exp(r.NormFloat64()*1.5+math.Log(float64(50*time.Millisecond)))) + 1
		exact = append(exact, v)
		d.Add(v)
	}
	d.Add(0) // a non-positive sample goes to the low bucket
	exact = append(exact, 0)
	slices.Sort(exact)
	p := d.Percentiles()
	if p.Exact {
		t.Fatal("past the cap the distribution should report inexact percentiles")
	}
	if p.Count != n+1 || p.Max != exact[len(exact)-1] {
		t.Fatalf("count/max must stay exact: %+v", p)
	}
	for _, q := range []float64{0.5, 0.9, 0.95, 0.99} {
		want := exact[int(math.Ceil(q*float64(len(exact))))-1]
		got := d.Quantile(q)
		if rel := math.Abs(float64(got-want)) / float64(want); rel > HistogramRelativeError+1e-9 {
			t.Errorf("q%.2f: got %v want %v (rel err %.4f > %.4f)", q, got, want, rel, HistogramRelativeError)
		}
	}
	if d.Quantile(1e-9) != 0 {
		t.Errorf("lowest quantile should be the non-positive minimum, got %v", d.Quantile(1e-9))
	}
}

func seq(n int) []time.Duration {
	out := make([]time.Duration, n)
	for i := range out {
		out[i] = time.Duration(i + 1)
	}
	return out
}

func shuffled(n int) []time.Duration {
	s := seq(n)
	rand.New(rand.NewPCG(3, 4)).Shuffle(len(s), func(i, j int) { s[i], s[j] = s[j], s[i] })
	return s
}

func BenchmarkDistAdd(b *testing.B) {
	d := NewDist(1 << 12)
	for i := 0; b.Loop(); i++ {
		d.Add(time.Duration(i%100000) * time.Microsecond)
	}
}

// TestBucketPercentilesNearestRank checks BucketPercentiles against the
// rule written out: every sample stands for its bucket's midpoint within
// [lo, hi] (the low ones for lo), the list sorted, the nearest rank read
// from it and the top rank the maximum; repeated indexes (several stores'
// buckets concatenated) count as one bucket, and a Dist fed the same
// buckets through AddBuckets reads the same.
func TestBucketPercentilesNearestRank(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	for trial := range 500 {
		var buckets []Bucket
		n, low := 0, rng.IntN(3)
		for range 1 + rng.IntN(40) {
			b := Bucket{Index: BucketOf(time.Millisecond) + rng.IntN(300), Count: 1 + rng.IntN(5)}
			buckets = append(buckets, b)
			n += b.Count
		}
		slices.SortFunc(buckets, func(a, b Bucket) int { return a.Index - b.Index })
		lo := time.Duration(BucketMid(buckets[0].Index)) - time.Duration(rng.IntN(1000))
		hi := time.Duration(BucketMid(buckets[len(buckets)-1].Index)) + time.Duration(rng.IntN(1000))
		if low > 0 {
			lo = 0
		}
		var values []time.Duration
		for range low {
			values = append(values, lo)
		}
		for _, b := range buckets {
			for range b.Count {
				values = append(values, min(max(time.Duration(BucketMid(b.Index)), lo), hi))
			}
		}
		total := n + low
		at := func(q float64) time.Duration {
			rank := min(max(int(math.Ceil(q*float64(total))), 1), total)
			if rank == total {
				return hi
			}
			return values[rank-1]
		}
		want := Percentiles{Count: total, P50: at(0.5), P90: at(0.9), P95: at(0.95), P99: at(0.99), Max: hi}
		if got := BucketPercentiles(total, low, lo, hi, buckets); got != want {
			t.Fatalf("trial %d: got %+v, want %+v", trial, got, want)
		}
		d := NewHist()
		d.AddBuckets(total, low, lo, hi, func(yield func(int, int) bool) {
			for _, b := range buckets {
				if !yield(b.Index, b.Count) {
					return
				}
			}
		})
		if got := d.Percentiles(); got != want {
			t.Fatalf("trial %d: Dist got %+v, want %+v", trial, got, want)
		}
		if got := d.Quantile(0.9); got != want.P90 {
			t.Fatalf("trial %d: Dist.Quantile(0.9) = %v, want %v", trial, got, want.P90)
		}
	}
	if got := BucketPercentiles(0, 0, 0, 0, nil); got != (Percentiles{Exact: true}) {
		t.Errorf("empty: %+v", got)
	}
}
