package quantile

import (
	"fmt"
	"maps"
	"slices"
	"time"
)

// ExportExact is the largest number of samples a distribution exports one
// by one in a Sketch; past it the sketch carries the distribution's log
// buckets instead (quantiles within HistogramRelativeError, about 0.5%).
// 65,536 samples of 8 bytes: at most 512 KiB of samples per figure.
const ExportExact = 1 << 16

// Bounds a Sketch must keep to be merged: its bucket indexes (bucket k holds
// samples up to histogramGamma^k ns; index 5000 is about 10^21 ns) and the
// number of buckets.
const (
	maxBucketIndex = 5000
	maxBuckets     = maxBucketIndex + 1
)

// Sketch is a distribution of durations in a form another process can merge
// exactly: every sample (Exact, nanoseconds, ascending) while the
// distribution holds at most ExportExact of them exactly, else its log
// buckets (Buckets, bucket index → count, plus Low, the samples ≤ 0), whose
// quantiles are within HistogramRelativeError. Count, Min and Max are exact
// either way. Merging exact sketches gives exactly the percentiles of the
// union of their samples; a bucketed one makes the merge bucketed.
type Sketch struct {
	Count   int         `json:"count"`
	Min     int64       `json:"min_ns,omitempty"`
	Max     int64       `json:"max_ns,omitempty"`
	Exact   []int64     `json:"exact_ns,omitempty"`
	Low     int         `json:"low,omitempty"`
	Buckets map[int]int `json:"buckets,omitempty"`
}

// Sketch returns the distribution in mergeable form: its samples while it
// holds them exactly and there are at most maxExact of them (ExportExact
// when maxExact ≤ 0), else its buckets.
func (d *Dist) Sketch(maxExact int) Sketch {
	if maxExact <= 0 {
		maxExact = ExportExact
	}
	s := Sketch{Count: d.n}
	if d.n == 0 {
		return s
	}
	s.Min, s.Max = int64(d.min), int64(d.max)
	if d.hist == nil && len(d.samples) <= maxExact {
		if !d.sorted {
			slices.Sort(d.samples)
			d.sorted = true
		}
		s.Exact = make([]int64, len(d.samples))
		for i, v := range d.samples {
			s.Exact[i] = int64(v)
		}
		return s
	}
	s.Buckets = map[int]int{}
	if d.hist == nil {
		for _, v := range d.samples {
			if v <= 0 {
				s.Low++
			} else {
				s.Buckets[BucketOf(v)]++
			}
		}
		return s
	}
	s.Low = d.low
	maps.Copy(s.Buckets, d.hist)
	return s
}

// Check reports what makes s unmergeable: counts that do not add up,
// samples out of order or outside [Min, Max], bucket indexes out of range.
// A sketch from another process is checked before it is merged.
func (s Sketch) Check() error {
	switch {
	case s.Count < 0 || s.Low < 0:
		return fmt.Errorf("negative count (%d, low %d)", s.Count, s.Low)
	case len(s.Exact) > 0 && len(s.Buckets) > 0:
		return fmt.Errorf("both samples and buckets")
	case s.Count == 0:
		if len(s.Exact) > 0 || len(s.Buckets) > 0 || s.Low > 0 || s.Min != 0 || s.Max != 0 {
			return fmt.Errorf("samples with a count of 0")
		}
		return nil
	case s.Min > s.Max:
		return fmt.Errorf("min %d above max %d", s.Min, s.Max)
	}
	if len(s.Buckets) == 0 && s.Low == 0 {
		if len(s.Exact) != s.Count {
			return fmt.Errorf("%d samples for a count of %d", len(s.Exact), s.Count)
		}
		if s.Exact[0] != s.Min || s.Exact[len(s.Exact)-1] != s.Max {
			return fmt.Errorf("samples span [%d, %d], not [min %d, max %d]", s.Exact[0], s.Exact[len(s.Exact)-1], s.Min, s.Max)
		}
		for i := 1; i < len(s.Exact); i++ {
			if s.Exact[i] < s.Exact[i-1] {
				return fmt.Errorf("samples not in ascending order at %d", i)
			}
		}
		return nil
	}
	if len(s.Buckets) > maxBuckets {
		return fmt.Errorf("%d buckets (at most %d)", len(s.Buckets), maxBuckets)
	}
	n := s.Low
	for k, c := range s.Buckets {
		if k < 0 || k > maxBucketIndex || c <= 0 {
			return fmt.Errorf("bucket %d holds %d (want index 0..%d, count above 0)", k, c, maxBucketIndex)
		}
		n += c
		if n > s.Count {
			break
		}
	}
	if n != s.Count {
		return fmt.Errorf("buckets hold %d samples for a count of %d", n, s.Count)
	}
	return nil
}

// Merge adds the samples of s (checked first: see Sketch.Check). While both
// are exact the result is exact (up to the distribution's sample cap);
// otherwise it is bucketed.
func (d *Dist) Merge(s Sketch) error {
	if err := s.Check(); err != nil {
		return fmt.Errorf("sketch: %w", err)
	}
	if s.Count == 0 {
		return nil
	}
	lo, hi := time.Duration(s.Min), time.Duration(s.Max)
	if d.n == 0 || lo < d.min {
		d.min = lo
	}
	if d.n == 0 || hi > d.max {
		d.max = hi
	}
	if len(s.Buckets) == 0 && s.Low == 0 && d.hist == nil {
		d.n += s.Count
		for _, v := range s.Exact {
			d.samples = append(d.samples, time.Duration(v))
		}
		d.sorted = false
		if len(d.samples) > d.cap {
			d.toHist()
		}
		return nil
	}
	if d.hist == nil {
		d.toHist()
	}
	d.n += s.Count
	for _, v := range s.Exact {
		d.addHist(time.Duration(v))
	}
	d.low += s.Low
	for k, c := range s.Buckets {
		d.hist[k] += c
	}
	return nil
}

// toHist moves the exact samples into buckets.
func (d *Dist) toHist() {
	d.hist = make(map[int]int)
	for _, v := range d.samples {
		d.addHist(v)
	}
	d.samples = nil
}
