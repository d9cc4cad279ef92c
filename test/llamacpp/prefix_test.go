package llamacpp

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/ledger"
	"github.com/llmprobe/llmprobe/internal/protocol"
	"github.com/llmprobe/llmprobe/internal/testutil"
	"github.com/llmprobe/llmprobe/internal/workload"
)

// TestPrefixCacheSpeedup sends shared-prefix requests (a ~1,000-token
// prefix in two groups, round robin) and their cold twins, one at a time,
// through the real client to llama-server, whose prompt cache is on by
// default. Once its group was sent, a shared request reads nearly all its
// prompt from the cache (usage.prompt_tokens_details.cached_tokens, agreeing
// with timings.cache_n); a cold twin reads at most the chat template's
// header; and the warm requests' first token comes sooner. Two groups plus
// the cold twins fit the server's 4 slots, so the cold twins do not evict
// the groups (docs/workloads.md: the prober must not destroy what it
// measures).
func TestPrefixCacheSpeedup(t *testing.T) {
	srv := testutil.StartLlamaCpp(t) // skips without the engine (RequireLlamaCpp)
	gen, err := workload.NewPrefixGen(workload.PrefixSpec{PrefixTokens: 1000, Groups: 2, Choice: workload.GroupRoundRobin, SuffixTokens: 16}, 21, 22)
	if err != nil {
		t.Fatal(err)
	}
	c, err := protocol.NewClient(protocol.ClientOptions{Timeouts: protocol.Timeouts{Total: 60 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseIdleConnections()
	type sample struct {
		prompt, cached int
		ttft           time.Duration
	}
	send := func(p workload.PrefixPrompt) sample {
		t.Helper()
		// A fresh connection each time: this test measures the cache, not
		// keep-alive.
		c.CloseIdleConnections()
		l := ledger.New(time.Now())
		rec := l.Plan(ledger.Meta{Target: "llama"}, l.Now())
		res := c.Do(context.Background(), protocol.Target{Base: srv.URL() + "/v1", Adapter: protocol.OpenAIChat{}},
			protocol.Params{Model: "tiny", Messages: p.Messages, MaxTokens: 4}, rec, l.Now, func() { l.MarkDispatched(rec) })
		if res.Outcome != ledger.OK || !rec.Usage.Known {
			t.Fatalf("result %+v, usage %+v", res, rec.Usage)
		}
		n, src, ok := rec.CachedPromptTokens()
		if !ok || src != ledger.CacheFromUsage {
			t.Fatalf("cached tokens (%d, %q, %v): llama.cpp reports them in its usage", n, src, ok)
		}
		if st := rec.ServerTimings; st == nil || st.CacheN != n || st.CacheN+st.PromptN != rec.Usage.Prompt {
			t.Errorf("timings %+v disagree with the usage (%d cached of %d)", st, n, rec.Usage.Prompt)
		}
		d, _ := rec.TTFTFromDispatch()
		return sample{rec.Usage.Prompt, n, d}
	}
	var warm, cold []sample
	for i := range 10 {
		s := send(gen.Shared())
		if i >= 2 { // each group's first request fills the cache
			warm = append(warm, s)
		}
		cold = append(cold, send(gen.Cold()))
	}
	for i, s := range warm {
		if float64(s.cached) < 0.9*float64(s.prompt) {
			t.Errorf("warm shared request %d: %d of %d prompt tokens cached, want at least 90%%", i, s.cached, s.prompt)
		}
	}
	for i, s := range cold {
		if s.cached > 32 {
			t.Errorf("cold twin %d: %d of %d prompt tokens cached, want no more than the template's header", i, s.cached, s.prompt)
		}
	}
	median := func(ss []sample) sample {
		slices.SortFunc(ss, func(a, b sample) int { return int(a.ttft - b.ttft) })
		return ss[len(ss)/2]
	}
	mw, mc := median(warm), median(cold)
	if mw.ttft >= mc.ttft {
		t.Errorf("median TTFT warm %v, cold %v: the cache bought nothing", mw.ttft, mc.ttft)
	}
	t.Logf("llama.cpp, %d-token prompts: median TTFT cold %v (%d cached), warm %v (%d cached): speedup %.1f",
		mc.prompt, mc.ttft, mc.cached, mw.ttft, mw.cached, float64(mc.ttft)/float64(mw.ttft))
}
