package statuspage

import (
	"cmp"
	"slices"
	"sync"
	"time"

	"github.com/llmprobe/llmprobe/internal/ledger"
	"github.com/llmprobe/llmprobe/internal/quantile"
	"github.com/llmprobe/llmprobe/internal/stats"
)

// Rolling keeps a target's recent baseline figures for the daemon's status
// page: TTFT, inter-chunk gap and end-to-end latency of ok requests, and
// the availability and latency SLI counts, over sliding windows up to its
// span (the last 5 and 60 minutes), computed from the daemon's own records
// rather than from Prometheus.
//
// Records are binned by the minute they finished in (so a window of 5
// minutes covers the current, partial minute and the 4 before it). Each
// one-minute slot holds counts and three log-bucketed histograms (the
// bounded histogram of Dist: buckets 1 % wide, a quantile read with at
// most HistogramRelativeError relative error, latencies clamped to
// [1µs, 1h]), so memory is bounded whatever the rate: at most span/slot
// slots (60), each histogram at most rollingBuckets buckets; in practice a
// slot holds as many buckets as distinct latencies it saw, a few KiB.
// Percentiles are nearest-rank, never means, and come with their counts.
//
// Baseline requests planned during a ladder (Record.During "ladder") are
// counted apart, as the SLO rules count them: the ladder's own load, not
// the service, decided their fate. Ladder and probe traffic are not
// counted. Safe for concurrent use.
type Rolling struct {
	mu    sync.Mutex
	slot  time.Duration
	slots []rollSlot // ring: slot k holds minute k % len
	// more holds slot k's inter-chunk and end-to-end histograms; nil for a
	// TTFT-only store (TTFTOnly), which so keeps 80 bytes a slot, not 160.
	more []rollMore
	last int // the slot recorded into last (-1: none), compacted when the next one starts
}

// RollingOption tunes NewRolling.
type RollingOption func(*Rolling)

// TTFTOnly keeps the counts and the TTFT histogram but not the
// inter-chunk and end-to-end ones (their windows are empty): for a
// store whose reader judges SLIs only (the status page's per-class
// stores), at a third of the memory.
func TTFTOnly() RollingOption { return func(r *Rolling) { r.more = nil } }

// Bounds of a Rolling histogram's values.
const (
	rollingMin = time.Microsecond
	rollingMax = time.Hour
)

// rollingBuckets is the most buckets one histogram of a Rolling slot can
// hold (values clamped to [rollingMin, rollingMax]).
var rollingBuckets = quantile.BucketOf(rollingMax) - quantile.BucketOf(rollingMin) + 1

// rollSlot is one minute of a store: 80 bytes, and its histograms'
// buckets. Every slot of a store is used once the store has run for its
// span, so their size is most of a target's fixed memory at 1,000 targets
// (docs/scale.md): the counts are 32-bit (a minute at limits.max_rate's
// 10,000 req/s is 600,000) and the inter-chunk and end-to-end histograms
// live apart (rollMore), absent from the per-class TTFT-only stores.
type rollSlot struct {
	index int64 // unix time / slot
	cnt   slotCounts
	ttft  rollHist
	used  bool
}

// rollMore is a slot's inter-chunk and end-to-end histograms.
type rollMore struct{ gap, e2e rollHist }

// slotCounts are a slot's RollingCounts in 32 bits.
type slotCounts struct {
	planned, good, latencyEvents, latencyBad, duringPlanned, duringGood int32
}

func (c slotCounts) counts() RollingCounts {
	return RollingCounts{Planned: int(c.planned), Good: int(c.good), LatencyEvents: int(c.latencyEvents), LatencyBad: int(c.latencyBad),
		DuringPlanned: int(c.duringPlanned), DuringGood: int(c.duringGood)}
}

// rollHist is one slot's histogram of a figure: its extremes and its
// buckets, a slice sorted by bucket index, 4 bytes a bucket seen (a map's
// overhead, about 20 bytes a bucket and 200 a map, was once most of a
// target's fixed memory). Its count is the sum of its buckets'.
type rollHist struct {
	min, max time.Duration
	buckets  []bucketCount
}

// bucketCount is one bucket of a rollHist in 32 bits: its index
// (quantile.BucketOf, 694–2905 over [rollingMin, rollingMax]) in the top
// bucketIndexBits and its count below. A bucket whose count would pass
// maxBucketCount continues in another entry of the same index, after it.
type bucketCount uint32

const (
	bucketCountBits = 20
	maxBucketCount  = 1<<bucketCountBits - 1
	bucketIndexBits = 32 - bucketCountBits
)

