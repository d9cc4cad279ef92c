package report

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/llmprobe/llmprobe/internal/ledger"
	"github.com/llmprobe/llmprobe/internal/servermetrics"
	"github.com/llmprobe/llmprobe/internal/stats"
)

// LadderText writes a ladder's step table, then its capacity and knee.
func LadderText(w io.Writer, res stats.LadderResult) error {
	var b strings.Builder
	title := "llmprobe ladder"
	if res.Target != "" {
		title += ": " + res.Target
	}
	fmt.Fprintf(&b, "%s (OPEN LOOP; latencies from the planned send time%s)\n", title, ladderTTFTNote(res))
	fmt.Fprintf(&b, "gates: %s; capacity needs good fraction ≥ %s on a valid step; knee: TTFT p95 > %.3g × the lowest valid step's\n\n",
		ladderGates(res), pct(res.GoodFractionTarget, 1), res.KneeFactor)
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "step\trate\tplanned\tdispatched\tunsent\tok\trejected\tother fail\tcensored\tTTFT p50\tTTFT p95\te2e p95\tgoodput\tgood%\tvalid\tsteady\tretries\t\n")
	for _, st := range res.Steps {
		s := st.Summary
		fmt.Fprintf(tw, "%d\t%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d\t\n",
			st.Index, num(st.Rate), s.Planned, s.Dispatched, s.Unsent, s.Completed, s.Rejected, otherFailures(s), s.Censored,
			pdur(s.TTFT, s.TTFT.P50), pdur(s.TTFT, s.TTFT.P95), pdur(s.E2E, s.E2E.P95),
			num(s.GoodputPerSecond), goodFraction(s), validCell(s.Validity), steadyCell(s), s.Retries)
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("report: ladder table: %w", err)
	}
	b.WriteString("\n")
	for _, st := range res.Steps {
		for _, n := range stepNotes(st) {
			fmt.Fprintf(&b, "%s\n", n)
		}
	}
	if res.Aborted && !anyStepAborted(res) {
		fmt.Fprintf(&b, "ladder aborted: %s\n", res.AbortReason)
	}
	if res.Stopped != "" {
		fmt.Fprintf(&b, "ladder stopped: %s\n", res.Stopped)
	}
	if err := writeServerText(&b, res); err != nil {
		return err
	}
	if err := writeLadderMatchedGaps(&b, res); err != nil {
		return err
	}
	fmt.Fprintf(&b, "capacity: %s\n", capacityText(res, res.Verdict, ""))
	fmt.Fprintf(&b, "knee: %s\n", kneeText(res, res.Verdict))
	if len(res.Classes) > 0 {
		b.WriteString("\nper class (each class's own records and gates; rates are the class's share of the step rate):\n")
		tw = tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
		fmt.Fprint(tw, "  class\tcapacity\tknee\n")
		for _, c := range res.Classes {
			fmt.Fprintf(tw, "  %s\t%s\t%s\n", c.Class, capacityShort(c.Verdict), kneeShort(c.Verdict))
		}
		if err := tw.Flush(); err != nil {
			return fmt.Errorf("report: ladder classes: %w", err)
		}
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("report: writing ladder table: %w", err)
	}
	return nil
}

// steadyCell is a step's steady-state column: "yes", "SATURATED", or "-"
// when it was not judged (too few arrivals, or no evidence kept).
func steadyCell(s stats.Summary) string {
	switch {
	case s.Steady == nil || !s.Steady.Judged:
		return "-"
	case s.Steady.Saturated:
		return "SATURATED"
	}
	return "yes"
}

// validCell is a step's validity column: "yes", or "NO" with its causes.
func validCell(v stats.Validity) string {
	if v.Valid {
		return "yes"
	}
	var cs []string
	for _, c := range v.Causes {
		cs = append(cs, string(c.Cause))
	}
	if len(cs) == 0 {
		return "NO"
	}
	return "NO (" + strings.Join(cs, ",") + ")"
}

