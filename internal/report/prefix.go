package report

import (
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/llmprobe/llmprobe/internal/quantile"
	"github.com/llmprobe/llmprobe/internal/stats"
)

// PrefixNote says what the prefix-cache speedup is, wherever it is shown
// (docs/figures.md#prefix-cache-speedup).
var PrefixNote = fmt.Sprintf("speedup = the cold twin's TTFT / the shared-prefix class's TTFT, at p50 and at p95 (TTFT from the planned send time, ok records only; a ratio of percentiles); "+
	"not judged below %d TTFTs on either side (p95: %d). Cached tokens: the cached prompt tokens the server reported / the prompt tokens of the same records", stats.PrefixMinSample, stats.PrefixTailMinSample)

// PrefixJSON is one shared-prefix class against its cold twin.
type PrefixJSON struct {
	Class     string `json:"class"`
	ColdClass string `json:"cold_class"`
	// Judged is false while either side has fewer than MinSamples TTFTs;
	// the speedups are then null. The p95 speedup is null below
	// MinSamplesP95 a side (a p95 of fewer is a sample's maximum).
	Judged        bool     `json:"judged"`
	MinSamples    int      `json:"min_samples"`
	MinSamplesP95 int      `json:"min_samples_p95"`
	SpeedupP50    *float64 `json:"speedup_p50"`
	SpeedupP95    *float64 `json:"speedup_p95"`
	CachedTTFT    Dist     `json:"cached_ttft"`
	ColdTTFT      Dist     `json:"cold_ttft"`
	// CachedTokens and ColdCachedTokens: what the server said about its
	// cache on each side's ok records (fraction null: not reported).
	CachedTokens     CacheTokensJSON `json:"cached_tokens"`
	ColdCachedTokens CacheTokensJSON `json:"cold_cached_tokens"`
}

// CacheTokensJSON sums the cached prompt tokens a server reported over the
// records where it reported them.
type CacheTokensJSON struct {
	Records  int      `json:"records"`
	Cached   int64    `json:"cached"`
	Prompt   int64    `json:"prompt"`
	Fraction *float64 `json:"fraction"` // cached / prompt; null when no record reported a count
}

func cacheJSON(c stats.CacheTokens) CacheTokensJSON {
	out := CacheTokensJSON{Records: c.Records, Cached: c.Cached, Prompt: c.Prompt}
	if c.Known {
		f := c.Fraction
		out.Fraction = &f
	}
	return out
}

// PrefixOf is a summary's prefix-cache figures in their JSON shape (nil
// without shared-prefix classes).
func PrefixOf(s stats.Summary) []PrefixJSON {
	if len(s.Prefix) == 0 {
		return nil
	}
	out := make([]PrefixJSON, 0, len(s.Prefix))
	for _, p := range s.Prefix {
		j := PrefixJSON{Class: p.Class, ColdClass: p.ColdClass, Judged: p.Judged, MinSamples: stats.PrefixMinSample, MinSamplesP95: stats.PrefixTailMinSample,
			CachedTTFT: DistOf(p.CachedTTFT), ColdTTFT: DistOf(p.ColdTTFT),
			CachedTokens: cacheJSON(p.Cached), ColdCachedTokens: cacheJSON(p.Cold)}
		if p.Judged {
			p50 := p.SpeedupP50
			j.SpeedupP50 = &p50
		}
		if p.JudgedP95 {
			p95 := p.SpeedupP95
			j.SpeedupP95 = &p95
		}
		out = append(out, j)
	}
	return out
}

// prefixRow is one class's row, formatted for the text and HTML reports.
type prefixRow struct {
	Class, Cold                    string
	CachedN, ColdN                 int
	CachedP50, ColdP50, SpeedupP50 string
	CachedP95, ColdP95, SpeedupP95 string
	CachedTokens, ColdTokens       string
}

func prefixRows(s stats.Summary) []prefixRow {
	var rows []prefixRow
	for _, p := range s.Prefix {
		r := prefixRow{Class: p.Class, Cold: p.ColdClass, CachedN: p.CachedTTFT.Count, ColdN: p.ColdTTFT.Count,
			CachedP50: prefixDur(p.CachedTTFT, p.CachedTTFT.P50), ColdP50: prefixDur(p.ColdTTFT, p.ColdTTFT.P50),
			CachedP95: prefixDur(p.CachedTTFT, p.CachedTTFT.P95), ColdP95: prefixDur(p.ColdTTFT, p.ColdTTFT.P95),
			SpeedupP50: "too few samples", SpeedupP95: "too few samples",
			CachedTokens: cacheText(p.Cached), ColdTokens: cacheText(p.Cold)}
		if p.Judged {
			r.SpeedupP50 = fmt.Sprintf("%.2f×", p.SpeedupP50)
		}
		if p.JudgedP95 {
			r.SpeedupP95 = fmt.Sprintf("%.2f×", p.SpeedupP95)
		}
		rows = append(rows, r)
	}
	return rows
}

func prefixDur(p quantile.Percentiles, d time.Duration) string {
	if p.Count == 0 {
		return "-"
	}
	return dur(d)
}

func cacheText(c stats.CacheTokens) string {
	if !c.Known {
		return "not reported"
	}
	return fmt.Sprintf("%.1f%% (%d of %d tokens, %d records)", 100*c.Fraction, c.Cached, c.Prompt, c.Records)
}

// writePrefix writes a probe report's prefix-cache section (nothing
// without shared-prefix classes).
func writePrefix(b *strings.Builder, s stats.Summary) {
	rows := prefixRows(s)
	if len(rows) == 0 {
		return
	}
	b.WriteString("\nprefix cache: each shared-prefix class against its cold twin\n")
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "  class\tTTFT n\tp50\tp95\tspeedup p50\tspeedup p95\tcached tokens\n")
	for _, r := range rows {
		fmt.Fprintf(tw, "  %s\t%d\t%s\t%s\t%s\t%s\t%s\n", r.Class, r.CachedN, r.CachedP50, r.CachedP95, r.SpeedupP50, r.SpeedupP95, r.CachedTokens)
		fmt.Fprintf(tw, "  %s\t%d\t%s\t%s\t\t\t%s\n", r.Cold, r.ColdN, r.ColdP50, r.ColdP95, r.ColdTokens)
	}
	tw.Flush()
	fmt.Fprintf(b, "  %s\n", PrefixNote)
}