func (b bucketCount) index() int32  { return int32(b >> bucketCountBits) }
func (b bucketCount) count() uint32 { return uint32(b) & maxBucketCount }

func (h *rollHist) add(v time.Duration) {
	v = min(max(v, rollingMin), rollingMax)
	if len(h.buckets) == 0 || v < h.min {
		h.min = v
	}
	if len(h.buckets) == 0 || v > h.max {
		h.max = v
	}
	b := int32(quantile.BucketOf(v))
	i, _ := slices.BinarySearchFunc(h.buckets, b, func(x bucketCount, b int32) int { return cmp.Compare(x.index(), b) })
	for ; i < len(h.buckets) && h.buckets[i].index() == b; i++ {
		if h.buckets[i].count() < maxBucketCount {
			h.buckets[i]++
			return
		}
	}
	h.buckets = slices.Insert(h.buckets, i, bucketCount(uint32(b)<<bucketCountBits|1))
}

// count is the number of values added.
func (h *rollHist) count() int {
	n := 0
	for _, b := range h.buckets {
		n += int(b.count())
	}
	return n
}

// compact drops the spare capacity of the buckets (append's doubling)
// once the histogram's minute is over.
func (h *rollHist) compact() {
	if cap(h.buckets) > len(h.buckets) {
		h.buckets = slices.Clone(h.buckets)
	}
}

// collect adds h's buckets and extremes to w.
func (h *rollHist) collect(w *windowHist) {
	if len(h.buckets) == 0 {
		return
	}
	if w.n == 0 {
		w.lo, w.hi = h.min, h.max
		w.scratch = scratchPool.Get().(*windowScratch)
	}
	w.lo, w.hi = min(w.lo, h.min), max(w.hi, h.max)
	for _, b := range h.buckets {
		w.scratch.dense[b.index()-minBucketIndex] += b.count()
		w.n += int(b.count())
	}
}

// minBucketIndex is the index of a Rolling histogram's lowest bucket.
var minBucketIndex = int32(quantile.BucketOf(rollingMin))

// windowHist is a window's histogram of a figure: its slots' counts added
// by bucket into a dense array (every bucket a Rolling can hold), then
// read once by quantile.BucketPercentiles. The status page judges every
// target every second, so a window is read with neither a map nor a sort:
// a quantile.NewHist cost an allocation or more a bucket, and was 68 % of
// what a 1,000-target prober allocated (docs/scale.md).
type windowHist struct {
	n       int
	lo, hi  time.Duration
	scratch *windowScratch // from scratchPool once a bucket is counted
}

// windowScratch is a windowHist's reusable memory: 8.8 KB of counts and
// the non-empty buckets read from them.
type windowScratch struct {
	dense   []uint32
	buckets []quantile.Bucket
}

var scratchPool = sync.Pool{New: func() any { return &windowScratch{dense: make([]uint32, rollingBuckets)} }}

// percentiles reads the window's percentiles and gives its scratch back.
func (w *windowHist) percentiles() quantile.Percentiles {
	if w.n == 0 {
		return quantile.BucketPercentiles(0, 0, 0, 0, nil)
	}
	sc := w.scratch
	sc.buckets = sc.buckets[:0]
	for i, c := range sc.dense {
		if c != 0 {
			sc.buckets = append(sc.buckets, quantile.Bucket{Index: i + int(minBucketIndex), Count: int(c)})
			sc.dense[i] = 0
		}
	}
	p := quantile.BucketPercentiles(w.n, 0, w.lo, w.hi, sc.buckets)
	w.scratch = nil
	scratchPool.Put(sc)
	return p
}

// RollingCounts are a window's SLI counts over baseline traffic: planned
// arrivals (first attempts, unsent included), good ones (ok within the
// class's gates, stats.IsGood) and the latency SLI's events (ok requests
// with a TTFT, of a class with a TTFT gate) and bad events (TTFT above
// that gate). DuringPlanned and DuringGood count the baseline planned
// while a ladder ran against the target, apart.
type RollingCounts struct {
	Planned, Good             int
	LatencyEvents, LatencyBad int
	DuringPlanned, DuringGood int
}

func (c *RollingCounts) add(o RollingCounts) {
	c.Planned += o.Planned
	c.Good += o.Good
	c.LatencyEvents += o.LatencyEvents
	c.LatencyBad += o.LatencyBad
	c.DuringPlanned += o.DuringPlanned
	c.DuringGood += o.DuringGood
}

// RollingWindow is a window's figures: latencies of ok baseline requests
// planned outside ladders (read from the bounded histograms: Exact false)
// and the SLI counts.
type RollingWindow struct {
	Window     time.Duration        // the window asked for
	TTFT       quantile.Percentiles // first token − planned
	InterChunk quantile.Percentiles // every gap between consecutive content events
	E2E        quantile.Percentiles // end − planned
	RollingCounts
}