// capacityText explains a capacity: the figure, which step, and whether it
// is a measurement or a lower bound (and why). unit follows the rates
// ("" for req/s of the whole ladder).
func capacityText(res stats.LadderResult, v stats.Verdict, unit string) string {
	if v.CapacityStep == 0 {
		return fmt.Sprintf("none: no valid step reached good fraction ≥ %s%s", pct(res.GoodFractionTarget, 1), invalidNote(res))
	}
	if v.CapacityBound == stats.BoundLower {
		return fmt.Sprintf("≥ %s req/s%s (step %d), a LOWER BOUND: the highest valid step with good fraction ≥ %s, and no valid step above it failed its gates%s, so the capacity is at least this",
			num(v.Capacity), unit, v.CapacityStep, pct(res.GoodFractionTarget, 1), invalidNote(res))
	}
	next := 0.0
	for _, st := range res.Steps {
		if st.Rate > v.Capacity && st.Summary.Validity.Valid && st.Summary.Planned+st.Summary.Pending > 0 && !stats.Qualifies(st.Summary, res.GoodFractionTarget) && (next == 0 || st.Rate < next) {
			next = st.Rate
		}
	}
	how := "failed"
	for _, st := range res.Steps {
		if st.Rate == next && st.Summary.Saturated() {
			how = "was saturated"
		}
	}
	return fmt.Sprintf("%s req/s%s (step %d): the highest valid step with good fraction ≥ %s and not saturated; the valid %s req/s step %s, so the limit lies between the two",
		num(v.Capacity), unit, v.CapacityStep, pct(res.GoodFractionTarget, 1), num(next), how)
}

// invalidNote names the invalid steps, which capacity and knee never use.
func invalidNote(res stats.LadderResult) string {
	bad := res.InvalidSteps()
	if len(bad) == 0 {
		return ""
	}
	parts := make([]string, len(bad))
	for i, n := range bad {
		parts[i] = fmt.Sprint(res.Steps[n-1].Index)
	}
	return " (invalid step " + strings.Join(parts, ", ") + " not used)"
}

func kneeText(res stats.LadderResult, v stats.Verdict) string {
	if v.KneeStep == 0 {
		return "none within the valid steps run" + invalidNote(res)
	}
	return fmt.Sprintf("%s req/s (step %d): the first valid step whose TTFT p95 exceeds %.3g × the lowest valid step's",
		num(v.Knee), v.KneeStep, res.KneeFactor)
}

// capacityShort and kneeShort are a class's figures in a table cell.
func capacityShort(v stats.Verdict) string {
	switch {
	case v.CapacityStep == 0:
		return "none"
	case v.CapacityBound == stats.BoundLower:
		return fmt.Sprintf("≥ %s req/s (step %d, lower bound)", num(v.Capacity), v.CapacityStep)
	}
	return fmt.Sprintf("%s req/s (step %d)", num(v.Capacity), v.CapacityStep)
}

func kneeShort(v stats.Verdict) string {
	if v.KneeStep == 0 {
		return "none"
	}
	return fmt.Sprintf("%s req/s (step %d)", num(v.Knee), v.KneeStep)
}

// otherFailures counts a step's attempts sent that ended neither ok,
// rejected nor censored (errors, timeouts, cancellations).
func otherFailures(s stats.Summary) int { return s.Dispatched - s.Completed - s.Rejected - s.Censored }

// goodFraction formats good / (planned + pending − injected cancellations),
// "n/a" when that denominator is 0.
func goodFraction(s stats.Summary) string {
	return pct(s.GoodFraction, s.Planned+s.Pending-s.InjectedCancels)
}

