package servermetrics

import "math"

// BucketQuantile returns the q-quantile (0 < q < 1) of cumulative buckets
// (ascending bounds, the last +Inf) the way Prometheus' histogram_quantile
// does: the bucket holding rank q·count is found and the value
// interpolated linearly within it, the first bucket starting at 0 when its
// bound is positive. A quantile in the +Inf bucket is the highest finite
// bound, marked LowerBound. nil when there are no observations, no finite
// bound to answer with, or q is out of range.
func BucketQuantile(q float64, buckets []Bucket) *Quantile {
	n := len(buckets)
	if n == 0 || !(q > 0 && q < 1) {
		return nil
	}
	total := buckets[n-1].Count
	if !(total > 0) || !finite(total) {
		return nil
	}
	rank := q * total
	prevCount := 0.0
	// Counts are made monotonic as they are read: a float sum may dip.
	run := 0.0
	for i, b := range buckets {
		c := math.Max(run, b.Count)
		run = c
		if c < rank {
			prevCount = c
			continue
		}
		if math.IsInf(b.UpperBound, 1) {
			if i == 0 {
				return nil // only a +Inf bucket: no bound to report
			}
			return &Quantile{Value: buckets[i-1].UpperBound, LowerBound: true, BucketLow: buckets[i-1].UpperBound}
		}
		lower := 0.0
		switch {
		case i > 0:
			lower = buckets[i-1].UpperBound
		case b.UpperBound <= 0:
			return &Quantile{Value: b.UpperBound}
		}
		v := lower + (b.UpperBound-lower)*(rank-prevCount)/(c-prevCount) // prevCount < rank ≤ c
		if !finite(v) {
			return nil
		}
		return &Quantile{Value: v, BucketLow: lower, BucketHigh: b.UpperBound}
	}
	return nil
}
