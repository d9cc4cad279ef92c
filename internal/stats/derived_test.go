package stats

import (
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/ledger"
)

// Bundled chunks: per-token time is derived from per-chunk usage, one sample
// per token, and kept apart from the measured inter-chunk gaps.
func TestInterTokenDerived(t *testing.T) {
	ms := time.Millisecond
	r := ledger.Record{
		ID: 1, Mode: ledger.ModeOpen, Planned: 0, Dispatched: ms, FirstContent: 10 * ms, LastContent: 40 * ms, End: 41 * ms,
		ChunkGaps: []time.Duration{10 * ms, 20 * ms}, ChunkTokens: []int{1, 2, 4},
		Outcome: ledger.OK, Reason: ledger.ReasonStop,
	}
	noUsage := r
	noUsage.ID, noUsage.ChunkTokens = 2, nil
	s := Summarize(Config{Mode: ledger.ModeOpen}, []ledger.Record{r, noUsage})
	if s.InterChunk.Count != 4 {
		t.Fatalf("inter-chunk count %d, want 4 measured gaps", s.InterChunk.Count)
	}
	if s.InterTokenDerived.Count != 6 {
		t.Fatalf("derived count %d, want 6 (2+4 tokens)", s.InterTokenDerived.Count)
	}
	if s.InterTokenDerived.P50 != 5*ms || s.InterTokenDerived.Max != 5*ms {
		t.Fatalf("derived per-token %v..%v, want 5ms (10ms/2 and 20ms/4)", s.InterTokenDerived.P50, s.InterTokenDerived.Max)
	}
}

// The TTFT boundary is the record's: visible content by default, the first
// token of any kind when asked.
func TestTTFTBoundary(t *testing.T) {
	ms := time.Millisecond
	base := ledger.Record{ID: 1, Mode: ledger.ModeOpen, Planned: 0, Dispatched: ms, FirstReasoning: 20 * ms,
		FirstContent: 300 * ms, LastContent: 400 * ms, End: 401 * ms, Outcome: ledger.OK, Reason: ledger.ReasonStop}
	any := base
	any.TTFTBoundary = ledger.TTFTAnyToken
	for _, tc := range []struct {
		r    ledger.Record
		want time.Duration
	}{{base, 300 * ms}, {any, 20 * ms}} {
		s := Summarize(Config{}, []ledger.Record{tc.r})
		if s.TTFT.P50 != tc.want || s.TTFR.P50 != 20*ms {
			t.Errorf("boundary %q: TTFT %v TTFR %v, want %v and 20ms", tc.r.TTFTBoundary, s.TTFT.P50, s.TTFR.P50, tc.want)
		}
	}
}
