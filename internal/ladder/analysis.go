package ladder

import (
	"fmt"
	"time"

	"github.com/llmprobe/llmprobe/internal/ledger"
	"github.com/llmprobe/llmprobe/internal/servermetrics"
	"github.com/llmprobe/llmprobe/internal/stats"
)

// AbortRules stop a ladder early. Each is checked after every step and,
// all but OnGeneratorInvalid, about every ProgressEvery inside it (see
// Config.MidStepMin); a zero field turns its rule off. Inside a step the
// TTFT rule also counts requests still waiting for their first token past
// the limit, so an overloaded step stops within about the limit plus a
// check interval rather than after its window.
type AbortRules struct {
	// ErrorFraction: abort when failed requests (http_error, timeout,
	// transport_error, stream_error) exceed this fraction of those sent.
	ErrorFraction float64
	// RejectionFraction: abort when rejected (429/503) requests exceed this
	// fraction of those sent.
	RejectionFraction float64
	// TTFTGateMultiple: abort when the step's TTFT p95 exceeds this multiple
	// of the TTFT gate (the ladder's TTFT gate; see Config.TTFTGate).
	TTFTGateMultiple float64
	// OnUnsent: abort when unsent arrivals (client cap, budget, rate cap)
	// exceed UnsentFraction of those planned (0: any unsent arrival).
	OnUnsent       bool
	UnsentFraction float64
	// OnGeneratorInvalid: abort when the step's generator-validity verdict
	// is invalid (the load generator did not do what was asked).
	OnGeneratorInvalid bool
}

// Check applies the rules to one step's summary; ttftGate is the gate the
// TTFT multiple refers to (0: that rule is off). It returns why the ladder
// must stop, or "" to go on.
func (a AbortRules) Check(s stats.Summary, ttftGate time.Duration) string {
	failed := 0
	for _, o := range []ledger.Outcome{ledger.HTTPError, ledger.Timeout, ledger.TransportError, ledger.StreamError} {
		failed += s.Outcomes.ByOutcome[o]
	}
	if a.ErrorFraction > 0 && s.Dispatched > 0 {
		if f := float64(failed) / float64(s.Dispatched); f > a.ErrorFraction {
			return fmt.Sprintf("error fraction %.3f above %.3f", f, a.ErrorFraction)
		}
	}
	if a.RejectionFraction > 0 && s.Dispatched > 0 {
		if f := float64(s.Rejected) / float64(s.Dispatched); f > a.RejectionFraction {
			return fmt.Sprintf("rejection fraction %.3f above %.3f", f, a.RejectionFraction)
		}
	}
	if a.TTFTGateMultiple > 0 && ttftGate > 0 && s.TTFT.Count > 0 {
		if lim := time.Duration(a.TTFTGateMultiple * float64(ttftGate)); s.TTFT.P95 > lim {
			return fmt.Sprintf("TTFT p95 %s above %g × gate %s", stats.FormatDuration(s.TTFT.P95), a.TTFTGateMultiple, stats.FormatDuration(ttftGate))
		}
	}
	if a.OnUnsent && s.Planned > 0 && s.Unsent > 0 {
		if f := float64(s.Unsent) / float64(s.Planned); f > a.UnsentFraction {
			return fmt.Sprintf(ReasonUnsent+" %.3f above %.3f (%d of %d planned)", f, a.UnsentFraction, s.Unsent, s.Planned)
		}
	}
	if a.OnGeneratorInvalid && !s.Validity.Valid {
		why := ReasonGeneratorInvalid
		if len(s.Validity.Reasons) > 0 {
			why += ": " + s.Validity.Reasons[0]
		}
		return why
	}
	return ""
}

