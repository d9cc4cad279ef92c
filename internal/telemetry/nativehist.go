package telemetry

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/model"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// The latency histograms are histVecs, not client_golang HistogramVecs.
// Both expose the same thing: a native histogram (schema 3 from the bucket
// factor 1.1, the default zero threshold of 2⁻¹²⁸, at most 160 buckets,
// the resolution halved beyond that and the histogram reset at most once
// an hour to regain it), classic buckets beside it when asked, exemplars
// spread over the values. client_golang keeps each histogram's buckets in
// two sync.Maps (hot and cold) so that observing never takes a lock; a
// prober observes each of its 15,000 histograms (at 1,000 targets) a few
// times a second at most, and scrapes them all every 15–30 s. Its maps cost
// about 105 MB of the heap after an hour at 1,000 targets and, walked at
// each scrape, 29 % of a scrape's CPU (docs/scale.md). A histSeries keeps
// its buckets in one sorted slice behind a mutex: 16 bytes a bucket, and a
// Write that reads the slice in order. TestHistSeriesMatchesClientGolang
// holds the two to the same exposition for the same observations.

// Native histogram constants, as client_golang reads its options.
const (
	histSchema        = 3                                          // the largest schema whose factor is at most nativeBucketFactor
	histMinSchema     = -4                                         // the lowest resolution a histogram is reduced to
	histZeroThreshold = prometheus.DefNativeHistogramZeroThreshold // 2⁻¹²⁸
	exemplarTTL       = 5 * time.Minute                            // a native exemplar older than this is replaced first
)

// histBounds[s] are the bucket boundaries, within one power of two, of
// schema s in 1..3 (a histogram starts at 3 and only ever goes down):
// 2^(i/2^s)/2 for i in 0..2^s-1, over Frexp's fraction range. They are
// the 16-digit decimal expansions client_golang uses, some an ulp below
// the nearest float64 (and math.Exp2 is an ulp off elsewhere), so that a
// value on a boundary lands in the bucket client_golang puts it in
// (TestHistSeriesMatchesClientGolang).
var histBounds = [histSchema + 1][]float64{
	1: {0.5, 0.7071067811865475},
	2: {0.5, 0.5946035575013605, 0.7071067811865475, 0.8408964152537144},
	3: {0.5, 0.5452538663326288, 0.5946035575013605, 0.6484197773255048,
		0.7071067811865475, 0.7711054127039704, 0.8408964152537144, 0.9170040432046711},
}

// histKey is the native bucket index of v (finite, above the zero
// threshold in magnitude) at schema s: the bucket (2^((k-1)/2^s), 2^(k/2^s)]
// holding |v|.
func histKey(v float64, s int32) int {
	frac, exp := math.Frexp(math.Abs(v))
	if s > 0 {
		bounds := histBounds[s]
		return sort.SearchFloat64s(bounds, frac) + (exp-1)*len(bounds)
	}
	k := exp
	if frac == 0.5 {
		k--
	}
	off := (1 << -s) - 1
	return (k + off) >> -s
}

// histBucket is one populated native bucket.
type histBucket struct {
	key int32
	n   uint64
}

// histSeries is one histogram: a prometheus.Metric, a prometheus.Observer
// and a prometheus.ExemplarObserver, safe for concurrent use.
type histSeries struct {
	vec    *histVec
	values []string
	labels []*dto.LabelPair

	mu        sync.Mutex
	count     uint64
	sum       float64
	schema    int32
	zero      uint64
	pos, neg  []histBucket // sorted by key
	classic   []uint64     // per classic bucket, +Inf last (not cumulative); nil when neither classic buckets nor exemplars
	classicEx []*dto.Exemplar
	exemplars []*dto.Exemplar // native, sorted by value
	created   time.Time
	resetAt   time.Time // when a histogram whose resolution was halved is reset; zero: none due
}

// reset clears the counts (not the exemplars), as at creation. The caller
// holds s.mu, or s is not shared yet.
func (s *histSeries) reset(now time.Time) {
	s.count, s.sum, s.zero = 0, 0, 0
	s.schema = histSchema
	s.pos, s.neg = s.pos[:0], s.neg[:0]
	clear(s.classic)
	s.created, s.resetAt = now, time.Time{}
}

func (s *histSeries) Desc() *prometheus.Desc { return s.vec.desc }

// Observe records v.
func (s *histSeries) Observe(v float64) { s.ObserveWithExemplar(v, nil) }

