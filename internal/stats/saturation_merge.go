package stats

import (
	"fmt"
	"math"
	"time"

	"github.com/llmprobe/llmprobe/internal/verdict"
)

// Saturated reports whether the summary's steady-state verdict (a ladder
// step's) named it saturated.
func (s Summary) Saturated() bool { return s.Steady != nil && s.Steady.Saturated }

// Qualifies reports whether one step counts toward capacity: its generator was
// valid, it planned arrivals, its good fraction (arrivals still pending
// counted as planned and not good) reached target, and it was not
// saturated (Summary.Steady: a backlog that grows fails the step whatever
// its good fraction over a short window).
func Qualifies(s Summary, target float64) bool {
	return s.Validity.Valid && s.Planned+s.Pending > 0 && s.GoodFraction >= target && !s.Saturated()
}

// ShardSteady is a shard's steady-state evidence in mergeable form: counts
// sum across shards; the TTFT trend is the worst shard's (the shards offer
// equal shares to one target, so each sees its queue: the strongest rising
// trend is kept, with its medians).
type ShardSteady struct {
	SpanNS        int64   `json:"span_ns"`
	Arrivals      int     `json:"arrivals"`
	Completions   int     `json:"completions"`
	InFlightStart int     `json:"in_flight_start"`
	InFlightEnd   int     `json:"in_flight_end"`
	TTFTEarly     int     `json:"ttft_early_n"`
	TTFTLate      int     `json:"ttft_late_n"`
	TTFTEarlyP50  float64 `json:"ttft_early_p50_s"`
	TTFTMidP50    float64 `json:"ttft_mid_p50_s"`
	TTFTLateP50   float64 `json:"ttft_late_p50_s"`
	TTFTSlope     float64 `json:"ttft_slope_ms_per_s"`
	TTFTZ         float64 `json:"ttft_z"`
}

func steadyPart(s verdict.Steady) *ShardSteady {
	return &ShardSteady{SpanNS: int64(s.SpanSeconds * 1e9), Arrivals: s.Arrivals, Completions: s.Completions,
		InFlightStart: s.InFlightStart, InFlightEnd: s.InFlightEnd, TTFTEarly: s.TTFTEarly, TTFTLate: s.TTFTLate,
		TTFTEarlyP50: s.TTFTEarlyP50, TTFTMidP50: s.TTFTMidP50, TTFTLateP50: s.TTFTLateP50, TTFTSlope: s.TTFTSlope, TTFTZ: s.TTFTZ}
}

// check reports what makes p unmergeable.
func (p ShardSteady) check(attempts int) error {
	for _, n := range []int{p.Arrivals, p.Completions, p.InFlightStart, p.InFlightEnd, p.TTFTEarly, p.TTFTLate} {
		if n < 0 || n > attempts {
			return fmt.Errorf("steady: count %d out of range", n)
		}
	}
	for _, x := range []float64{p.TTFTEarlyP50, p.TTFTMidP50, p.TTFTLateP50, p.TTFTSlope, p.TTFTZ} {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return fmt.Errorf("steady: a figure is not finite")
		}
	}
	if p.SpanNS < 0 || p.InFlightEnd-p.InFlightStart != p.Arrivals-p.Completions {
		return fmt.Errorf("steady: backlog %d−%d ≠ arrivals %d − completions %d", p.InFlightEnd, p.InFlightStart, p.Arrivals, p.Completions)
	}
	return nil
}

// mergeSteady sums shards' evidence (nil when no part carried any).
func mergeSteady(parts []*ShardSteady) *verdict.Steady {
	var s *verdict.Steady
	worst := -1
	for i, p := range parts {
		if p == nil {
			continue
		}
		if s == nil {
			s = &verdict.Steady{}
		}
		s.SpanSeconds = max(s.SpanSeconds, time.Duration(p.SpanNS).Seconds())
		s.Arrivals += p.Arrivals
		s.Completions += p.Completions
		s.InFlightStart += p.InFlightStart
		s.InFlightEnd += p.InFlightEnd
		if p.TTFTEarly > 0 && p.TTFTLate > 0 && (worst < 0 || p.TTFTZ > parts[worst].TTFTZ) {
			worst = i
		}
	}
	if s == nil {
		return nil
	}
	s.Backlog = s.InFlightEnd - s.InFlightStart
	if s.SpanSeconds > 0 {
		s.ArrivalRate = float64(s.Arrivals) / s.SpanSeconds
		s.CompletionRate = float64(s.Completions) / s.SpanSeconds
	}
	s.BacklogZ = float64(s.Backlog) / math.Sqrt(float64(s.InFlightStart+s.InFlightEnd+1))
	if worst >= 0 {
		w := parts[worst]
		s.TTFTEarly, s.TTFTLate, s.TTFTEarlyP50, s.TTFTMidP50, s.TTFTLateP50 = w.TTFTEarly, w.TTFTLate, w.TTFTEarlyP50, w.TTFTMidP50, w.TTFTLateP50
		s.TTFTSlope, s.TTFTZ = w.TTFTSlope, w.TTFTZ
	}
	j := verdict.JudgeSteady(*s)
	return &j
}

// steadyVerdict is the cohort's steady-state evidence and verdict, or nil
// when it keeps none. The caller holds a.mu.
func (a *Accumulator) steadyVerdict() *verdict.Steady {
	switch {
	case a.steady != nil && a.s.Window > 0:
		j := verdict.JudgeSteady(a.steady.evidence(a.s.Window, a.s.Pending))
		return &j
	case len(a.steadyParts) > 0 && len(a.steadyParts) == a.absorbed:
		// every part carried evidence (a part without, from a shard that
		// keeps none, would leave the sums short: no verdict then)
		return mergeSteady(a.steadyParts)
	}
	return nil
}
