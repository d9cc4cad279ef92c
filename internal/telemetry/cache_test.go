package telemetry

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/llmprobe/llmprobe/internal/ledger"
)

// TestCachedPromptTokens: llmprobe_cached_prompt_tokens_total and its
// denominator follow Record.CachedPromptTokens: the usage's count, else
// llama.cpp's timings, and nothing at all when the server said nothing
// believable (unknown is never counted as 0 cached of N).
func TestCachedPromptTokens(t *testing.T) {
	usage := func(prompt, cached int) ledger.Usage {
		return ledger.Usage{Known: true, Prompt: prompt, Completion: 4, CachedPrompt: ledger.KnownCount(cached)}
	}
	tests := []struct {
		name                 string
		rec                  ledger.Record
		wantCached, wantSeen float64
		wantDropped          float64
	}{
		{"usage count", ledger.Record{Usage: usage(1000, 992)}, 992, 1000, 0},
		{"usage count of zero is a reported miss", ledger.Record{Usage: usage(1000, 0)}, 0, 1000, 0},
		{"usage without a cache count says nothing", ledger.Record{Usage: ledger.Usage{Known: true, Prompt: 1000, Completion: 4}}, 0, 0, 0},
		{"invalid cache count says nothing",
			ledger.Record{Usage: ledger.Usage{Known: true, Prompt: 1000, CacheInvalid: true}, ServerTimings: &ledger.ServerTimings{CacheN: 10, PromptN: 990}}, 0, 0, 0},
		{"llama.cpp timings agreeing with the usage",
			ledger.Record{Usage: ledger.Usage{Known: true, Prompt: 1000}, ServerTimings: &ledger.ServerTimings{CacheN: 960, PromptN: 40}}, 960, 1000, 0},
		{"llama.cpp timings disagreeing with the usage are distrusted",
			ledger.Record{Usage: ledger.Usage{Known: true, Prompt: 1000}, ServerTimings: &ledger.ServerTimings{CacheN: 960, PromptN: 10}}, 0, 0, 0},
		{"llama.cpp timings without a usage", ledger.Record{ServerTimings: &ledger.ServerTimings{CacheN: 512, PromptN: 88}}, 512, 600, 0},
		{"a failed request's usage still counts",
			ledger.Record{Usage: usage(100, 64), Outcome: ledger.StreamError, Reason: ledger.ReasonTruncated}, 64, 100, 0},
		{"a record built elsewhere with more cached than prompt is dropped",
			ledger.Record{Usage: usage(10, 20)}, 0, 0, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, _ := newTestRecorder(t, Options{})
			rec := tc.rec
			rec.ID, rec.Target, rec.Class, rec.Traffic, rec.API = 1, "sim", "chat", ledger.TrafficBaseline, "openai-chat"
			if rec.Outcome == "" {
				rec.Outcome, rec.Reason = ledger.OK, ledger.ReasonStop
			}
			r.Record(&rec)
			lv := []string{"sim", "chat", "baseline", "none"}
			if got := testutil.ToFloat64(r.prom.cachedPrompt.WithLabelValues(lv...)); got != tc.wantCached {
				t.Errorf("cached = %v, want %v", got, tc.wantCached)
			}
			if got := testutil.ToFloat64(r.prom.cacheReported.WithLabelValues(lv...)); got != tc.wantSeen {
				t.Errorf("reported = %v, want %v", got, tc.wantSeen)
			}
			if got := testutil.ToFloat64(r.prom.dropped.WithLabelValues(DropNegative)); got != tc.wantDropped {
				t.Errorf("dropped = %v, want %v", got, tc.wantDropped)
			}
		})
	}
}
