package report

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/llmprobe/llmprobe/internal/ladderresult"
	"github.com/llmprobe/llmprobe/internal/ledger"
	"github.com/llmprobe/llmprobe/internal/quantile"
	"github.com/llmprobe/llmprobe/internal/servermetrics"
	"github.com/llmprobe/llmprobe/internal/stats"
	"github.com/llmprobe/llmprobe/internal/verdict"
)

// ModeLine is the first line of every human report: which load model ran,
// with the coordinated-omission warning for closed loop.
func ModeLine(m ledger.Mode) string {
	if m == ledger.ModeClosed {
		return "CLOSED LOOP — WARNING: coordinated omission: each user waits for its response before sending again, so the offered rate falls as the target slows and latencies understate what independent arrivals would see"
	}
	return "OPEN LOOP — arrivals from a fixed schedule, never slowed by responses; latencies from the planned send time"
}

// Text writes the human report of one probe run.
func Text(w io.Writer, s stats.Summary) error { return text(w, s, "") }

// ProbeText writes a probe's whole text report: its verdict line (m's),
// the report of Text with the path requested named beside a not_found,
// the server's view of the run (server, nil: none) and the answer checks'
// table (m.Checks, none: no table): the same verdict and figures as
// ProbeHTMLWith and the JSON.
func ProbeText(w io.Writer, s stats.Summary, server *servermetrics.View, m Meta) error {
	if err := VerdictText(w, m.Verdict); err != nil {
		return err
	}
	if err := text(w, s, m.Path); err != nil {
		return err
	}
	if err := ServerText(w, server, s); err != nil {
		return err
	}
	return ChecksText(w, m.Checks)
}

// text writes the report of one probe run; path, when known, is named
// beside a not_found.
func text(w io.Writer, s stats.Summary, path string) error {
	var b strings.Builder
	fmt.Fprintf(&b, "llmprobe probe: %s\n\n", ModeLine(s.Mode))

	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "window\t%s\tarrivals planned in it, completions during drain included\n", dur(s.Window))
	if s.Mode == ledger.ModeClosed {
		fmt.Fprintf(tw, "requested rate\tn/a\tclosed loop: set by users and think time\n")
	} else {
		fmt.Fprintf(tw, "requested rate\t%s\tthe schedule's rate\n", rate(s.RequestedRate))
	}
	fmt.Fprintf(tw, "achieved rate\t%s\tfirst attempts dispatched / window: offered load, retries excluded\n", rate(s.AchievedRate))
	tw.Flush()

	b.WriteString("\nrequests\n")
	tw = tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	rows := []struct {
		name string
		n    int
		what string
	}{
		{"planned", s.Planned, "arrivals the schedule planned in the window (first attempts)"},
		{"retries", s.Retries, "further attempts of those arrivals: attempts, not demand"},
		{"attempts", s.Attempts, "planned + retries = dispatched + unsent"},
		{"dispatched", s.Dispatched, fmt.Sprintf("attempts sent to the target, retries included (first attempts %d)", s.FirstDispatched)},
		{"unsent", s.Unsent, fmt.Sprintf("attempts planned but never sent, retries included (first attempts %d; planned = %d + %d)", s.FirstUnsent, s.FirstDispatched, s.FirstUnsent)},
		{"admitted", s.Admitted, "attempts the target took: sent, not rejected (429/503), not a transport error before response headers, not a connect timeout"},
		{"completed", s.Completed, "ok"},
		{"censored", s.Censored, "still in flight at the drain deadline"},
	}
	for _, r := range rows {
		fmt.Fprintf(tw, "  %s\t%d\t%s\n", r.name, r.n, r.what)
	}
	fmt.Fprintf(tw, "  accepted/offered\t%s\tadmitted / dispatched, per attempt\n", pct(s.AcceptedFraction, s.Dispatched))
	fmt.Fprintf(tw, "  completed/accepted\t%s\tcompleted / admitted%s\n", pct(s.CompletedFraction, s.Admitted-s.InjectedCancels), lessInjected(s))
	if s.Replayed > 0 {
		fmt.Fprintf(tw, "  replayed\t%d\tattempts sent again on a new connection after a keep-alive race (the server closed an idle connection as the request was sent); counted once, latency from the planned send\n", s.Replayed)
	}
	if s.Buffered > 0 {
		fmt.Fprintf(tw, "  buffered\t%d\t%s (caused by: %s)\n", s.Buffered, ledger.BufferedVerdict, ledger.BufferedSettings)
	}
	if s.OutsideWindow > 0 {
		fmt.Fprintf(tw, "  outside window\t%d\trecords of arrivals planned outside the window, not counted\n", s.OutsideWindow)
	}
	tw.Flush()

	b.WriteString("\noutcomes\n")
	tw = tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	for _, o := range ledger.Outcomes {
		rs := reasonsAt(s.Outcomes.ByReason[o], path)
		if rs == "" {
			rs = "-"
		}
		fmt.Fprintf(tw, "  %s\t%d\t%s\n", o, s.Outcomes.ByOutcome[o], rs)
	}
	tw.Flush()

	b.WriteString("\nlatency\n")
	tw = tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "  figure\tcount\tp50\tp90\tp95\tp99\tmax\tboundary\n")
	bounds := boundariesFor(s)
	for _, f := range figures(s) {
		if f.optional && (f.p.Count == 0 || f.key == FigArrivalTTFT || f.key == FigArrivalE2E) {
			continue
		}
		p := f.p
		if p.Count == 0 {
			fmt.Fprintf(tw, "  %s\t0\t-\t-\t-\t-\t-\t%s\n", f.label, bounds[f.key])
			continue
		}
		approx := ""
		if !p.Exact {
			approx = " (histogram, ≈)"
		}
		fmt.Fprintf(tw, "  %s\t%d\t%s\t%s\t%s\t%s\t%s\t%s%s\n", f.label, p.Count, dur(p.P50), dur(p.P90), dur(p.P95), dur(p.P99), dur(p.Max), bounds[f.key], approx)
	}
	tw.Flush()
	writeMatchedGaps(&b, s)
	writePrefix(&b, s)
	writeTurns(&b, s)

	b.WriteString("\ngoodput\n")
	tw = tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "  gates\t%s\n", gates(s.Gates))
	fmt.Fprintf(tw, "  good\t%d\tok and within every gate\n", s.Good)
	fmt.Fprintf(tw, "  goodput\t%s\tgood / window\n", rate(s.GoodputPerSecond))
	fmt.Fprintf(tw, "  good fraction\t%s\tgood / planned%s\n", goodFraction(s), lessInjected(s))
	m := s.GateMisses
	if m != (stats.GateMisses{}) {
		fmt.Fprintf(tw, "  gate misses\tttft %d, tpot %d, e2e %d, tpot unchecked (no usage, counted good) %d\n", m.TTFT, m.TPOT, m.E2E, m.Unverifiable)
	}
	tw.Flush()

	b.WriteString("\n" + GeneratorVerdictLine(s.Validity) + "\n")
	for _, c := range s.Validity.Causes {
		fmt.Fprintf(&b, "  - %s [%s]\n    what to do: %s\n", c.Reason, c.Cause, c.Action)
	}
	if h := s.Validity.Host; h.Known {
		fmt.Fprintf(&b, "  prober host over the window: %s\n", h)
	}
	for _, n := range s.Validity.Notes {
		fmt.Fprintf(&b, "  note: %s\n", n)
	}
	_, err := io.WriteString(w, b.String())
	if err != nil {
		return fmt.Errorf("report: writing text report: %w", err)
	}
	return nil
}

