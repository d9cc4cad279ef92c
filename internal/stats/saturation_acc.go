package stats

import (
	"math"
	"slices"
	"time"

	"github.com/llmprobe/llmprobe/internal/ledger"
	"github.com/llmprobe/llmprobe/internal/quantile"
	"github.com/llmprobe/llmprobe/internal/verdict"
)

// The steady-state evidence in bounded memory. A step's first attempts are
// not kept one by one (that was 32 bytes per request, a step at 1,000
// req/s for a minute held 2 MB until its summary): each is counted into
// fixed slices of the step's window, whatever the number of requests.
//
//   - Dispatches and ends are counted into steadyCountSlices slices of the
//     window (slice i holds the times in (b_i, b_i+1], b_i = start +
//     ⌊i·W/steadyCountSlices⌋, plus one slot past the window). The span's
//     bounds, start + W/3 and start + W, are slice bounds, so the counts of
//     a full window (in flight at either bound, arrivals and completions
//     between them) are exact.
//   - TTFTs are counted into log buckets (quantile.BucketOf, as quantile.Dist's
//     histogram: a median within about 0.5 %) per steadyTTFTSlices slices
//     of planned time (slice j holds [b'_j, b'_j+1)); the thirds are slice
//     bounds.
//
// A window shortened after the fact (SetWindow: an aborted step) is read at
// slice resolution: a bound inside a slice counts the slices wholly before
// it (counts) or the slices whose middle is before it (TTFT thirds).
const (
	steadyCountSlices = 300 // 1/300 of the window; divisible by 3
	steadyTTFTSlices  = 30  // divisible by 3
)

// steadyAcc counts the cohort's first attempts for the steady-state
// evidence (Config.Steady): its memory does not grow with the requests
// (about 2.4 KB of counts, plus one TTFT bucket per distinct 1 % of TTFT
// per planned slice).
type steadyAcc struct {
	start, window time.Duration // the window the slices divide (Config.Window when built)
	dispatched    [steadyCountSlices + 1]int32
	ended         [steadyCountSlices + 1]int32
	ttft          [steadyTTFTSlices]map[int]int32 // planned slice → TTFT bucket → count
}

func newSteadyAcc(start, window time.Duration) *steadyAcc {
	return &steadyAcc{start: start, window: window}
}

// countSlice is the slice (b_i, b_i+1] holding t; steadyCountSlices past
// the window; 0 at or before its start.
func (sa *steadyAcc) countSlice(t time.Duration) int {
	d := int64(t - sa.start)
	if d <= 0 {
		return 0
	}
	if d > int64(sa.window) {
		return steadyCountSlices
	}
	// the smallest i with ⌊(i+1)·W/K⌋ ≥ d is ⌈d·K/W⌉ − 1
	return int(ceilDiv(d*steadyCountSlices, int64(sa.window))) - 1
}

// ttftSlice is the planned slice [b'_j, b'_j+1) holding t (clamped to the
// window).
func (sa *steadyAcc) ttftSlice(t time.Duration) int {
	d := int64(t - sa.start)
	if d < 0 {
		return 0
	}
	// the smallest j with d < ⌊(j+1)·W/K⌋, i.e. (d+1)·K ≤ (j+1)·W
	return min(int(ceilDiv((d+1)*steadyTTFTSlices, int64(sa.window)))-1, steadyTTFTSlices-1)
}

func ceilDiv(a, b int64) int64 { return (a + b - 1) / b }

func (sa *steadyAcc) add(r *ledger.Record) {
	if r.IsRetry() || !r.Sent() {
		return
	}
	sa.dispatched[sa.countSlice(r.Dispatched)]++
	if r.End > 0 {
		sa.ended[sa.countSlice(r.End)]++
	}
	var ttft time.Duration
	switch v, ok := r.TTFT(); {
	case r.Outcome == ledger.OK && ok:
		ttft = v
	case (r.Outcome == ledger.Timeout || r.Outcome == ledger.Censored) && !ok && r.End > r.Planned:
		ttft = r.End - r.Planned // waited this long without a first token
	}
	if ttft <= 0 {
		return
	}
	j := sa.ttftSlice(r.Planned)
	if sa.ttft[j] == nil {
		sa.ttft[j] = make(map[int]int32)
	}
	sa.ttft[j][quantile.BucketOf(ttft)]++
}