// StepRow is one step in a ladder's result and history line. Latencies are
// in seconds, from the planned time, over ok requests only; counts are over
// the arrivals planned during the step.
type StepRow struct {
	Step         int            `json:"step"`          // 1-based
	Rate         float64        `json:"rate"`          // offered req/s
	AchievedRate float64        `json:"achieved_rate"` // dispatched / step duration
	Planned      int            `json:"planned"`
	Dispatched   int            `json:"dispatched"`
	Unsent       int            `json:"unsent"`
	OK           int            `json:"ok"`
	Good         int            `json:"good"`
	Pending      int            `json:"pending,omitempty"` // still in flight when the step was summarised: planned, in no count above, not good
	Outcomes     map[string]int `json:"outcomes"`
	GoodFraction float64        `json:"good_fraction"` // good / (planned + pending)
	Goodput      float64        `json:"goodput"`       // good req/s
	TTFTCount    int            `json:"ttft_count"`
	TTFTP50      float64        `json:"ttft_p50_s"`
	TTFTP95      float64        `json:"ttft_p95_s"`
	TTFTP99      float64        `json:"ttft_p99_s"`
	E2EP50       float64        `json:"e2e_p50_s"`
	E2EP95       float64        `json:"e2e_p95_s"`
	DispatchLag  float64        `json:"dispatch_lag_p99_s"`
	Valid        bool           `json:"valid"` // the generator kept its schedule (says nothing about the target)
	Invalid      []string       `json:"invalid_reasons,omitempty"`
	// InvalidCauses name why the generator was invalid (host_starved,
	// dispatch_lag, in_flight_cap, rate_not_reached).
	// The same shape as the JSON report's invalid_causes.
	InvalidCauses []stats.InvalidCause `json:"invalid_causes,omitempty"`
	Met           bool                 `json:"met"` // valid, good fraction at or above the target, and not saturated
	// Saturated is the steady-state verdict (docs/ladder.md#saturation): a
	// saturated step is never the capacity. Saturation says why; Steady is
	// its evidence (absent for a step that kept none).
	Saturated   bool          `json:"saturated,omitempty"`
	Saturation  string        `json:"saturation,omitempty"`
	Steady      *stats.Steady `json:"steady,omitempty"`
	AbortReason string        `json:"abort_reason,omitempty"`
	Classes     []ClassRow    `json:"classes,omitempty"` // per class (ladders with more than one class)
	// Server is the target's own view of the step (server_metrics), with
	// its one-line explanation; absent when none is configured.
	Server *servermetrics.View `json:"server,omitempty"`
	// TTFTGap is the client's TTFT p50/p95 minus the server's: the network
	// and queueing outside the server's clock (a difference of
	// percentiles, not a percentile of differences); absent without both.
	TTFTGap *servermetrics.TTFTGap `json:"ttft_gap,omitempty"`
}

// ClassRow is one class's share of a step: its offered rate (step rate ×
// its weight share) and its own figures, judged by its own gates.
type ClassRow struct {
	Class        string  `json:"class"`
	Rate         float64 `json:"rate"`
	Planned      int     `json:"planned"`
	OK           int     `json:"ok"`
	Good         int     `json:"good"`
	Pending      int     `json:"pending,omitempty"` // still in flight when the step was summarised
	GoodFraction float64 `json:"good_fraction"`
	Goodput      float64 `json:"goodput"`
	TTFTCount    int     `json:"ttft_count"`
	TTFTP95      float64 `json:"ttft_p95_s"`
	Met          bool    `json:"met"`
}

// CauseNames lists the names of the step's invalid causes (host_starved,
// dispatch_lag, …), for a log line or a message.
func (r StepRow) CauseNames() []string {
	var out []string
	for _, c := range r.InvalidCauses {
		out = append(out, string(c.Cause))
	}
	return out
}

// Row condenses a step summary (and its classes, when it has several).
func Row(st stats.LadderStep, goodTarget float64) StepRow {
	s := st.Summary
	r := StepRow{
		Step: st.Index, Rate: st.Rate, AchievedRate: s.AchievedRate,
		Planned: s.Planned, Dispatched: s.Dispatched, Unsent: s.Unsent, OK: s.Completed, Good: s.Good, Pending: s.Pending,
		Outcomes:     map[string]int{},
		GoodFraction: s.GoodFraction, Goodput: s.GoodputPerSecond,
		TTFTCount: s.TTFT.Count, TTFTP50: s.TTFT.P50.Seconds(), TTFTP95: s.TTFT.P95.Seconds(), TTFTP99: s.TTFT.P99.Seconds(),
		E2EP50: s.E2E.P50.Seconds(), E2EP95: s.E2E.P95.Seconds(), DispatchLag: s.DispatchLag.P99.Seconds(),
		Valid: s.Validity.Valid, Invalid: s.Validity.Reasons,
		// Met is the capacity rule for one step, so the table and the
		// capacity cannot disagree.
		Met:         stats.Qualifies(s, goodTarget),
		AbortReason: st.AbortReason,
	}
	r.InvalidCauses = append(r.InvalidCauses, s.Validity.Causes...)
	if s.Steady != nil {
		r.Steady, r.Saturated, r.Saturation = s.Steady, s.Steady.Saturated, s.Steady.Reason
	}
	if st.Server != nil {
		r.Server = st.Server
		r.TTFTGap = servermetrics.Gap(*st.Server, s.TTFT.Count, s.TTFT.P50, s.TTFT.P95)
	}
	for o, n := range s.Outcomes.ByOutcome {
		if n > 0 {
			r.Outcomes[string(o)] = n
		}
	}
	if len(st.Classes) > 1 {
		for _, c := range st.Classes {
			cs := c.Summary
			r.Classes = append(r.Classes, ClassRow{
				Class: c.Class, Rate: c.Rate, Planned: cs.Planned, OK: cs.Completed, Good: cs.Good, Pending: cs.Pending,
				GoodFraction: cs.GoodFraction, Goodput: cs.GoodputPerSecond, TTFTCount: cs.TTFT.Count, TTFTP95: cs.TTFT.P95.Seconds(),
				Met: stats.Qualifies(cs, goodTarget),
			})
		}
	}
	return r
}