// stepNotes are a step's invalid causes (with what to do) and abort, one
// line each.
func stepNotes(st stats.LadderStep) []string {
	var out []string
	for _, c := range st.Summary.Validity.Causes {
		out = append(out, fmt.Sprintf("step %d invalid (%s), not used for capacity or knee: %s; what to do: %s", st.Index, c.Cause, c.Reason, c.Action))
	}
	if len(st.Summary.Validity.Causes) == 0 {
		for _, r := range st.Summary.Validity.Reasons {
			out = append(out, fmt.Sprintf("step %d invalid, not used for capacity or knee: %s", st.Index, r))
		}
	}
	if s := st.Summary; s.WindowAsked > 0 {
		out = append(out, fmt.Sprintf("step %d: its arrivals stopped after %s of its %s: its achieved rate, goodput, planned rate and generator verdict are over the %s they ran",
			st.Index, dur(s.Window), dur(s.WindowAsked), dur(s.Window)))
	}
	if s := st.Summary; s.Pending > 0 {
		out = append(out, fmt.Sprintf("step %d: %d request(s) still in flight when it was summarised (the settle wait ended): in no outcome column, counted as planned and not good in its good fraction (good %d / (planned %d + pending %d))",
			st.Index, s.Pending, s.Good, s.Planned, s.Pending))
	}
	if s := st.Summary.Steady; s != nil && s.Saturated && st.Summary.Validity.Valid {
		out = append(out, fmt.Sprintf("step %d %s: not steady, never the capacity whatever its good fraction", st.Index, s.Reason))
	}
	if st.Aborted {
		out = append(out, fmt.Sprintf("step %d aborted the ladder: %s", st.Index, st.AbortReason))
	}
	return out
}

// ladderTTFTBoundary is the TTFT boundary of a ladder's steps.
func ladderTTFTBoundary(res stats.LadderResult) ledger.TTFTBoundary {
	for _, st := range res.Steps {
		if st.Summary.TTFTBoundary != ledger.TTFTContent {
			return st.Summary.TTFTBoundary
		}
	}
	return ledger.TTFTContent
}

// ladderTTFTNote names the TTFT boundary in a ladder's title when it is not
// the default (first visible content).
func ladderTTFTNote(res stats.LadderResult) string {
	if ladderTTFTBoundary(res) == ledger.TTFTAnyToken {
		return "; TTFT to the first token of any kind, reasoning included"
	}
	return ""
}

func anyStepAborted(res stats.LadderResult) bool {
	for _, s := range res.Steps {
		if s.Aborted {
			return true
		}
	}
	return false
}

// pdur formats one percentile of p, or "-" when p is empty.
func pdur(p stats.Percentiles, d time.Duration) string {
	if p.Count == 0 {
		return "-"
	}
	return dur(d)
}

// LadderStepJSON is one ladder step in JSON (seconds).
type LadderStepJSON struct {
	Index   int     `json:"index"`
	Rate    float64 `json:"rate"`
	Planned int     `json:"planned"`
	// Pending counts arrivals still in flight when the step was summarised
	// (its settle wait ended): in no outcome, planned and not good.
	Pending     int     `json:"pending,omitempty"`
	PlannedRate float64 `json:"planned_rate"` // (planned + pending) / window: goodput's ceiling (Poisson arrivals vary around rate)
	// WindowS is the step's window in seconds when its arrivals stopped
	// early (an abort or interrupt): every rate is over it. Absent when
	// the step ran its whole duration.
	WindowS      float64        `json:"window_s,omitempty"`
	Retries      int            `json:"retries"`    // further attempts of those arrivals (not demand)
	Dispatched   int            `json:"dispatched"` // attempts sent, retries included
	Unsent       int            `json:"unsent"`
	Outcomes     map[string]int `json:"outcomes"`
	TTFT         Dist           `json:"ttft"`
	E2E          Dist           `json:"e2e"`
	DispatchLag  Dist           `json:"dispatch_lag"`
	Goodput      float64        `json:"goodput"`
	GoodFraction float64        `json:"good_fraction"`
	Valid        bool           `json:"valid"` // the generator kept its schedule (says nothing about the target)
	Invalid      []string       `json:"invalid_reasons"`
	Causes       []CauseJSON    `json:"invalid_causes"`
	Host         *HostJSON      `json:"host,omitempty"`
	Met          bool           `json:"met"` // valid, good fraction at or above the target, and not saturated
	// Saturated is the steady-state verdict: a saturated step is never
	// the capacity; Saturation says why and Steady holds the evidence.
	Saturated   bool            `json:"saturated"`
	Saturation  string          `json:"saturation,omitempty"`
	Steady      *stats.Steady   `json:"steady,omitempty"`
	Classes     []ClassStepJSON `json:"classes,omitempty"`
	Aborted     bool            `json:"aborted"`
	AbortReason string          `json:"abort_reason,omitempty"`
	// Server is the target's own view of the step (server_metrics) and
	// TTFTGap the client's TTFT p50/p95 minus the server's (GapNote).
	Server  *servermetrics.View    `json:"server,omitempty"`
	TTFTGap *servermetrics.TTFTGap `json:"ttft_gap,omitempty"`
	// MatchedGaps: the per-request client − server gaps (MatchedGapNote).
	MatchedGaps *MatchedGaps `json:"matched_gaps,omitempty"`
}