// ObserveWithExemplar records v with an exemplar of labels l (none when l
// is nil). It panics on labels an exemplar cannot carry (an invalid name,
// a value that is not UTF-8, more than 128 runes in all), as client_golang.
func (s *histSeries) ObserveWithExemplar(v float64, l prometheus.Labels) {
	now := s.vec.now()
	var e *dto.Exemplar
	if l != nil {
		var err error
		if e, err = newHistExemplar(v, now, l); err != nil {
			panic(err)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.maybeReset(now)
	s.count++
	s.sum += v
	bucket := 0
	if s.classic != nil {
		bucket = sort.SearchFloat64s(s.vec.o.classic, v)
		s.classic[bucket]++
		if e != nil {
			s.classicEx[bucket] = e
		}
	}
	if math.IsNaN(v) {
		return // counted and summed, in no native bucket
	}
	s.observeNative(v)
	if len(s.pos)+len(s.neg) > s.vec.o.maxBuckets {
		s.limit(now, v)
	}
	if e != nil && s.vec.o.exemplars > 0 {
		s.addExemplar(e, now)
	}
}

// observeNative adds v to its native bucket.
func (s *histSeries) observeNative(v float64) {
	if math.Abs(v) <= histZeroThreshold {
		s.zero++
		return
	}
	var key int
	if math.IsInf(v, 0) { // MaxFloat64's bucket, plus one
		key = histKey(math.MaxFloat64, s.schema) + 1
	} else {
		key = histKey(v, s.schema)
	}
	if v > 0 {
		s.pos = addToHistBucket(s.pos, int32(key), 1)
	} else {
		s.neg = addToHistBucket(s.neg, int32(key), 1)
	}
}

func addToHistBucket(b []histBucket, key int32, n uint64) []histBucket {
	i, found := slices.BinarySearchFunc(b, key, func(x histBucket, k int32) int { return int(x.key) - int(k) })
	if found {
		b[i].n += n
		return b
	}
	return slices.Insert(b, i, histBucket{key, n})
}

// limit brings the native buckets back under the maximum, as client_golang:
// a histogram last reset at least minReset ago is reset (keeping only v);
// else its resolution is halved, and a reset is due minReset after the last.
func (s *histSeries) limit(now time.Time, v float64) {
	o := s.vec.o
	if o.minReset > 0 && s.resetAt.IsZero() && now.Sub(s.created) >= o.minReset {
		s.reset(now)
		s.count, s.sum = 1, v
		if s.classic != nil {
			s.classic[sort.SearchFloat64s(o.classic, v)]++
		}
		s.observeNative(v)
		return
	}
	if o.minReset > 0 && s.resetAt.IsZero() {
		s.resetAt = s.created.Add(o.minReset)
	}
	for len(s.pos)+len(s.neg) > o.maxBuckets && s.schema > histMinSchema {
		s.schema--
		s.pos, s.neg = halveHistBuckets(s.pos), halveHistBuckets(s.neg)
	}
}

// maybeReset resets a histogram whose reset is due.
func (s *histSeries) maybeReset(now time.Time) {
	if !s.resetAt.IsZero() && !now.Before(s.resetAt) {
		s.reset(now)
	}
}

// halveHistBuckets merges buckets pairwise into those of the next lower
// schema: key k goes to ceil(k/2).
func halveHistBuckets(b []histBucket) []histBucket {
	out := b[:0]
	for _, x := range b {
		k := x.key
		if k > 0 {
			k++
		}
		k /= 2
		if n := len(out); n > 0 && out[n-1].key == k {
			out[n-1].n += x.n
			continue
		}
		out = append(out, histBucket{k, x.n})
	}
	return out
}

// addExemplar keeps e among the native exemplars, which stay sorted by
// value, choosing as client_golang does: while there is room e is added;
// then it replaces the oldest if that is older than exemplarTTL, else the
// older of the two closest in value (on a log scale), or e's neighbour if
// e would be closer to it than that pair. The kept ones stay spread over
// the histogram's values, and a new one always gets in.
func (s *histSeries) addExemplar(e *dto.Exemplar, now time.Time) {
	ex := s.exemplars
	nIdx := len(ex) // where e goes: before the first not below it
	for i, x := range ex {
		if e.GetValue() <= x.GetValue() {
			nIdx = i
			break
		}
	}
	if len(ex) < s.vec.o.exemplars {
		s.exemplars = slices.Insert(ex, nIdx, e)
		return
	}
	if len(ex) == 1 {
		ex[0] = e
		return
	}
	oldest, rIdx, md := 0, -1, -1.0
	for i, x := range ex {
		if x.GetTimestamp().AsTime().Before(ex[oldest].GetTimestamp().AsTime()) {
			oldest = i
		}
		if i == 0 {
			continue
		}
		if d := math.Abs(math.Log(x.GetValue()) - math.Log(ex[i-1].GetValue())); md == -1 || d < md {
			md, rIdx = d, i-1
			if x.GetTimestamp().AsTime().Before(ex[i-1].GetTimestamp().AsTime()) {
				rIdx = i
			}
		}
	}
	if now.Sub(ex[oldest].GetTimestamp().AsTime()) > exemplarTTL {
		rIdx = oldest
	} else {
		l := math.Log(e.GetValue())
		if nIdx > 0 {
			if d := math.Abs(l - math.Log(ex[nIdx-1].GetValue())); d < md {
				md, rIdx = d, nIdx-1
			}
		}
		if nIdx < len(ex) {
			if d := math.Abs(math.Log(ex[nIdx].GetValue()) - l); d < md {
				rIdx = nIdx
			}
		}
	}
	switch {
	case rIdx == nIdx:
		ex[nIdx] = e
	case rIdx < nIdx: // shift left over rIdx, e just before nIdx
		copy(ex[rIdx:], ex[rIdx+1:nIdx])
		ex[nIdx-1] = e
	default: // shift right over rIdx, e at nIdx
		copy(ex[nIdx+1:rIdx+1], ex[nIdx:rIdx])
		ex[nIdx] = e
	}
}

// newHistExemplar is an exemplar of v at now with labels l, sorted by name.
func newHistExemplar(v float64, now time.Time, l prometheus.Labels) (*dto.Exemplar, error) {
	pairs := make([]*dto.LabelPair, 0, len(l))
	runes := 0
	for name, value := range l {
		if !model.LegacyValidation.IsValidLabelName(name) || strings.HasPrefix(name, model.ReservedLabelPrefix) {
			return nil, fmt.Errorf("exemplar label name %q is invalid", name)
		}
		if !utf8.ValidString(value) {
			return nil, fmt.Errorf("exemplar label value %q is not valid UTF-8", value)
		}
		runes += utf8.RuneCountInString(name) + utf8.RuneCountInString(value)
		pairs = append(pairs, &dto.LabelPair{Name: &name, Value: &value})
	}
	if runes > prometheus.ExemplarMaxRunes {
		return nil, fmt.Errorf("exemplar labels have %d runes, exceeding the limit of %d", runes, prometheus.ExemplarMaxRunes)
	}
	slices.SortFunc(pairs, func(a, b *dto.LabelPair) int { return strings.Compare(a.GetName(), b.GetName()) })
	return &dto.Exemplar{Label: pairs, Value: &v, Timestamp: timestamppb.New(now)}, nil
}

// Write fills out with the histogram as client_golang writes its own.
func (s *histSeries) Write(out *dto.Metric) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.maybeReset(s.vec.now())
	count, sum := s.count, s.sum
	schema, zt, zero := s.schema, float64(histZeroThreshold), s.zero
	h := &dto.Histogram{
		SampleCount: &count, SampleSum: &sum, CreatedTimestamp: timestamppb.New(s.created),
		Schema: &schema, ZeroThreshold: &zt, ZeroCount: &zero,
	}
	bounds := s.vec.o.classic
	if len(bounds) > 0 {
		h.Bucket = make([]*dto.Bucket, len(bounds), len(bounds)+1)
		cum := make([]uint64, len(bounds))
		var c uint64
		for i := range bounds { // the bounds are never written: the buckets point into them
			c += s.classic[i]
			cum[i] = c
			h.Bucket[i] = &dto.Bucket{CumulativeCount: &cum[i], UpperBound: &bounds[i], Exemplar: s.classicEx[i]}
		}
	}
	if s.classicEx != nil {
		if e := s.classicEx[len(bounds)]; e != nil {
			inf := math.Inf(1)
			h.Bucket = append(h.Bucket, &dto.Bucket{CumulativeCount: &count, UpperBound: &inf, Exemplar: e})
		}
	}
	h.PositiveSpan, h.PositiveDelta = histSpans(s.pos)
	h.NegativeSpan, h.NegativeDelta = histSpans(s.neg)
	if len(s.exemplars) > 0 {
		h.Exemplars = slices.Clone(s.exemplars)
	}
	out.Label = s.labels
	out.Histogram = h
	return nil
}

// histSpans encodes sorted buckets as spans and deltas, as client_golang:
// a gap of one or two buckets is filled with empty ones, a wider gap
// starts a new span.
func histSpans(b []histBucket) ([]*dto.BucketSpan, []int64) {
	if len(b) == 0 {
		return nil, nil
	}
	var (
		spans  []*dto.BucketSpan
		deltas = make([]int64, 0, len(b))
		prev   int64
		next   int32
	)
	lengths := make([]uint32, 0, 4)
	offsets := make([]int32, 0, 4)
	for i, x := range b {
		gap := x.key - next
		if i == 0 || gap > 2 {
			offsets = append(offsets, gap)
			lengths = append(lengths, 0)
		} else {
			for range gap {
				lengths[len(lengths)-1]++
				deltas = append(deltas, -prev)
				prev = 0
			}
		}
		lengths[len(lengths)-1]++
		deltas = append(deltas, int64(x.n)-prev)
		prev = int64(x.n)
		next = x.key + 1
	}
	spans = make([]*dto.BucketSpan, len(offsets))
	for i := range offsets {
		spans[i] = &dto.BucketSpan{Offset: &offsets[i], Length: &lengths[i]}
	}
	return spans, deltas
}
