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
	last  *rollSlot  // the slot recorded into last, compacted when the next one starts
	// ttftOnly keeps no inter-chunk or end-to-end histogram (TTFTOnly).
	ttftOnly bool
}

// RollingOption tunes NewRolling.
type RollingOption func(*Rolling)

// TTFTOnly keeps the counts and the TTFT histogram but not the
// inter-chunk and end-to-end ones (their windows are empty): for a
// store whose reader judges SLIs only (the status page's per-class
// stores), at a third of the memory.
func TTFTOnly() RollingOption { return func(r *Rolling) { r.ttftOnly = true } }

// Bounds of a Rolling histogram's values.
const (
	rollingMin = time.Microsecond
	rollingMax = time.Hour
)

// rollingBuckets is the most buckets one histogram of a Rolling slot can
// hold (values clamped to [rollingMin, rollingMax]).
var rollingBuckets = quantile.BucketOf(rollingMax) - quantile.BucketOf(rollingMin) + 1

type rollSlot struct {
	index int64 // unix time / slot
	used  bool
	cnt   RollingCounts
	ttft  rollHist
	gap   rollHist
	e2e   rollHist
}

// rollHist is one slot's histogram of a figure. Its buckets are a slice
// sorted by bucket index, 8 bytes a bucket seen: a store holds 60 slots of
// three of them per target and class, so a map's overhead (its groups,
// slots and header, about 20 bytes a bucket and 200 a map) was most of a
// target's fixed memory (docs/scale.md).
type rollHist struct {
	n        int
	min, max time.Duration
	buckets  []bucketCount
}

// bucketCount is one bucket of a rollHist: its index (bucketOf) and count.
type bucketCount struct {
	index int32
	count uint32
}

func (h *rollHist) add(v time.Duration) {
	v = min(max(v, rollingMin), rollingMax)
	if h.n == 0 || v < h.min {
		h.min = v
	}
	if h.n == 0 || v > h.max {
		h.max = v
	}
	h.n++
	b := int32(quantile.BucketOf(v))
	i, found := slices.BinarySearchFunc(h.buckets, b, func(x bucketCount, b int32) int { return cmp.Compare(x.index, b) })
	if found {
		h.buckets[i].count++
		return
	}
	h.buckets = slices.Insert(h.buckets, i, bucketCount{index: b, count: 1})
}

// compact drops the spare capacity of the buckets (append's doubling)
// once the histogram's minute is over.
func (h *rollHist) compact() {
	if cap(h.buckets) > len(h.buckets) {
		h.buckets = slices.Clone(h.buckets)
	}
}

// merge folds h into d (a quantile.NewHist).
func (h *rollHist) merge(d *quantile.Dist) {
	d.AddBuckets(h.n, 0, h.min, h.max, func(yield func(int, int) bool) {
		for _, b := range h.buckets {
			if !yield(int(b.index), int(b.count)) {
				return
			}
		}
	})
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
	r := &Rolling{slot: slot, slots: make([]rollSlot, n)}
	for _, o := range opts {
		o(r)
	}
	return r
}

// Span is the longest window the store answers for.
func (r *Rolling) Span() time.Duration { return time.Duration(len(r.slots)) * r.slot }

func (r *Rolling) at(now time.Time) *rollSlot {
	idx := now.UnixNano() / int64(r.slot)
	s := &r.slots[int(idx%int64(len(r.slots)))]
	if !s.used || s.index != idx {
		*s = rollSlot{index: idx, used: true}
	}
	if r.last != s {
		if r.last != nil { // a minute is over: its histograms stop growing
			r.last.ttft.compact()
			r.last.gap.compact()
			r.last.e2e.compact()
		}
		r.last = s
	}
	return s
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
	s := r.at(now)
	c := &s.cnt
	if during {
		if !rec.IsRetry() {
			c.DuringPlanned++
		}
		if good {
			c.DuringGood++
		}
		return
	}
	if !rec.IsRetry() {
		c.Planned++
	}
	if good {
		c.Good++
	}
	if !ok {
		return
	}
	if hasTTFT {
		s.ttft.add(ttft)
		if g.TTFT > 0 {
			c.LatencyEvents++
			if ttft > g.TTFT {
				c.LatencyBad++
			}
		}
	}
	if r.ttftOnly {
		return
	}
	for _, gap := range rec.ChunkGaps {
		s.gap.add(gap)
	}
	if e2e, ok := rec.E2E(); ok {
		s.e2e.add(e2e)
	}
}

// Window returns the figures of the last d (whole slots, the current one
// included) ending at now; d is capped at Span.
func (r *Rolling) Window(now time.Time, d time.Duration) RollingWindow {
	n := min(max(int((d+r.slot-1)/r.slot), 1), len(r.slots))
	newest := now.UnixNano() / int64(r.slot)
	oldest := newest - int64(n) + 1
	ttft, gap, e2e := quantile.NewHist(), quantile.NewHist(), quantile.NewHist()
	w := RollingWindow{Window: d}
	r.mu.Lock()
	for i := range r.slots {
		s := &r.slots[i]
		if !s.used || s.index < oldest || s.index > newest {
			continue
		}
		w.add(s.cnt)
		s.ttft.merge(ttft)
		s.gap.merge(gap)
		s.e2e.merge(e2e)
	}
	r.mu.Unlock()
	w.TTFT, w.InterChunk, w.E2E = ttft.Percentiles(), gap.Percentiles(), e2e.Percentiles()
	return w
}
