package report

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/llmprobe/llmprobe/internal/ledger"
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
	fmt.Fprintf(&b, "gates: %s; capacity needs good fraction ≥ %s on a valid step; knee: TTFT p95 > %.3g × the lowest step's\n\n",
		ladderGates(res), pct(res.GoodFractionTarget, 1), res.KneeFactor)
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "step\trate\tplanned\tdispatched\tunsent\tok\trejected\tother fail\tcensored\tTTFT p50\tTTFT p95\te2e p95\tgoodput\tgood%\tvalid\tretries\t\n")
	for _, st := range res.Steps {
		s := st.Summary
		valid := "yes"
		if !s.Validity.Valid {
			valid = "NO"
		}
		fmt.Fprintf(tw, "%d\t%.3g\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%s\t%s\t%s\t%.3g\t%s\t%s\t%d\t\n",
			st.Index, st.Rate, s.Planned, s.Dispatched, s.Unsent, s.Completed, s.Rejected, otherFailures(s), s.Censored,
			pdur(s.TTFT, s.TTFT.P50), pdur(s.TTFT, s.TTFT.P95), pdur(s.E2E, s.E2E.P95),
			s.GoodputPerSecond, goodFraction(s), valid, s.Retries)
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
	if res.CapacityStep > 0 {
		fmt.Fprintf(&b, "capacity: %.3g req/s (step %d): the highest valid step rate with good fraction ≥ %s\n",
			res.Capacity, res.CapacityStep, pct(res.GoodFractionTarget, 1))
	} else {
		fmt.Fprintf(&b, "capacity: none: no valid step reached good fraction ≥ %s\n", pct(res.GoodFractionTarget, 1))
	}
	if res.KneeStep > 0 {
		fmt.Fprintf(&b, "knee: %.3g req/s (step %d): the first step whose TTFT p95 exceeds %.3g × the lowest step's\n",
			res.Knee, res.KneeStep, res.KneeFactor)
	} else {
		fmt.Fprintf(&b, "knee: none within the steps run\n")
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("report: writing ladder table: %w", err)
	}
	return nil
}

// otherFailures counts a step's attempts sent that ended neither ok,
// rejected nor censored (errors, timeouts, cancellations).
func otherFailures(s stats.Summary) int { return s.Dispatched - s.Completed - s.Rejected - s.Censored }

// goodFraction formats good / (planned − injected cancellations), "n/a"
// when that denominator is 0.
func goodFraction(s stats.Summary) string { return pct(s.GoodFraction, s.Planned-s.InjectedCancels) }

// stepNotes are a step's invalid reasons and abort, one line each.
func stepNotes(st stats.LadderStep) []string {
	var out []string
	for _, r := range st.Summary.Validity.Reasons {
		out = append(out, fmt.Sprintf("step %d invalid: %s", st.Index, r))
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
	return fmt.Sprintf("%.1fms", float64(d)/float64(time.Millisecond))
}

// LadderStepJSON is one ladder step in JSON (seconds).
type LadderStepJSON struct {
	Index        int            `json:"index"`
	Rate         float64        `json:"rate"`
	Planned      int            `json:"planned"`
	Retries      int            `json:"retries"`    // further attempts of those arrivals (not demand)
	Dispatched   int            `json:"dispatched"` // attempts sent, retries included
	Unsent       int            `json:"unsent"`
	Outcomes     map[string]int `json:"outcomes"`
	TTFT         Dist           `json:"ttft"`
	E2E          Dist           `json:"e2e"`
	DispatchLag  Dist           `json:"dispatch_lag"`
	Goodput      float64        `json:"goodput"`
	GoodFraction float64        `json:"good_fraction"`
	Valid        bool           `json:"valid"`
	Invalid      []string       `json:"invalid_reasons"`
	Aborted      bool           `json:"aborted"`
	AbortReason  string         `json:"abort_reason,omitempty"`
}

// Ladder is a ladder result in JSON (one line of a ladder history).
type Ladder struct {
	Target             string               `json:"target,omitempty"`
	Started            string               `json:"started,omitempty"` // RFC 3339
	Steps              []LadderStepJSON     `json:"steps"`
	Gates              GatesJSON            `json:"gates"`
	ClassGates         map[string]GatesJSON `json:"class_gates,omitempty"`   // per class; when set, they apply instead of gates
	TTFTBoundary       string               `json:"ttft_boundary,omitempty"` // "any_token" when TTFT includes reasoning; absent: first visible content
	GoodFractionTarget float64              `json:"good_fraction_target"`
	KneeFactor         float64              `json:"knee_factor"`
	Capacity           float64              `json:"capacity"`      // req/s, 0 = none
	CapacityStep       int                  `json:"capacity_step"` // 1-based, 0 = none
	Knee               float64              `json:"knee"`
	KneeStep           int                  `json:"knee_step"`
	Aborted            bool                 `json:"aborted"`
	AbortReason        string               `json:"abort_reason,omitempty"`
	Stopped            string               `json:"stopped,omitempty"` // why the ladder stopped below its top step (stop_at), when it did
}

// LadderOf converts a ladder result to its JSON shape.
func LadderOf(res stats.LadderResult) Ladder {
	l := Ladder{
		Target: res.Target, Steps: make([]LadderStepJSON, 0, len(res.Steps)),
		Gates: gatesJSON(res.Gates), TTFTBoundary: string(ladderTTFTBoundary(res)),
		GoodFractionTarget: res.GoodFractionTarget, KneeFactor: res.KneeFactor,
		Capacity: res.Capacity, CapacityStep: res.CapacityStep, Knee: res.Knee, KneeStep: res.KneeStep,
		Aborted: res.Aborted, AbortReason: res.AbortReason, Stopped: res.Stopped,
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
		l.Steps = append(l.Steps, LadderStepJSON{
			Index: st.Index, Rate: st.Rate, Planned: s.Planned, Retries: s.Retries, Dispatched: s.Dispatched, Unsent: s.Unsent,
			Outcomes: o, TTFT: DistOf(s.TTFT), E2E: DistOf(s.E2E), DispatchLag: DistOf(s.DispatchLag),
			Goodput: s.GoodputPerSecond, GoodFraction: s.GoodFraction, Valid: s.Validity.Valid,
			Invalid: append([]string{}, s.Validity.Reasons...), Aborted: st.Aborted, AbortReason: st.AbortReason,
		})
	}
	return l
}