// upTo is how many of counts fall at or before start + d (d at most the
// window): the slices wholly before it.
func (sa *steadyAcc) upTo(counts *[steadyCountSlices + 1]int32, d time.Duration) int {
	n := 0
	for i := range steadyCountSlices {
		if time.Duration(int64(i+1)*int64(sa.window)/steadyCountSlices) > d {
			break
		}
		n += int(counts[i])
	}
	return n // the slot past the window is never before a bound
}

// evidence measures the cohort's window [start, start+w) (w ≤ the window
// the slices divide) with pending arrivals still in flight (no record).
func (sa *steadyAcc) evidence(w time.Duration, pending int) verdict.Steady {
	t0, t1 := w/3, w // offsets from start
	var s verdict.Steady
	s.SpanSeconds = (t1 - t0).Seconds()
	d0, d1 := sa.upTo(&sa.dispatched, t0), sa.upTo(&sa.dispatched, t1)
	e0, e1 := sa.upTo(&sa.ended, t0), sa.upTo(&sa.ended, t1)
	s.InFlightStart, s.InFlightEnd = d0-e0, d1-e1
	s.Arrivals, s.Completions = d1-d0, e1-e0
	s.Arrivals += pending
	s.InFlightEnd += pending
	s.Backlog = s.InFlightEnd - s.InFlightStart
	if s.SpanSeconds > 0 {
		s.ArrivalRate = float64(s.Arrivals) / s.SpanSeconds
		s.CompletionRate = float64(s.Completions) / s.SpanSeconds
	}
	s.BacklogZ = float64(s.Backlog) / math.Sqrt(float64(s.InFlightStart+s.InFlightEnd+1))

	var early, mid, late bucketCounts
	for j := range steadyTTFTSlices {
		if sa.ttft[j] == nil {
			continue
		}
		// the slice's middle, as an offset from start, decides its third
		m := time.Duration((int64(2*j+1) * int64(sa.window)) / (2 * steadyTTFTSlices))
		switch {
		case m < w/3:
			early.add(sa.ttft[j])
		case m >= 2*w/3:
			late.add(sa.ttft[j])
		default:
			mid.add(sa.ttft[j])
		}
	}
	s.TTFTEarly, s.TTFTLate = early.n, late.n
	if early.n > 0 && late.n > 0 {
		me, ml := early.median(), late.median()
		s.TTFTEarlyP50, s.TTFTLateP50 = me, ml
		if mid.n > 0 {
			s.TTFTMidP50 = mid.median()
		}
		if gap := (2 * w / 3).Seconds(); gap > 0 {
			s.TTFTSlope = (ml - me) * 1000 / gap
		}
		share := late.above(me) / float64(late.n)
		s.TTFTZ = (share - 0.5) / math.Sqrt(0.25/float64(late.n)+0.25/float64(early.n))
	}
	return s
}

// bucketCounts is a third's TTFTs in log buckets, sorted by bucket.
type bucketCounts struct {
	n       int
	buckets []int
	counts  map[int]int
}

func (b *bucketCounts) add(m map[int]int32) {
	if b.counts == nil {
		b.counts = make(map[int]int, len(m))
	}
	for k, c := range m {
		if _, ok := b.counts[k]; !ok {
			b.buckets = append(b.buckets, k)
		}
		b.counts[k] += int(c)
		b.n += int(c)
	}
	slices.Sort(b.buckets)
}

// bucketValue is a bucket's geometric midpoint, in seconds.
func bucketValue(k int) float64 {
	return quantile.BucketMid(k) / 1e9
}

// rank is the value (seconds) of the r-th smallest TTFT (1-based).
func (b *bucketCounts) rank(r int) float64 {
	seen := 0
	for _, k := range b.buckets {
		seen += b.counts[k]
		if seen >= r {
			return bucketValue(k)
		}
	}
	return 0
}

// median is the middle TTFT, the mean of the two middle ones for an even
// count (in seconds).
func (b *bucketCounts) median() float64 {
	if b.n%2 == 1 {
		return b.rank(b.n/2 + 1)
	}
	return (b.rank(b.n/2) + b.rank(b.n/2+1)) / 2
}

// above is how many TTFTs are above x (seconds): those of higher buckets.
// Those sharing x's bucket are not counted (their order against x is
// unknown; as ties they are not above): a rising trend must show beyond
// the buckets' 1 % to count.
func (b *bucketCounts) above(x float64) float64 {
	kx := quantile.BucketOf(time.Duration(x * 1e9))
	n := 0
	for _, k := range b.buckets {
		if k > kx {
			n += b.counts[k]
		}
	}
	return float64(n)
}
