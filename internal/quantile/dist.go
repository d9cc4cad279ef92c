package quantile

import (
	"iter"
	"math"
	"slices"
	"time"
)

// DefaultSampleCap is how many samples a distribution keeps exactly before
// it switches to its bounded histogram (8 bytes each: 8 MiB per figure).
const DefaultSampleCap = 1 << 20

// histogramGamma is the ratio between consecutive histogram bucket bounds.
const histogramGamma = 1.01

// HistogramRelativeError bounds the relative error of a quantile read from
// the histogram (a bucket's geometric midpoint is reported).
var HistogramRelativeError = (histogramGamma - 1) / (histogramGamma + 1)

// Percentiles is a distribution's summary: nearest-rank percentiles, the
// exact maximum and the sample count. All zero when Count is zero.
type Percentiles struct {
	Count int
	P50   time.Duration
	P90   time.Duration
	P95   time.Duration
	P99   time.Duration
	Max   time.Duration
	// Exact is true when the percentiles were read from every sample; false
	// when the histogram was used (see HistogramRelativeError).
	Exact bool
}

// Dist accumulates duration samples with bounded memory. The zero value is
// not usable: call NewDist. Not safe for concurrent use.
type Dist struct {
	cap     int
	samples []time.Duration
	sorted  bool
	hist    map[int]int // bucket index → count, once past cap
	low     int         // samples ≤ 0 once in histogram mode
	n       int
	min     time.Duration
	max     time.Duration
}

// NewDist returns a distribution that keeps up to sampleCap samples exactly
// (DefaultSampleCap when sampleCap ≤ 0).
func NewDist(sampleCap int) *Dist {
	if sampleCap <= 0 {
		sampleCap = DefaultSampleCap
	}
	return &Dist{cap: sampleCap, sorted: true}
}

// Add records one sample.
func (d *Dist) Add(v time.Duration) {
	if d.n == 0 || v < d.min {
		d.min = v
	}
	if d.n == 0 || v > d.max {
		d.max = v
	}
	d.n++
	if d.hist == nil {
		d.samples = append(d.samples, v)
		d.sorted = false
		if len(d.samples) > d.cap {
			d.hist = make(map[int]int)
			for _, s := range d.samples {
				d.addHist(s)
			}
			d.samples = nil
		}
		return
	}
	d.addHist(v)
}

// AddIf records v when ok: it takes a figure's (value, defined) pair.
func (d *Dist) AddIf(v time.Duration, ok bool) {
	if ok {
		d.Add(v)
	}
}

func (d *Dist) addHist(v time.Duration) {
	if v <= 0 {
		d.low++
		return
	}
	d.hist[BucketOf(v)]++
}

// BucketOf is the index of the histogram bucket of a positive duration:
// bucket k holds the values in (γ^(k−1), γ^k] nanoseconds, γ = 1.01. A
// caller that keeps its own bounded buckets (the live verdict, the status
// page's rolling store, the saturation rule) counts by it and reads them
// back through NewHist and AddBuckets, BucketPercentiles, or BucketMid.
func BucketOf(v time.Duration) int {
	return int(math.Ceil(math.Log(float64(v)) / math.Log(histogramGamma)))
}

// BucketMid is the value, in nanoseconds, a quantile falling in bucket k
// reads: the bucket's geometric midpoint (within HistogramRelativeError of
// every value in it).
func BucketMid(k int) float64 {
	return 2 * math.Pow(histogramGamma, float64(k)) / (histogramGamma + 1)
}

// NewHist returns an empty distribution in histogram mode from its first
// sample: what buckets counted elsewhere (BucketOf) are folded into with
// AddBuckets.
func NewHist() *Dist { return &Dist{hist: map[int]int{}} }

// AddBuckets folds n samples counted elsewhere by bucket (BucketOf) into
// d, switching it to its histogram: their minimum and maximum, low of them
// ≤ 0, and each bucket's index and count.
func (d *Dist) AddBuckets(n, low int, lo, hi time.Duration, buckets iter.Seq2[int, int]) {
	if n == 0 {
		return
	}
	if d.hist == nil {
		d.toHist()
	}
	if d.n == 0 || lo < d.min {
		d.min = lo
	}
	if d.n == 0 || hi > d.max {
		d.max = hi
	}
	d.n += n
	d.low += low
	for k, c := range buckets {
		d.hist[k] += c
	}
}

