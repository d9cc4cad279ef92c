package servermetrics

import (
	"math"
	"slices"
	"sort"
)

type histSeries struct {
	prev, delta []Bucket // last valid cumulative buckets; accumulated deltas on the same bounds
	resets      int
	relayouts   int
}

// validBuckets reports why cumulative buckets are unusable, or "".
func validBuckets(bs []Bucket) string {
	for i, b := range bs {
		if math.IsNaN(b.UpperBound) || (i > 0 && b.UpperBound <= bs[i-1].UpperBound) {
			return "bucket bounds not increasing"
		}
		if !finite(b.Count) || b.Count < 0 {
			return "NaN, infinite or negative bucket count"
		}
		if i > 0 && b.Count < bs[i-1].Count {
			return "bucket counts not cumulative"
		}
	}
	if len(bs) == 0 || !math.IsInf(bs[len(bs)-1].UpperBound, 1) {
		return "no +Inf bucket"
	}
	return ""
}

func sameBounds(a, b []Bucket) bool {
	return slices.EqualFunc(a, b, func(x, y Bucket) bool { return x.UpperBound == y.UpperBound })
}

func (x *acc) addHistogram(s Series, first bool) {
	if why := validBuckets(s.Buckets); why != "" {
		x.bad(why)
		x.taint(s.Key)
		return
	}
	if x.hs == nil {
		x.hs = map[string]*histSeries{}
	}
	cur := slices.Clone(s.Buckets)
	h, ok := x.hs[s.Key]
	switch {
	case !ok && (first || x.tainted[s.Key]):
		zero := slices.Clone(cur)
		for i := range zero {
			zero[i].Count = 0
		}
		x.hs[s.Key] = &histSeries{prev: cur, delta: zero}
		if !first {
			x.gaps++ // its start is unknown: count from here
		}
		return
	case !ok: // created during the window
		x.hs[s.Key] = &histSeries{prev: cur, delta: slices.Clone(cur)}
		return
	case !sameBounds(h.prev, cur): // a new layout (a restart with other buckets): count anew
		h.delta = slices.Clone(cur)
		h.relayouts++
		h.resets++
		h.prev = cur
		return
	}
	reset := false
	for i := range cur {
		if cur[i].Count < h.prev[i].Count {
			reset = true
			break
		}
	}
	for i := range cur {
		d := cur[i].Count
		if !reset {
			d -= h.prev[i].Count
		}
		h.delta[i].Count += d
	}
	if reset {
		h.resets++
	}
	h.prev = cur
}

func (x *acc) relayouts() int {
	n := 0
	for _, h := range x.hs {
		n += h.relayouts
	}
	return n
}

// histogram merges the series' window deltas on their common bounds.
func (x *acc) histogram() *HistogramStat {
	out := &HistogramStat{}
	keys := sortedKeys(x.hs)
	if len(keys) == 0 {
		return out
	}
	common := map[float64]int{}
	for _, k := range keys {
		for _, b := range x.hs[k].delta {
			common[b.UpperBound]++
		}
	}
	var bounds []float64
	for ub, n := range common {
		if n == len(keys) {
			bounds = append(bounds, ub)
		}
	}
	sort.Float64s(bounds)
	merged := make([]Bucket, len(bounds))
	for i, ub := range bounds {
		merged[i].UpperBound = ub
	}
	for _, k := range keys {
		h := x.hs[k]
		out.Resets += h.resets
		j := 0
		for _, b := range h.delta {
			for j < len(merged) && merged[j].UpperBound < b.UpperBound {
				j++
			}
			if j < len(merged) && merged[j].UpperBound == b.UpperBound {
				merged[j].Count += b.Count
			}
		}
	}
	out.LowerBound = out.Resets > 0
	if n := len(merged); n > 0 && finite(merged[n-1].Count) {
		out.Count = merged[n-1].Count
	}
	if out.Count > 0 {
		out.P50 = BucketQuantile(0.50, merged)
		out.P95 = BucketQuantile(0.95, merged)
		out.P99 = BucketQuantile(0.99, merged)
	}
	return out
}
