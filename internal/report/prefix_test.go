package report

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/quantile"
	"github.com/llmprobe/llmprobe/internal/stats"
)

// TestPrefixReport: the prefix-cache section in text, JSON and HTML: a
// judged class with its speedups and cached fraction beside its twin's, a
// class with too few samples shown as such (JSON null), and a server that
// reported no cache counts shown as "not reported" (JSON null), never 0 %.
func TestPrefixReport(t *testing.T) {
	p := func(n int, p50, p95 time.Duration) quantile.Percentiles {
		return quantile.Percentiles{Count: n, P50: p50, P95: p95, Max: p95, Exact: true}
	}
	known := stats.CacheTokens{Records: 20, Cached: 900, Prompt: 1000, Fraction: 0.9, Known: true}
	zero := stats.CacheTokens{Records: 20, Prompt: 1000, Known: true}
	s := stats.Summary{Prefix: []stats.PrefixSpeedup{
		stats.Speedup("chat", "chat-cold", p(20, 100*time.Millisecond, 200*time.Millisecond), p(20, 300*time.Millisecond, 500*time.Millisecond), known, zero),
		stats.Speedup("rare", "rare-cold", p(stats.PrefixMinSample-1, 100*time.Millisecond, 100*time.Millisecond), p(30, 300*time.Millisecond, 300*time.Millisecond), stats.CacheTokens{}, stats.CacheTokens{}),
	}}
	var b strings.Builder
	if err := Text(&b, s); err != nil {
		t.Fatal(err)
	}
	text := b.String()
	for _, want := range []string{
		"prefix cache: each shared-prefix class against its cold twin",
		"chat       20      100ms  200ms  3.00×        2.50×        90.0% (900 of 1000 tokens, 20 records)",
		"chat-cold  20      300ms  500ms                            0.0% (0 of 1000 tokens, 20 records)",
		"rare       9       100ms  100ms  too few samples  too few samples  not reported",
		"not judged below 10 TTFTs on either side",
	} {
		if !strings.Contains(strings.Join(strings.Fields(text), " "), strings.Join(strings.Fields(want), " ")) {
			t.Errorf("text report lacks %q:\n%s", want, text)
		}
	}
	var got struct {
		PrefixCache []struct {
			Class        string   `json:"class"`
			Judged       bool     `json:"judged"`
			SpeedupP50   *float64 `json:"speedup_p50"`
			SpeedupP95   *float64 `json:"speedup_p95"`
			MinSamples   int      `json:"min_samples"`
			CachedTTFT   Dist     `json:"cached_ttft"`
			CachedTokens struct {
				Fraction *float64 `json:"fraction"`
				Records  int      `json:"records"`
			} `json:"cached_tokens"`
		} `json:"prefix_cache"`
	}
	b.Reset()
	if err := JSON(&b, s); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(b.String()), &got); err != nil {
		t.Fatal(err)
	}
	if len(got.PrefixCache) != 2 {
		t.Fatalf("prefix_cache: %s", b.String())
	}
	c, r := got.PrefixCache[0], got.PrefixCache[1]
	if !c.Judged || c.SpeedupP50 == nil || *c.SpeedupP50 != 3 || *c.SpeedupP95 != 2.5 || c.CachedTokens.Fraction == nil || *c.CachedTokens.Fraction != 0.9 || c.CachedTTFT.P50 != 0.1 || c.MinSamples != 10 {
		t.Errorf("chat: %+v", c)
	}
	if r.Judged || r.SpeedupP50 != nil || r.SpeedupP95 != nil || r.CachedTokens.Fraction != nil || r.CachedTokens.Records != 0 {
		t.Errorf("rare: %+v", r)
	}
	b.Reset()
	if err := JSON(&b, stats.Summary{}); err != nil || strings.Contains(b.String(), "prefix_cache") {
		t.Errorf("prefix_cache without shared-prefix classes: %v", err)
	}
	b.Reset()
	if err := ProbeHTML(&b, s, Meta{}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"<h2>Prefix cache</h2>", "<td>chat-cold</td>", "<td>3.00×</td>", "<td>too few samples</td>", "not reported"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("HTML lacks %q", want)
		}
	}
	b.Reset()
	if err := ProbeHTML(&b, stats.Summary{}, Meta{}); err != nil || strings.Contains(b.String(), "Prefix cache") {
		t.Errorf("HTML prefix section without shared-prefix classes: %v", err)
	}
}