// ClassStepJSON is one class's share of a step.
type ClassStepJSON struct {
	Class        string  `json:"class"`
	Rate         float64 `json:"rate"` // the class's offered rate: step rate × its weight share
	Planned      int     `json:"planned"`
	Pending      int     `json:"pending,omitempty"` // still in flight when the step was summarised
	Good         int     `json:"good"`
	GoodFraction float64 `json:"good_fraction"`
	Goodput      float64 `json:"goodput"`
	TTFT         Dist    `json:"ttft"`
	Met          bool    `json:"met"`
}

// VerdictJSON is a capacity and knee; capacity_bound is "measured",
// "lower" (the capacity is at least this) or absent (no capacity).
type VerdictJSON struct {
	Capacity      float64 `json:"capacity"`      // req/s, 0 = none
	CapacityStep  int     `json:"capacity_step"` // 1-based, 0 = none
	CapacityBound string  `json:"capacity_bound,omitempty"`
	Knee          float64 `json:"knee"`
	KneeStep      int     `json:"knee_step"`
}

// ClassVerdictJSON is one class's verdict, in the class's offered rate.
type ClassVerdictJSON struct {
	Class string `json:"class"`
	VerdictJSON
}

// Ladder is a ladder result in JSON (one line of a ladder history).
type Ladder struct {
	Target  string           `json:"target,omitempty"`
	Started string           `json:"started,omitempty"` // RFC 3339
	Steps   []LadderStepJSON `json:"steps"`
	// Gates are the gates every record was judged by: the one class's, or
	// the gates all classes share; absent when classes have their own
	// (ClassGates says which applied where).
	Gates              *GatesJSON           `json:"gates,omitempty"`
	ClassGates         map[string]GatesJSON `json:"class_gates,omitempty"`   // per class; when set, they apply instead of gates
	TTFTBoundary       string               `json:"ttft_boundary,omitempty"` // "any_token" when TTFT includes reasoning; absent: first visible content
	GoodFractionTarget float64              `json:"good_fraction_target"`
	KneeFactor         float64              `json:"knee_factor"`
	VerdictJSON
	InvalidSteps []int `json:"invalid_steps"` // never used for capacity or knee
	// SaturatedSteps are the valid steps judged saturated: never the
	// capacity, at or past the knee.
	SaturatedSteps []int              `json:"saturated_steps"`
	Classes        []ClassVerdictJSON `json:"classes,omitempty"`
	Aborted        bool               `json:"aborted"`
	AbortReason    string             `json:"abort_reason,omitempty"`
	Stopped        string             `json:"stopped,omitempty"` // why the ladder stopped below its top step (stop_at), when it did
}

func verdictJSON(v stats.Verdict) VerdictJSON {
	return VerdictJSON{Capacity: v.Capacity, CapacityStep: v.CapacityStep, CapacityBound: string(v.CapacityBound), Knee: v.Knee, KneeStep: v.KneeStep}
}