// Quantile returns the nearest-rank q-quantile (0 < q ≤ 1): the smallest
// sample such that at least q of all samples are ≤ it. Zero when empty.
func (d *Dist) Quantile(q float64) time.Duration {
	if d.n == 0 {
		return 0
	}
	if d.hist != nil {
		var out [1]time.Duration
		bucketQuantiles(d.n, d.low, d.min, d.max, d.buckets(), []float64{q}, out[:])
		return out[0]
	}
	rank := nearestRank(q, d.n)
	if rank == d.n {
		return d.max
	}
	if !d.sorted {
		slices.Sort(d.samples)
		d.sorted = true
	}
	return d.samples[rank-1]
}

// nearestRank is the 1-based rank of the q-quantile of n samples.
func nearestRank(q float64, n int) int {
	return min(max(int(math.Ceil(q*float64(n))), 1), n)
}

// buckets returns the histogram's buckets sorted by index.
func (d *Dist) buckets() []Bucket {
	out := make([]Bucket, 0, len(d.hist))
	for k, c := range d.hist {
		out = append(out, Bucket{Index: k, Count: c})
	}
	slices.SortFunc(out, func(a, b Bucket) int { return a.Index - b.Index })
	return out
}

// Bucket is one histogram bucket counted elsewhere: its index (BucketOf)
// and how many values fell in it.
type Bucket struct{ Index, Count int }

// percentileQs are the quantiles Percentiles reports, ascending.
var percentileQs = []float64{0.50, 0.90, 0.95, 0.99}

// BucketPercentiles summarises n samples counted by bucket without
// building a Dist: low of them ≤ 0, the others in buckets sorted by index
// (an index may repeat, as when several stores' buckets are concatenated
// and sorted), lo and hi their extremes. It reads what a NewHist fed the
// same counts through AddBuckets reads (Exact false), in one pass.
func BucketPercentiles(n, low int, lo, hi time.Duration, buckets []Bucket) Percentiles {
	if n == 0 {
		return Percentiles{Exact: true}
	}
	var q [4]time.Duration
	bucketQuantiles(n, low, lo, hi, buckets, percentileQs, q[:])
	return Percentiles{Count: n, P50: q[0], P90: q[1], P95: q[2], P99: q[3], Max: hi}
}

// bucketQuantiles sets out[i] to the nearest-rank qs[i]-quantile (qs
// ascending) of n > 0 samples counted as BucketPercentiles says: the
// maximum at the top rank, the minimum within the low samples, else the
// geometric midpoint of the bucket the rank falls in, kept within
// [lo, hi].
func bucketQuantiles(n, low int, lo, hi time.Duration, buckets []Bucket, qs []float64, out []time.Duration) {
	seen, b := low, 0
	for i, q := range qs {
		rank := nearestRank(q, n)
		switch {
		case rank == n:
			out[i] = hi
			continue
		case rank <= low:
			out[i] = lo
			continue
		}
		for b < len(buckets) && seen+buckets[b].Count < rank {
			seen += buckets[b].Count
			b++
		}
		if b == len(buckets) {
			out[i] = hi
			continue
		}
		out[i] = min(max(time.Duration(BucketMid(buckets[b].Index)), lo), hi)
	}
}

// Percentiles summarises the distribution.
func (d *Dist) Percentiles() Percentiles {
	if d.n == 0 {
		return Percentiles{Exact: true}
	}
	if d.hist != nil {
		return BucketPercentiles(d.n, d.low, d.min, d.max, d.buckets())
	}
	return Percentiles{
		Count: d.n,
		P50:   d.Quantile(0.50),
		P90:   d.Quantile(0.90),
		P95:   d.Quantile(0.95),
		P99:   d.Quantile(0.99),
		Max:   d.max,
		Exact: true,
	}
}
