package statuspage

import (
	"math"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/ledger"
	"github.com/llmprobe/llmprobe/internal/quantile"
	"github.com/llmprobe/llmprobe/internal/stats"
)

// rollOK is an ok baseline record planned at 0 with the given TTFT and e2e
// and two chunk gaps.
func rollOK(ttft, e2e time.Duration) *ledger.Record {
	return &ledger.Record{Traffic: ledger.TrafficBaseline, Planned: time.Millisecond, Dispatched: 2 * time.Millisecond,
		FirstContent: time.Millisecond + ttft, End: time.Millisecond + e2e, ChunkGaps: []time.Duration{10 * time.Millisecond, 30 * time.Millisecond},
		Outcome: ledger.OK, Reason: ledger.ReasonStop}
}

func rollNear(got, want time.Duration) bool {
	return math.Abs(float64(got-want)) <= quantile.HistogramRelativeError*float64(want)+1
}

func TestRollingWindows(t *testing.T) {
	now := time.Date(2026, 11, 29, 19, 30, 30, 0, time.UTC)
	gates := stats.Gates{TTFT: 500 * time.Millisecond}
	r := NewRolling(time.Hour, time.Minute)
	// 100 ok requests in the current minute, TTFT 1..100 ms.
	for i := 1; i <= 100; i++ {
		r.Record(now, rollOK(time.Duration(i)*time.Millisecond, time.Second), gates)
	}
	// 10 minutes ago: 50 slow ok requests (TTFT 800 ms, over the gate) and 50 failures.
	old := now.Add(-10 * time.Minute)
	for range 50 {
		r.Record(old, rollOK(800*time.Millisecond, 2*time.Second), gates)
		r.Record(old, &ledger.Record{Traffic: ledger.TrafficBaseline, Planned: 1, Dispatched: 2, End: 3, Outcome: ledger.HTTPError, Reason: ledger.ReasonServerError}, gates)
	}
	// Not counted: ladder traffic; 61 minutes ago (its slot was reused).
	r.Record(now, &ledger.Record{Traffic: ledger.TrafficLadder, Outcome: ledger.OK}, gates)
	r.Record(now.Add(-61*time.Minute), rollOK(time.Hour, time.Hour), gates)
	// During a ladder: counted apart, never in the latencies.
	during := rollOK(3*time.Second, 4*time.Second)
	during.During = ledger.DuringLadder
	r.Record(now, during, gates)
	failedDuring := &ledger.Record{Traffic: ledger.TrafficBaseline, During: ledger.DuringLadder, Outcome: ledger.Rejected, Reason: ledger.ReasonStatus429}
	r.Record(now, failedDuring, gates)
	// A retry is an attempt, not a planned arrival.
	retry := rollOK(50*time.Millisecond, time.Second)
	retry.Attempt, retry.RetryOf = 2, 1
	r.Record(now, retry, gates)

	tests := []struct {
		name                   string
		d                      time.Duration
		n, planned, good       int
		p50, p99               time.Duration
		latEvents, latBad      int
		duringPlanned, durGood int
	}{
		{"5 minutes", 5 * time.Minute, 101, 100, 101, 50 * time.Millisecond, 99 * time.Millisecond, 101, 0, 2, 0},
		{"60 minutes", time.Hour, 151, 200, 101, 75 * time.Millisecond, 800 * time.Millisecond, 151, 50, 2, 0},
		{"capped at the span", 3 * time.Hour, 151, 200, 101, 75 * time.Millisecond, 800 * time.Millisecond, 151, 50, 2, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := r.Window(now, tt.d)
			if w.TTFT.Count != tt.n || w.E2E.Count != tt.n || w.InterChunk.Count != 2*tt.n {
				t.Errorf("counts: ttft %d e2e %d gaps %d, want %d %d %d", w.TTFT.Count, w.E2E.Count, w.InterChunk.Count, tt.n, tt.n, 2*tt.n)
			}
			if w.Planned != tt.planned || w.Good != tt.good {
				t.Errorf("planned %d good %d, want %d %d", w.Planned, w.Good, tt.planned, tt.good)
			}
			if !rollNear(w.TTFT.P50, tt.p50) || !rollNear(w.TTFT.P99, tt.p99) {
				t.Errorf("TTFT p50 %v p99 %v, want %v %v (±%.1f%%)", w.TTFT.P50, w.TTFT.P99, tt.p50, tt.p99, 100*quantile.HistogramRelativeError)
			}
			if w.TTFT.Exact {
				t.Error("percentiles from the histogram must not say exact")
			}
			if w.LatencyEvents != tt.latEvents || w.LatencyBad != tt.latBad {
				t.Errorf("latency SLI %d/%d, want %d/%d", w.LatencyBad, w.LatencyEvents, tt.latBad, tt.latEvents)
			}
			// during a ladder: one ok over the gate, one rejected: neither good
			if w.DuringPlanned != tt.duringPlanned || w.DuringGood != tt.durGood {
				t.Errorf("during: planned %d good %d, want %d %d", w.DuringPlanned, w.DuringGood, tt.duringPlanned, tt.durGood)
			}
			if c := r.Counts(now, tt.d); c != w.RollingCounts {
				t.Errorf("Counts %+v, Window's %+v", c, w.RollingCounts)
			}
		})
	}
}

