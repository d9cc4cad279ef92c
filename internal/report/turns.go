package report

import (
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/llmprobe/llmprobe/internal/stats"
)

// TurnJSON is one turn index's figures of a session class
// (docs/figures.md#per-turn-figures-sessions).
type TurnJSON struct {
	Turn    int  `json:"turn"`
	Planned int  `json:"planned"`
	OK      int  `json:"ok"`
	Failed  int  `json:"failed"`
	Unsent  int  `json:"unsent"`
	Aborted int  `json:"aborted"` // unsent because an earlier turn of the session failed
	TTFT    Dist `json:"ttft"`    // from the turn's own planned time
	// CachedFraction is cached / prompt tokens over the turn's ok records
	// whose server reported a cached count; absent when none did.
	CachedFraction *float64 `json:"cached_fraction,omitempty"`
	CachedReported int      `json:"cached_reported"`
}

// TurnsOf is the per-turn table of a summary (nil without sessions).
func TurnsOf(s stats.Summary) []TurnJSON {
	var out []TurnJSON
	for _, t := range s.Turns {
		j := TurnJSON{Turn: t.Turn, Planned: t.Planned, OK: t.OK, Failed: t.Failed, Unsent: t.Unsent, Aborted: t.Aborted,
			TTFT: DistOf(t.TTFT), CachedReported: t.CachedReported}
		if f, ok := t.CachedFraction(); ok {
			j.CachedFraction = &f
		}
		out = append(out, j)
	}
	return out
}

// writeTurns writes the per-turn table of a session class, when there is
// one.
func writeTurns(b *strings.Builder, s stats.Summary) {
	if len(s.Turns) == 0 {
		return
	}
	fmt.Fprintf(b, "\nsessions by turn (TTFT from each turn's own planned time: the previous turn's end + think time; p95 from %d TTFTs)\n", stats.PrefixTailMinSample)
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "  turn\tplanned\tok\tfailed\tunsent (aborted)\tTTFT p50\tTTFT p95\tcached\n")
	for _, t := range s.Turns {
		p50, p95 := "-", "-"
		if t.TTFT.Count > 0 {
			p50, p95 = dur(t.TTFT.P50), "too few samples"
		}
		if t.TTFT.Count >= stats.PrefixTailMinSample { // below, a p95 is a sample's maximum
			p95 = dur(t.TTFT.P95)
		}
		cached := "-"
		if f, ok := t.CachedFraction(); ok {
			cached = fmt.Sprintf("%.0f%% of prompt tokens", 100*f)
		}
		fmt.Fprintf(tw, "  %d\t%d\t%d\t%d\t%d (%d)\t%s\t%s\t%s\n", t.Turn, t.Planned, t.OK, t.Failed, t.Unsent, t.Aborted, p50, p95, cached)
	}
	tw.Flush()
}
