package verdict

import (
	"fmt"
	"math"
	"strings"
)

// The saturation rule's thresholds (docs/ladder.md#saturation). A step is
// judged over the last two thirds of its window (the first third lets the
// in-flight level settle at rate × latency), its TTFT trend on its first
// and last thirds.
const (
	// SaturationZ is the one-sided z-score a piece of evidence must reach
	// to count on its own: about 1 in 700 for a healthy step.
	SaturationZ = 3.0
	// SaturationSupportZ is what the backlog must show (it grew by at least
	// one standard deviation) for a rising TTFT to name a step saturated.
	SaturationSupportZ = 1.0
	// SaturationMinDeficit is the smallest backlog growth, as a fraction of
	// the arrivals over the judged span, that counts (a practical size:
	// completions at least 5 % behind arrivals).
	SaturationMinDeficit = 0.05
	// SaturationMinRise is the smallest TTFT rise, late third's median over
	// the early third's, as a fraction of the early median.
	SaturationMinRise = 0.25
	// SaturationMidShare: a rising TTFT must rise through the step, its
	// middle third's median at least this share of the way from the early
	// median to the late one (a burst of Poisson arrivals late in a healthy
	// step raises only the last third).
	SaturationMidShare = 0.2
	// SaturationMinSample is the fewest arrivals over the span, and the
	// fewest TTFTs in each third, a step needs to be judged at all.
	SaturationMinSample = 10
)

// Steady is a ladder step's steady-state evidence and the saturation
// verdict on it (JudgeSteady). Counts are of first attempts of the step's
// own arrivals; the span is the window's last two thirds.
type Steady struct {
	SpanSeconds float64 `json:"span_s"`
	// Arrivals: first attempts dispatched during the span (requests still
	// pending at the summary counted); Completions: the step's first
	// attempts that ended during the span, whatever their outcome.
	Arrivals       int     `json:"arrivals"`
	Completions    int     `json:"completions"`
	ArrivalRate    float64 `json:"arrival_rate"`
	CompletionRate float64 `json:"completion_rate"`
	// InFlightStart and InFlightEnd are the step's requests in flight at
	// the span's start and at the window's end; Backlog = InFlightEnd −
	// InFlightStart = Arrivals − Completions.
	InFlightStart int `json:"in_flight_start"`
	InFlightEnd   int `json:"in_flight_end"`
	Backlog       int `json:"backlog"`
	// BacklogZ is Backlog over its noise, √(InFlightStart + InFlightEnd +
	// 1): the in-flight level of a steady queue fluctuates about as a
	// Poisson count.
	BacklogZ float64 `json:"backlog_z"`
	// The TTFT trend (from the planned send, ok requests, and timed-out or
	// censored ones at their age, a lower bound): medians of the
	// arrivals planned in the first and in the last third, their counts,
	// the slope between them (ms per second of planned time) and TTFTZ,
	// Mood's median test: how far the share of late TTFTs above the early
	// median is from one half, in standard deviations.
	TTFTEarly    int     `json:"ttft_early_n"`
	TTFTLate     int     `json:"ttft_late_n"`
	TTFTEarlyP50 float64 `json:"ttft_early_p50_s"`
	TTFTMidP50   float64 `json:"ttft_mid_p50_s"`
	TTFTLateP50  float64 `json:"ttft_late_p50_s"`
	TTFTSlope    float64 `json:"ttft_slope_ms_per_s"`
	TTFTZ        float64 `json:"ttft_z"`
	// ServerWaitingStart and ServerWaitingEnd are the server's waiting
	// queue (server metrics) at the step's start and at its window's end;
	// absent when not read.
	ServerWaitingStart *float64 `json:"server_waiting_start,omitempty"`
	ServerWaitingEnd   *float64 `json:"server_waiting_end,omitempty"`
	ServerWaitingZ     float64  `json:"server_waiting_z,omitempty"`

	Judged    bool   `json:"judged"`    // enough arrivals to judge
	Saturated bool   `json:"saturated"` // never the capacity
	Reason    string `json:"reason,omitempty"`
}

// WithServer adds the server's waiting queue at the step's start and at
// its window's end (server metrics) to the evidence and judges it again.
func (s Steady) WithServer(start, end float64) Steady {
	s.ServerWaitingStart, s.ServerWaitingEnd = &start, &end
	s.ServerWaitingZ = (end - start) / math.Sqrt(start+end+1)
	return JudgeSteady(s)
}

// JudgeSteady applies the saturation rule to the evidence (its verdict
// fields are recomputed). The backlog's evidence is the stronger of the
// client's (Backlog, BacklogZ) and the server's waiting queue. A step is
// saturated when
//
//   - its backlog grew significantly (z ≥ SaturationZ) and by at least
//     SaturationMinDeficit of the span's arrivals, or
//   - its TTFT rose significantly (Mood's z ≥ SaturationZ) by at least
//     SaturationMinRise of the early median, through the step (the middle
//     third's median SaturationMidShare of the way up), while its backlog
//     grew by at least SaturationSupportZ standard deviations.
//
// A step with fewer than SaturationMinSample arrivals over the span is not
// judged (never saturated); the TTFT trend needs as many TTFTs in each
// third.
func JudgeSteady(s Steady) Steady {
	s.Judged, s.Saturated, s.Reason = s.Arrivals >= SaturationMinSample, false, ""
	if !s.Judged {
		return s
	}
	z, growth := s.BacklogZ, float64(s.Backlog)
	if s.ServerWaitingEnd != nil && s.ServerWaitingZ > z {
		z, growth = s.ServerWaitingZ, *s.ServerWaitingEnd-*s.ServerWaitingStart
	}
	deficit := z >= SaturationZ && growth >= SaturationMinDeficit*float64(s.Arrivals)
	rising := s.TTFTEarly >= SaturationMinSample && s.TTFTLate >= SaturationMinSample &&
		s.TTFTZ >= SaturationZ && s.TTFTLateP50-s.TTFTEarlyP50 >= SaturationMinRise*s.TTFTEarlyP50 &&
		s.TTFTMidP50-s.TTFTEarlyP50 >= SaturationMidShare*(s.TTFTLateP50-s.TTFTEarlyP50) && z >= SaturationSupportZ
	if !deficit && !rising {
		return s
	}
	s.Saturated = true
	rel := "behind"
	if s.CompletionRate >= s.ArrivalRate {
		rel = "keeping up with" // a rising TTFT named it, or the server's queue
	}
	parts := []string{fmt.Sprintf("completions %.1f req/s %s arrivals %.1f req/s", s.CompletionRate, rel, s.ArrivalRate),
		fmt.Sprintf("backlog %+d", s.Backlog)}
	if s.ServerWaitingEnd != nil {
		parts = append(parts, fmt.Sprintf("server queue %g→%g", *s.ServerWaitingStart, *s.ServerWaitingEnd))
	}
	if s.TTFTEarly > 0 && s.TTFTLate > 0 {
		verb := "rising"
		if s.TTFTSlope < 0 {
			verb = "falling"
		}
		parts = append(parts, fmt.Sprintf("TTFT %s %.0f ms/s", verb, math.Abs(s.TTFTSlope)))
	}
	s.Reason = "saturated: " + strings.Join(parts, ", ")
	return s
}