// TestRollingDuringLadder: baseline traffic planned during a ladder is
// counted apart (planned and good), never in the SLI or the latencies.
func TestRollingDuringLadder(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	r := NewRolling(time.Hour, time.Minute)
	g := stats.Gates{TTFT: time.Second}
	for i := range 10 {
		rec := rollOK(100*time.Millisecond, time.Second)
		rec.During = ledger.DuringLadder
		if i%2 == 0 {
			rec.FirstContent = rec.Planned + 2*time.Second // over the gate: not good
		}
		r.Record(now, rec, g)
	}
	w := r.Window(now, 5*time.Minute)
	if w.DuringPlanned != 10 || w.DuringGood != 5 {
		t.Errorf("during: planned %d good %d, want 10 5", w.DuringPlanned, w.DuringGood)
	}
	if w.Planned != 0 || w.Good != 0 || w.LatencyEvents != 0 || w.TTFT.Count != 0 {
		t.Errorf("during-ladder traffic leaked into the SLI: %+v", w)
	}
}

// TestRollingMemoryBound: however many distinct latencies, a slot's
// histogram holds at most rollingBuckets buckets, and values outside
// [1µs, 1h] are clamped, not lost.
func TestRollingMemoryBound(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	r := NewRolling(time.Hour, time.Minute)
	for v := time.Nanosecond; v < 10*time.Hour; v = v*21/20 + 1 {
		r.Record(now, rollOK(v, v), stats.Gates{})
	}
	s, _ := r.at(now)
	if got := len(s.ttft.buckets); got > rollingBuckets || got < 100 {
		t.Errorf("%d buckets, want at most %d", got, rollingBuckets)
	}
	w := r.Window(now, time.Minute)
	if w.TTFT.Max != rollingMax || w.TTFT.Count != s.ttft.count() {
		t.Errorf("max %v count %d, want %v %d", w.TTFT.Max, w.TTFT.Count, rollingMax, s.ttft.count())
	}
	if top := quantile.BucketOf(rollingMax); top >= 1<<bucketIndexBits {
		t.Errorf("bucket index %d does not fit in %d bits", top, bucketIndexBits)
	}
	if len(r.slots) != 60 {
		t.Errorf("%d slots, want 60", len(r.slots))
	}
}

// TestRollingTTFTOnly: a TTFT-only store answers the same counts and TTFT
// as a full one, and empty inter-chunk and e2e windows; and a minute's
// histograms read the same after the next minute compacted them.
func TestRollingTTFTOnly(t *testing.T) {
	now := time.Date(2026, 11, 29, 19, 30, 30, 0, time.UTC)
	gates := stats.Gates{TTFT: 50 * time.Millisecond}
	full, slim := NewRolling(time.Hour, time.Minute), NewRolling(time.Hour, time.Minute, TTFTOnly())
	for i := 1; i <= 100; i++ {
		for _, r := range []*Rolling{full, slim} {
			r.Record(now.Add(-2*time.Minute), rollOK(time.Duration(i)*time.Millisecond, time.Second), gates)
		}
	}
	before := full.Window(now, 5*time.Minute)
	for _, r := range []*Rolling{full, slim} { // a new minute: the old one's histograms are compacted
		r.Record(now, rollOK(time.Millisecond, time.Second), gates)
	}
	fw, sw := full.Window(now, 5*time.Minute), slim.Window(now, 5*time.Minute)
	if fw.RollingCounts != sw.RollingCounts || fw.TTFT != sw.TTFT {
		t.Errorf("TTFT-only store: counts %+v TTFT %+v, want %+v %+v", sw.RollingCounts, sw.TTFT, fw.RollingCounts, fw.TTFT)
	}
	if sw.InterChunk.Count != 0 || sw.E2E.Count != 0 {
		t.Errorf("TTFT-only store: inter-chunk count %d, e2e count %d, want 0 and 0", sw.InterChunk.Count, sw.E2E.Count)
	}
	if fw.InterChunk.Count != 202 || fw.E2E.Count != 101 {
		t.Errorf("full store: inter-chunk count %d, e2e count %d, want 202 and 101", fw.InterChunk.Count, fw.E2E.Count)
	}
	if before.TTFT.P99 != fw.TTFT.P99 || before.InterChunk.P50 != fw.InterChunk.P50 {
		t.Errorf("after compaction: TTFT p99 %v, gap p50 %v; before %v, %v", fw.TTFT.P99, fw.InterChunk.P50, before.TTFT.P99, before.InterChunk.P50)
	}
}

// TestRollingBucketOverflow: a bucket counted past what one packed entry
// holds continues in another entry of the same index, and the window's
// count and quantiles lose nothing.
func TestRollingBucketOverflow(t *testing.T) {
	for _, tc := range []struct {
		name string
		n    int
	}{{"just under", maxBucketCount}, {"one over", maxBucketCount + 1}, {"two entries and more", 2*maxBucketCount + 5}} {
		t.Run(tc.name, func(t *testing.T) {
			var h rollHist
			for range tc.n {
				h.add(10 * time.Millisecond)
			}
			h.add(time.Millisecond)
			h.add(time.Second)
			if got := h.count(); got != tc.n+2 {
				t.Fatalf("count %d, want %d", got, tc.n+2)
			}
			want := 3 + (tc.n-1)/maxBucketCount
			if len(h.buckets) != want {
				t.Errorf("%d entries, want %d", len(h.buckets), want)
			}
			for i := 1; i < len(h.buckets); i++ {
				if h.buckets[i].index() < h.buckets[i-1].index() {
					t.Fatalf("entries out of order at %d", i)
				}
			}
			var w windowHist
			h.collect(&w)
			p := w.percentiles()
			if p.Count != tc.n+2 || p.P50 < 9900*time.Microsecond || p.P50 > 10100*time.Microsecond || p.Max != time.Second {
				t.Errorf("percentiles %+v, want count %d, p50 ≈ 10ms, max 1s", p, tc.n+2)
			}
		})
	}
}
