package stats

import (
	"fmt"
	"math"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/ledger"
	"github.com/llmprobe/llmprobe/internal/verdict"
)

// exactEvidence is the steady-state evidence from every first attempt kept
// one by one (the accumulator's former form): the reference the bounded
// counts are checked against.
func exactEvidence(recs []ledger.Record, start, w time.Duration) verdict.Steady {
	t0, t1 := start+w/3, start+w
	var s verdict.Steady
	s.SpanSeconds = (t1 - t0).Seconds()
	var early, mid, late []float64
	for _, r := range recs {
		if r.IsRetry() || !r.Sent() {
			continue
		}
		ended := func(t time.Duration) bool { return r.End > 0 && r.End <= t }
		if r.Dispatched <= t0 && !ended(t0) {
			s.InFlightStart++
		}
		if r.Dispatched <= t1 && !ended(t1) {
			s.InFlightEnd++
		}
		if r.Dispatched > t0 && r.Dispatched <= t1 {
			s.Arrivals++
		}
		if r.End > t0 && r.End <= t1 {
			s.Completions++
		}
		if ttft, ok := r.TTFT(); ok && r.Outcome == ledger.OK {
			switch {
			case r.Planned < start+w/3:
				early = append(early, ttft.Seconds())
			case r.Planned >= start+2*w/3:
				late = append(late, ttft.Seconds())
			default:
				mid = append(mid, ttft.Seconds())
			}
		}
	}
	s.Backlog = s.InFlightEnd - s.InFlightStart
	s.ArrivalRate, s.CompletionRate = float64(s.Arrivals)/s.SpanSeconds, float64(s.Completions)/s.SpanSeconds
	s.BacklogZ = float64(s.Backlog) / math.Sqrt(float64(s.InFlightStart+s.InFlightEnd+1))
	s.TTFTEarly, s.TTFTLate = len(early), len(late)
	med := func(v []float64) float64 {
		slices.Sort(v)
		if n := len(v); n%2 == 1 {
			return v[n/2]
		} else {
			return (v[n/2-1] + v[n/2]) / 2
		}
	}
	if len(early) > 0 && len(late) > 0 {
		s.TTFTEarlyP50, s.TTFTLateP50 = med(early), med(late)
		if len(mid) > 0 {
			s.TTFTMidP50 = med(mid)
		}
		s.TTFTSlope = (s.TTFTLateP50 - s.TTFTEarlyP50) * 1000 / (2 * w / 3).Seconds()
		above := 0
		for _, v := range late {
			if v > s.TTFTEarlyP50 {
				above++
			}
		}
		share := float64(above) / float64(len(late))
		s.TTFTZ = (share - 0.5) / math.Sqrt(0.25/float64(len(late))+0.25/float64(len(early)))
	}
	return verdict.JudgeSteady(s)
}

// TestSteadyCountsMatchExact: the bounded evidence of a full window equals
// the exact one in every count (the span's bounds are slice bounds), its
// TTFT medians are within the log buckets' error, and the verdict is the
// same, on steps below, near and above a FIFO queue's capacity.
func TestSteadyCountsMatchExact(t *testing.T) {
	const slots, service = 8, 610 * time.Millisecond
	capacity := float64(slots) / service.Seconds()
	for _, window := range []time.Duration{10 * time.Second, 20 * time.Second, 60 * time.Second} {
		for _, load := range []float64{0.5, 0.8, 0.95, 1.1, 1.4} {
			for seed := uint64(1); seed <= 3; seed++ {
				t.Run(fmt.Sprintf("%v/x%.2f/seed%d", window, load, seed), func(t *testing.T) {
					recs := queueRecords(seed, load*capacity, window, slots, service, 80*time.Millisecond, 0.3)
					got := *steadyOf(recs, load*capacity, window).Steady
					want := exactEvidence(recs, 0, window)
					if got.Arrivals != want.Arrivals || got.Completions != want.Completions ||
						got.InFlightStart != want.InFlightStart || got.InFlightEnd != want.InFlightEnd ||
						got.TTFTEarly != want.TTFTEarly || got.TTFTLate != want.TTFTLate {
						t.Errorf("counts differ:\n got %+v\nwant %+v", got, want)
					}
					for _, p := range [][2]float64{{got.TTFTEarlyP50, want.TTFTEarlyP50}, {got.TTFTMidP50, want.TTFTMidP50}, {got.TTFTLateP50, want.TTFTLateP50}} {
						if math.Abs(p[0]-p[1]) > 0.011*p[1] {
							t.Errorf("median %v, exact %v: beyond the buckets' error", p[0], p[1])
						}
					}
					if math.Abs(got.TTFTZ-want.TTFTZ) > 0.5 {
						t.Errorf("TTFT z %.2f, exact %.2f", got.TTFTZ, want.TTFTZ)
					}
					if got.Saturated != want.Saturated {
						t.Errorf("saturated %v (%s), exact %v (%s)", got.Saturated, got.Reason, want.Saturated, want.Reason)
					}
				})
			}
		}
	}
}