// GeneratorVerdictLine is the verdict's headline. It judges the prober,
// never the target: VALID cannot be read as "the target is fine".
func GeneratorVerdictLine(v verdict.Validity) string {
	if v.Valid {
		return "generator verdict: VALID — the prober kept its schedule, so the figures above measure the target (this judges the prober, not the target's health: see outcomes and goodput)"
	}
	return "generator verdict: INVALID — the prober did not keep its schedule: the figures above may describe the prober rather than the target"
}

// lessInjected notes when injected cancellations were left out of a
// denominator.
func lessInjected(s stats.Summary) string {
	if s.InjectedCancels == 0 {
		return ""
	}
	return fmt.Sprintf(" (less %d injected cancellations)", s.InjectedCancels)
}

type figure struct {
	key, label string
	p          quantile.Percentiles
	optional   bool // omitted from the text report when empty (or, for arrival figures, when there were no retries)
}

func figures(s stats.Summary) []figure {
	return []figure{
		{FigDispatchLag, "dispatch lag", s.DispatchLag, false},
		{FigTTFT, "TTFT", s.TTFT, false},
		{FigTTFTFromDispatch, "TTFT from dispatch", s.TTFTFromDispatch, false},
		{FigTTFR, "TTFR (reasoning)", s.TTFR, true},
		{FigInterChunk, "inter-chunk", s.InterChunk, false},
		{FigInterToken, "inter-token (derived)", s.InterTokenDerived, true},
		{FigTPOT, "TPOT", s.TPOT, false},
		{FigE2E, "e2e", s.E2E, false},
		{FigArrivalTTFT, "arrival TTFT", s.ArrivalTTFT, s.Retries == 0},
		{FigArrivalE2E, "arrival e2e", s.ArrivalE2E, s.Retries == 0},
		{FigRejected, "rejection time", s.RejectedTime, true},
		{FigCensoredAge, "censored age ≥", s.CensoredAge, true},
	}
}

// reasons lists a reason → count map in a stable order.
func reasons(m map[ledger.Reason]int) string {
	keys := make([]string, 0, len(m))
	for r := range m {
		keys = append(keys, string(r))
	}
	slices.Sort(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s %d", k, m[ledger.Reason(k)]))
	}
	return strings.Join(parts, ", ")
}

// ladderGates describes a ladder's gates: per class when it had several
// classes with their own gates.
func ladderGates(res ladderresult.LadderResult) string {
	if g, ok := res.CommonGates(); ok {
		return gates(g)
	}
	names := make([]string, 0, len(res.ClassGates))
	for n := range res.ClassGates {
		names = append(names, n)
	}
	slices.Sort(names)
	parts := make([]string, 0, len(names))
	for _, n := range names {
		parts = append(parts, n+": "+gates(res.ClassGates[n]))
	}
	return strings.Join(parts, "; ")
}

func gates(g stats.Gates) string {
	if g.IsZero() {
		return "none (every ok request is good)"
	}
	var parts []string
	if g.TTFT > 0 {
		parts = append(parts, "TTFT ≤ "+dur(g.TTFT))
	}
	if g.TPOT > 0 {
		parts = append(parts, "TPOT ≤ "+dur(g.TPOT))
	}
	if g.E2E > 0 {
		parts = append(parts, "e2e ≤ "+dur(g.E2E))
	}
	return strings.Join(parts, ", ")
}