// LadderOf converts a ladder result to its JSON shape.
func LadderOf(res stats.LadderResult) Ladder {
	l := Ladder{
		Target: res.Target, Steps: make([]LadderStepJSON, 0, len(res.Steps)),
		TTFTBoundary:       string(ladderTTFTBoundary(res)),
		GoodFractionTarget: res.GoodFractionTarget, KneeFactor: res.KneeFactor,
		VerdictJSON: verdictJSON(res.Verdict), InvalidSteps: []int{}, SaturatedSteps: []int{},
		Aborted: res.Aborted, AbortReason: res.AbortReason, Stopped: res.Stopped,
	}
	for _, n := range res.InvalidSteps() {
		l.InvalidSteps = append(l.InvalidSteps, res.Steps[n-1].Index)
	}
	for _, n := range res.SaturatedSteps() {
		l.SaturatedSteps = append(l.SaturatedSteps, res.Steps[n-1].Index)
	}
	for _, c := range res.Classes {
		l.Classes = append(l.Classes, ClassVerdictJSON{Class: c.Class, VerdictJSON: verdictJSON(c.Verdict)})
	}
	if g, ok := commonGates(res); ok {
		gj := gatesJSON(g)
		l.Gates = &gj
	}
	if len(res.ClassGates) > 0 {
		l.ClassGates = make(map[string]GatesJSON, len(res.ClassGates))
		for c, g := range res.ClassGates {
			l.ClassGates[c] = gatesJSON(g)
		}
	}
	if !res.Started.IsZero() {
		l.Started = res.Started.UTC().Format("2006-01-02T15:04:05.000Z07:00")
	}
	for _, st := range res.Steps {
		s := st.Summary
		o := make(map[string]int, len(ledger.Outcomes))
		for _, oc := range ledger.Outcomes {
			o[string(oc)] = s.Outcomes.ByOutcome[oc]
		}
		js := LadderStepJSON{
			Index: st.Index, Rate: st.Rate, Planned: s.Planned, Pending: s.Pending, PlannedRate: plannedRate(s), Retries: s.Retries, Dispatched: s.Dispatched, Unsent: s.Unsent,
			Outcomes: o, TTFT: DistOf(s.TTFT), E2E: DistOf(s.E2E), DispatchLag: DistOf(s.DispatchLag),
			Goodput: s.GoodputPerSecond, GoodFraction: s.GoodFraction, Valid: s.Validity.Valid,
			Invalid: append([]string{}, s.Validity.Reasons...), Causes: causesJSON(s.Validity), Host: hostJSON(s.Validity.Host),
			Met: stats.Qualifies(s, res.GoodFractionTarget), Aborted: st.Aborted, AbortReason: st.AbortReason,
			MatchedGaps: MatchedGapsOf(s),
		}
		if s.WindowAsked > 0 {
			js.WindowS = s.Window.Seconds()
		}
		if s.Steady != nil {
			js.Steady, js.Saturated, js.Saturation = s.Steady, s.Steady.Saturated, s.Steady.Reason
		}
		if st.Server != nil {
			js.Server, js.TTFTGap = st.Server, servermetrics.Gap(*st.Server, s.TTFT.Count, s.TTFT.P50, s.TTFT.P95)
		}
		if len(st.Classes) > 1 {
			for _, c := range st.Classes {
				cs := c.Summary
				js.Classes = append(js.Classes, ClassStepJSON{Class: c.Class, Rate: c.Rate, Planned: cs.Planned, Pending: cs.Pending, Good: cs.Good,
					GoodFraction: cs.GoodFraction, Goodput: cs.GoodputPerSecond, TTFT: DistOf(cs.TTFT), Met: stats.Qualifies(cs, res.GoodFractionTarget)})
			}
		}
		l.Steps = append(l.Steps, js)
	}
	return l
}

// plannedRate is arrivals planned in the window (pending ones included) /
// window: the most goodput a step could have (goodput counts good arrivals
// planned in the same window).
func plannedRate(s stats.Summary) float64 {
	if secs := s.Window.Seconds(); secs > 0 {
		return float64(s.Planned+s.Pending) / secs
	}
	return 0
}