// TestSteadyMemoryBounded: a step's steady-state evidence does not grow
// with its requests: once the TTFT buckets its requests fill exist, 200,000
// more first attempts like them allocate nothing worth counting (kept one by one, 32
// bytes each, they took over 6 MB).
func TestSteadyMemoryBounded(t *testing.T) {
	const n, window = 200_000, time.Minute
	a := NewAccumulator(Config{Mode: ledger.ModeOpen, Window: window, Steady: true})
	recs := steadyBenchRecords(n, window)
	for i := range recs { // the buckets these requests fill
		a.Add(&recs[i])
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for i := range recs {
		a.steady.add(&recs[i])
	}
	runtime.ReadMemStats(&after)
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 8<<10 {
		t.Errorf("adding %d records allocated %d bytes, want under 8 KiB (bounded)", n, grew)
	}
}

// steadyBenchRecords is n ok first attempts spread over window, TTFTs
// from 50 ms to about 2 s.
func steadyBenchRecords(n int, window time.Duration) []ledger.Record {
	recs := make([]ledger.Record, n)
	for i := range recs {
		p := time.Duration(int64(i) * int64(window) / int64(n))
		ttft := 50*time.Millisecond + time.Duration(i%2000)*time.Millisecond
		recs[i] = ledger.Record{ID: uint64(i + 1), Mode: ledger.ModeOpen, Planned: p, Dispatched: p + time.Millisecond,
			FirstContent: p + ttft, End: p + ttft + 500*time.Millisecond, Outcome: ledger.OK, Reason: ledger.ReasonStop, Attempt: 1}
	}
	return recs
}

// BenchmarkSteadyAdd: the cost of one first attempt in the steady-state
// evidence (allocations per record: 0 once a TTFT bucket exists).
func BenchmarkSteadyAdd(b *testing.B) {
	recs := steadyBenchRecords(1<<16, time.Minute)
	sa := newSteadyAcc(0, time.Minute)
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		sa.add(&recs[i&(1<<16-1)])
	}
}

// TestSteadyShortenedWindow: a step cut short (SetWindow, an abort) is
// read at slice resolution: its counts are within the requests of one
// slice of the window (1/300) at each bound of the exact ones.
func TestSteadyShortenedWindow(t *testing.T) {
	const slots, service, window = 8, 610 * time.Millisecond, 20 * time.Second
	rate := 1.2 * float64(slots) / service.Seconds()
	for _, cut := range []time.Duration{window / 2, 7 * window / 9, 13 * time.Second} {
		t.Run(cut.String(), func(t *testing.T) {
			recs := queueRecords(3, rate, cut, slots, service, 80*time.Millisecond, 0.3)
			a := NewAccumulator(Config{Mode: ledger.ModeOpen, RequestedRate: rate, Window: window, Steady: true,
				Validity: verdict.ValidityConfig{MaxLagP99: time.Second}})
			for i := range recs {
				a.Add(&recs[i])
			}
			a.SetWindow(cut)
			got, want := *a.Summary().Steady, exactEvidence(recs, 0, cut)
			slack := int(2*rate*(window/steadyCountSlices).Seconds()) + 2
			for _, c := range [][3]any{{"arrivals", got.Arrivals, want.Arrivals}, {"completions", got.Completions, want.Completions},
				{"in flight at the span's start", got.InFlightStart, want.InFlightStart}, {"in flight at the end", got.InFlightEnd, want.InFlightEnd}} {
				if d := c[1].(int) - c[2].(int); d < -slack || d > slack {
					t.Errorf("%s %d, exact %d: beyond %d", c[0], c[1], c[2], slack)
				}
			}
		})
	}
}
