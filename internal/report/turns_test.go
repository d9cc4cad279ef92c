package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/quantile"
	"github.com/llmprobe/llmprobe/internal/stats"
)

// A session summary's per-turn rows reach the text report's table and the
// JSON report's turns; a summary without sessions has neither.
func TestTurnsReport(t *testing.T) {
	s := stats.Summary{Turns: []stats.TurnFigures{
		{Turn: 1, Planned: 25, OK: 25, TTFT: quantile.Percentiles{Count: 25, P50: 200 * time.Millisecond, P95: 300 * time.Millisecond, Exact: true},
			CachedReported: 25, PromptTokens: 5000},
		{Turn: 2, Planned: 10, OK: 8, Failed: 2, TTFT: quantile.Percentiles{Count: 8, P50: 120 * time.Millisecond, P95: 150 * time.Millisecond, Exact: true},
			CachedReported: 8, CachedTokens: 3000, PromptTokens: 6000},
		{Turn: 3, Planned: 10, Unsent: 2, Aborted: 2, OK: 8},
	}}
	var b bytes.Buffer
	if err := Text(&b, s); err != nil {
		t.Fatal(err)
	}
	// turn 2's p95 is of 8 TTFTs (a sample's maximum): not shown as a measurement
	for _, want := range []string{"sessions by turn", "  1     25       25  0       0 (0)             200ms     300ms            0% of prompt tokens",
		"  2     10       8   2       0 (0)             120ms     too few samples  50% of prompt tokens", "  3     10       8   0       2 (2)             -         -                -"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("text report lacks %q:\n%s", want, b.String())
		}
	}
	var got struct {
		Turns []TurnJSON `json:"turns"`
	}
	b.Reset()
	if err := JSON(&b, s); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Turns) != 3 || got.Turns[1].CachedFraction == nil || *got.Turns[1].CachedFraction != 0.5 || got.Turns[2].CachedFraction != nil || got.Turns[2].Aborted != 2 {
		t.Errorf("json turns %+v", got.Turns)
	}
	b.Reset()
	if err := JSON(&b, stats.Summary{}); err != nil || strings.Contains(b.String(), `"turns"`) {
		t.Errorf("a summary without sessions has turns (%v):\n%s", err, b.String())
	}
	b.Reset()
	if err := Text(&b, stats.Summary{}); err != nil || strings.Contains(b.String(), "sessions by turn") {
		t.Errorf("a summary without sessions has a turn table (%v)", err)
	}
}
