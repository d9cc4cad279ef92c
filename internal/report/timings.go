package report

import (
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/llmprobe/llmprobe/internal/ladderresult"
	"github.com/llmprobe/llmprobe/internal/quantile"
	"github.com/llmprobe/llmprobe/internal/stats"
)

// MatchedGapNote says what the per-request client − server gaps are,
// wherever they are shown.
const MatchedGapNote = "client − server, matched request by request from the server's own per-request timings " +
	"(llama.cpp's `timings`; ok requests that carried valid ones): prefill gap = TTFT from dispatch − the server's prompt_ms " +
	"(the network both ways, the wait for a slot and the HTTP front end before its prompt clock starts, and the first token's own decode); " +
	"TPOT gap = TPOT − the server's predicted_per_token_ms (what delivery adds to the server's pace; it can be negative). " +
	"Unlike the histogram gap, these are percentiles of differences"

// MatchedGaps is the JSON shape of the per-request gaps (stats').
type MatchedGaps = ladderresult.MatchedGaps

// MatchedGapsOf is a summary's per-request gaps, nil without any.
func MatchedGapsOf(s stats.Summary) *MatchedGaps { return ladderresult.MatchedGapsOf(s) }

// writeMatchedGaps writes a probe report's per-request gaps (nothing when
// no request carried server timings).
func writeMatchedGaps(b *strings.Builder, s stats.Summary) {
	if MatchedGapsOf(s) == nil {
		return
	}
	b.WriteString("\nclient − server per request (the server's own timings)\n")
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "  gap\tcount\tp50\tp90\tp95\tp99\tmax\n")
	for _, r := range []struct {
		name string
		p    quantile.Percentiles
	}{{"prefill gap", s.PrefillGap}, {"TPOT gap", s.TPOTGap}} {
		if r.p.Count == 0 {
			fmt.Fprintf(tw, "  %s\t0\t-\t-\t-\t-\t-\n", r.name)
			continue
		}
		fmt.Fprintf(tw, "  %s\t%d\t%s\t%s\t%s\t%s\t%s\n", r.name, r.p.Count, dur(r.p.P50), dur(r.p.P90), dur(r.p.P95), dur(r.p.P99), dur(r.p.Max))
	}
	_ = tw.Flush() // a strings.Builder never fails
	fmt.Fprintf(b, "  (%s)\n", MatchedGapNote)
}

// writeLadderMatchedGaps writes the ladder's per-step per-request gaps
// (nothing when no step's requests carried server timings).
func writeLadderMatchedGaps(b *strings.Builder, res ladderresult.LadderResult) error {
	some := false
	for _, st := range res.Steps {
		some = some || MatchedGapsOf(st.Summary) != nil
	}
	if !some {
		return nil
	}
	b.WriteString("\nclient − server per request (the server's own timings), per step\n")
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "step\trate\tn\tprefill gap p50\tprefill gap p95\tTPOT gap p50\tTPOT gap p95\t\n")
	for _, st := range res.Steps {
		s := st.Summary
		fmt.Fprintf(tw, "%d\t%s\t%d\t%s\t%s\t%s\t%s\t\n", st.Index, num(st.Rate), s.PrefillGap.Count,
			gdur(s.PrefillGap, s.PrefillGap.P50), gdur(s.PrefillGap, s.PrefillGap.P95), gdur(s.TPOTGap, s.TPOTGap.P50), gdur(s.TPOTGap, s.TPOTGap.P95))
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("report: per-request gap table: %w", err)
	}
	fmt.Fprintf(b, "(%s)\n", MatchedGapNote)
	return nil
}

// gdur formats a gap percentile at dur's precision, "-" without samples.
func gdur(p quantile.Percentiles, d time.Duration) string {
	if p.Count == 0 {
		return "-"
	}
	return dur(d)
}

// matchedRow is one step of the HTML report's per-request gap table.
type matchedRow struct {
	Index                                    int
	Rate                                     string
	N                                        int
	PrefillP50, PrefillP95, TPOTP50, TPOTP95 string
}

// ladderMatchedRows are the steps' per-request gaps, nil when no step's
// requests carried server timings.
func ladderMatchedRows(res ladderresult.LadderResult) []matchedRow {
	var out []matchedRow
	some := false
	for _, st := range res.Steps {
		s := st.Summary
		some = some || MatchedGapsOf(s) != nil
		out = append(out, matchedRow{Index: st.Index, Rate: num(st.Rate), N: s.PrefillGap.Count,
			PrefillP50: gdur(s.PrefillGap, s.PrefillGap.P50), PrefillP95: gdur(s.PrefillGap, s.PrefillGap.P95),
			TPOTP50: gdur(s.TPOTGap, s.TPOTGap.P50), TPOTP95: gdur(s.TPOTGap, s.TPOTGap.P95)})
	}
	if !some {
		return nil
	}
	return out
}

// probeMatchedRows are a probe's per-request gaps (prefill, TPOT), nil
// without server timings.
func probeMatchedRows(s stats.Summary) []latencyRow {
	if MatchedGapsOf(s) == nil {
		return nil
	}
	var out []latencyRow
	for _, r := range []struct {
		name string
		p    quantile.Percentiles
	}{{"prefill gap", s.PrefillGap}, {"TPOT gap", s.TPOTGap}} {
		row := latencyRow{Label: r.name, Count: r.p.Count, P50: "-", P90: "-", P95: "-", P99: "-", Max: "-"}
		if p := r.p; p.Count > 0 {
			row.P50, row.P90, row.P95, row.P99, row.Max = dur(p.P50), dur(p.P90), dur(p.P95), dur(p.P99), dur(p.Max)
		}
		out = append(out, row)
	}
	return out
}
