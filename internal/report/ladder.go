package report

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/llmprobe/llmprobe/internal/ladderresult"
	"github.com/llmprobe/llmprobe/internal/ledger"
	"github.com/llmprobe/llmprobe/internal/quantile"
	"github.com/llmprobe/llmprobe/internal/stats"
	"github.com/llmprobe/llmprobe/internal/verdict"
)

// LadderText writes a ladder's step table, then its capacity and knee.
func LadderText(w io.Writer, res ladderresult.LadderResult) error {
	var b strings.Builder
	title := "llmprobe ladder"
	if res.Target != "" {
		title += ": " + res.Target
	}
	fmt.Fprintf(&b, "%s (OPEN LOOP; latencies from the planned send time%s)\n", title, ladderTTFTNote(res))
	b.WriteString(ladderIdentityLine(res))
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
	b.WriteString(ladderPartialLine(res))
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
func validCell(v verdict.Validity) string {
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
func capacityText(res ladderresult.LadderResult, v ladderresult.Verdict, unit string) string {
	if v.CapacityStep == 0 {
		return fmt.Sprintf("none: no valid step reached good fraction ≥ %s%s", pct(res.GoodFractionTarget, 1), invalidNote(res))
	}
	if v.CapacityBound == ladderresult.BoundLower {
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
func invalidNote(res ladderresult.LadderResult) string {
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

func kneeText(res ladderresult.LadderResult, v ladderresult.Verdict) string {
	if v.KneeStep == 0 {
		return "none within the valid steps run" + invalidNote(res)
	}
	return fmt.Sprintf("%s req/s (step %d): the first valid step whose TTFT p95 exceeds %.3g × the lowest valid step's",
		num(v.Knee), v.KneeStep, res.KneeFactor)
}

// capacityShort and kneeShort are a class's figures in a table cell.
func capacityShort(v ladderresult.Verdict) string {
	switch {
	case v.CapacityStep == 0:
		return "none"
	case v.CapacityBound == ladderresult.BoundLower:
		return fmt.Sprintf("≥ %s req/s (step %d, lower bound)", num(v.Capacity), v.CapacityStep)
	}
	return fmt.Sprintf("%s req/s (step %d)", num(v.Capacity), v.CapacityStep)
}

func kneeShort(v ladderresult.Verdict) string {
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
func stepNotes(st ladderresult.LadderStep) []string {
	var out []string
	for _, c := range st.Summary.Validity.Causes {
		if c.Cause == "" { // a history line older than named causes
			out = append(out, fmt.Sprintf("step %d invalid, not used for capacity or knee: %s", st.Index, c.Reason))
			continue
		}
		out = append(out, fmt.Sprintf("step %d invalid (%s), not used for capacity or knee: %s; what to do: %s", st.Index, c.Cause, c.Reason, c.Action))
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

// ladderTTFTNote names the TTFT boundary in a ladder's title when it is not
// the default (first visible content).
func ladderTTFTNote(res ladderresult.LadderResult) string {
	if res.TTFTBoundary() == ledger.TTFTAnyToken {
		return "; TTFT to the first token of any kind, reasoning included"
	}
	return ""
}

func anyStepAborted(res ladderresult.LadderResult) bool {
	for _, s := range res.Steps {
		if s.Aborted {
			return true
		}
	}
	return false
}

// pdur formats one percentile of p, or "-" when p is empty.
func pdur(p quantile.Percentiles, d time.Duration) string {
	if p.Count == 0 {
		return "-"
	}
	return dur(d)
}