// NewRolling returns an empty store covering span (at least one slot) in
// slots of the given length (0: a minute).
func NewRolling(span, slot time.Duration, opts ...RollingOption) *Rolling {
	if slot <= 0 {
		slot = time.Minute
	}
	n := max(int((span+slot-1)/slot), 1)
	r := &Rolling{slot: slot, slots: make([]rollSlot, n), more: make([]rollMore, n), last: -1}
	for _, o := range opts {
		o(r)
	}
	return r
}

// Span is the longest window the store answers for.
func (r *Rolling) Span() time.Duration { return time.Duration(len(r.slots)) * r.slot }

// at returns the slot of now, and its other histograms (nil for a
// TTFT-only store).
func (r *Rolling) at(now time.Time) (*rollSlot, *rollMore) {
	idx := now.UnixNano() / int64(r.slot)
	k := int(idx % int64(len(r.slots)))
	s := &r.slots[k]
	var m *rollMore
	if r.more != nil {
		m = &r.more[k]
	}
	if !s.used || s.index != idx {
		*s = rollSlot{index: idx, used: true}
		if m != nil {
			*m = rollMore{}
		}
	}
	if r.last != k {
		if r.last >= 0 { // a minute is over: its histograms stop growing
			r.slots[r.last].ttft.compact()
			if r.more != nil {
				r.more[r.last].gap.compact()
				r.more[r.last].e2e.compact()
			}
		}
		r.last = k
	}
	return s, m
}

// Record counts one finished record at now: baseline traffic only, the
// first attempt of an arrival in planned, judged by the class's gates g.
func (r *Rolling) Record(now time.Time, rec *ledger.Record, g stats.Gates) {
	if rec.Traffic != ledger.TrafficBaseline {
		return
	}
	during := rec.During == ledger.DuringLadder
	good := stats.IsGood(rec, g)
	ok := rec.Outcome == ledger.OK
	ttft, hasTTFT := rec.TTFT()
	r.mu.Lock()
	defer r.mu.Unlock()
	s, m := r.at(now)
	c := &s.cnt
	if during {
		if !rec.IsRetry() {
			c.duringPlanned++
		}
		if good {
			c.duringGood++
		}
		return
	}
	if !rec.IsRetry() {
		c.planned++
	}
	if good {
		c.good++
	}
	if !ok {
		return
	}
	if hasTTFT {
		s.ttft.add(ttft)
		if g.TTFT > 0 {
			c.latencyEvents++
			if ttft > g.TTFT {
				c.latencyBad++
			}
		}
	}
	if m == nil {
		return
	}
	for _, gap := range rec.ChunkGaps {
		m.gap.add(gap)
	}
	if e2e, ok := rec.E2E(); ok {
		m.e2e.add(e2e)
	}
}

// Window returns the figures of the last d (whole slots, the current one
// included) ending at now; d is capped at Span.
func (r *Rolling) Window(now time.Time, d time.Duration) RollingWindow {
	var ttft, gap, e2e windowHist
	w := RollingWindow{Window: d}
	r.mu.Lock()
	r.each(now, d, func(i int) {
		s := &r.slots[i]
		w.add(s.cnt.counts())
		s.ttft.collect(&ttft)
		if r.more != nil {
			r.more[i].gap.collect(&gap)
			r.more[i].e2e.collect(&e2e)
		}
	})
	r.mu.Unlock()
	w.TTFT, w.InterChunk, w.E2E = ttft.percentiles(), gap.percentiles(), e2e.percentiles()
	return w
}

// Counts returns the SLI counts of the last d ending at now, as Window
// does, without reading its histograms.
func (r *Rolling) Counts(now time.Time, d time.Duration) RollingCounts {
	var c RollingCounts
	r.mu.Lock()
	defer r.mu.Unlock()
	r.each(now, d, func(i int) { c.add(r.slots[i].cnt.counts()) })
	return c
}

// each calls f with the index of every slot of the last d ending at now
// (whole slots, the current one included; d capped at Span). r.mu is held.
func (r *Rolling) each(now time.Time, d time.Duration, f func(i int)) {
	n := min(max(int((d+r.slot-1)/r.slot), 1), len(r.slots))
	newest := now.UnixNano() / int64(r.slot)
	oldest := newest - int64(n) + 1
	for i := range r.slots {
		if s := &r.slots[i]; s.used && s.index >= oldest && s.index <= newest {
			f(i)
		}
	}
}