// Result is one finished (or aborted) ladder: what the history file keeps.
type Result struct {
	Kind               string    `json:"kind"` // always "ladder"
	Target             string    `json:"target"`
	Trigger            string    `json:"trigger"` // schedule | identity_change | manual
	Started            time.Time `json:"started"`
	Finished           time.Time `json:"finished"`
	StepDuration       float64   `json:"step_duration_s"`
	GoodFractionTarget float64   `json:"good_fraction_target"`
	KneeFactor         float64   `json:"knee_factor"`
	Steps              []StepRow `json:"steps"`
	Capacity           float64   `json:"capacity"`      // req/s; 0 when no step qualified
	CapacityStep       int       `json:"capacity_step"` // 1-based; 0 when none
	// CapacityBound is "measured" (a valid step above failed its gates) or
	// "lower" (none did: the capacity is at least Capacity); absent when
	// no step qualified.
	CapacityBound stats.Bound `json:"capacity_bound,omitempty"`
	Knee          float64     `json:"knee"` // req/s; 0 when no knee
	KneeStep      int         `json:"knee_step"`
	// SaturatedSteps are the valid steps judged saturated (never the
	// capacity, at or past the knee); absent when none.
	SaturatedSteps []int `json:"saturated_steps,omitempty"`
	// Classes are the per-class verdicts (each class judged on its own
	// records and gates; rates in the class's offered rate).
	Classes     []ClassResult `json:"classes,omitempty"`
	Aborted     bool          `json:"aborted"`
	AbortReason string        `json:"abort_reason,omitempty"`
	// StopAt is where the ladder was told to stop climbing (knee, capacity,
	// top); Stopped says why it stopped below its top step when it did so
	// by that rule (not an abort).
	StopAt  string `json:"stop_at,omitempty"`
	Stopped string `json:"stopped,omitempty"`

	// Summaries are the full per-step summaries (for reports); not in the history.
	Summaries []stats.LadderStep `json:"-"`
	// ClassGates are the gates each class was judged by.
	ClassGates map[string]stats.Gates `json:"class_gates,omitempty"`
}

// ClassResult is one class's capacity and knee, in the class's offered
// rate (step rate × its weight share).
type ClassResult struct {
	Class         string      `json:"class"`
	Capacity      float64     `json:"capacity"`
	CapacityStep  int         `json:"capacity_step"`
	CapacityBound stats.Bound `json:"capacity_bound,omitempty"`
	Knee          float64     `json:"knee"`
	KneeStep      int         `json:"knee_step"`
}

// Analyze judges the steps (capacity and knee over valid steps only, for
// every class together and for each class in classes) and condenses them
// into rows. The step positions of the verdicts are the steps' Index.
func Analyze(steps []stats.LadderStep, classes []string, goodTarget, kneeFactor float64) (rows []StepRow, v stats.Verdict, perClass []ClassResult) {
	rows = make([]StepRow, len(steps))
	for i, s := range steps {
		rows[i] = Row(s, goodTarget)
	}
	index := func(pos int) int {
		if pos == 0 {
			return 0
		}
		return steps[pos-1].Index
	}
	v = stats.Judge(steps, goodTarget, kneeFactor)
	v.CapacityStep, v.KneeStep = index(v.CapacityStep), index(v.KneeStep)
	for _, c := range classes {
		cv := stats.JudgeClass(steps, c, goodTarget, kneeFactor)
		perClass = append(perClass, ClassResult{Class: c, Capacity: cv.Capacity, CapacityStep: index(cv.CapacityStep),
			CapacityBound: cv.CapacityBound, Knee: cv.Knee, KneeStep: index(cv.KneeStep)})
	}
	return rows, v, perClass
}

// Stats returns the result in stats' terms (for internal/report).
func (r Result) Stats() stats.LadderResult {
	lr := stats.LadderResult{
		Target: r.Target, Started: r.Started, Steps: r.Summaries, ClassGates: r.ClassGates,
		GoodFractionTarget: r.GoodFractionTarget, KneeFactor: r.KneeFactor,
		Verdict: stats.Verdict{Capacity: r.Capacity, CapacityStep: r.CapacityStep, CapacityBound: r.CapacityBound,
			Knee: r.Knee, KneeStep: r.KneeStep},
		Aborted: r.Aborted, AbortReason: r.AbortReason, Stopped: r.Stopped,
	}
	for _, c := range r.Classes {
		lr.Classes = append(lr.Classes, stats.ClassVerdict{Class: c.Class, Verdict: stats.Verdict{
			Capacity: c.Capacity, CapacityStep: c.CapacityStep, CapacityBound: c.CapacityBound, Knee: c.Knee, KneeStep: c.KneeStep}})
	}
	return lr
}
