package workload

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/ledger"
	"github.com/llmprobe/llmprobe/internal/protocol"
	"github.com/llmprobe/llmprobe/internal/sim"
	"github.com/llmprobe/llmprobe/internal/testutil"
)

// TestPrefixGenAgainstSimulator: through the real client and every API
// adapter, the simulator serves a shared request's prefix from its cache
// (992 of 1,008 prompt tokens: its 62 whole 16-token blocks) once its group
// was sent, never a cold twin's, and none at all once the cache is switched
// off; the cold twins' first token comes at least the configured prefill of
// their 1,008 tokens late, the warm shared requests' sooner, and with the
// cache off the two are alike (the speedup collapses to about 1).
func TestPrefixGenAgainstSimulator(t *testing.T) {
	if testing.Short() {
		t.Skip("full tier: real-time requests with a simulated 100 µs-a-token prefill of 1,008-token prompts, through every API, cache on and off")
	}
	const perToken = 100 * time.Microsecond
	cfg := sim.DefaultConfig()
	cfg.TTFT = sim.FixedDist(0.001)
	cfg.TokenTime = sim.FixedDist(0.001)
	cfg.OutputTokens = sim.FixedDist(2)
	cfg.PrefillPerToken = perToken
	// 1,000 + 8 tokens: prompts of 1,008, whose 4,000-character prefix is 62
	// whole 64-character blocks (3,968 characters, 992 tokens).
	spec := PrefixSpec{PrefixTokens: 1000, Groups: 2, Choice: GroupRoundRobin, SuffixTokens: 8}
	c, err := protocol.NewClient(protocol.ClientOptions{Timeouts: protocol.Timeouts{Total: 30 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseIdleConnections()
	for _, api := range protocol.Names() {
		t.Run(api, func(t *testing.T) {
			s, base := testutil.ServeSim(t, cfg)
			a, _ := protocol.Lookup(api)
			g := mustPrefixGen(t, spec, 11, 12)
			send := func(p PrefixPrompt) (cached int, ttft time.Duration) {
				t.Helper()
				l := ledger.New(time.Now())
				rec := l.Plan(ledger.Meta{Target: "sim"}, l.Now())
				res := c.Do(context.Background(), protocol.Target{Base: base, Adapter: a},
					protocol.Params{Model: "m", Messages: p.Messages, MaxTokens: 2}, rec, l.Now, func() { l.MarkDispatched(rec) })
				// The completions adapter joins the two messages with a newline: 1,009.
				if res.Outcome != ledger.OK || rec.Usage.Prompt < 1008 || rec.Usage.Prompt > 1009 {
					t.Fatalf("result %+v, usage %+v: want ok with 1,008 prompt tokens", res, rec.Usage)
				}
				n, src, ok := rec.CachedPromptTokens()
				if !ok || src != ledger.CacheFromUsage {
					t.Fatalf("cached tokens unknown (%q): the simulator always reports them", src)
				}
				d, _ := rec.TTFTFromDispatch()
				return n, d
			}
			var warm, cold []time.Duration
			for i := range 8 {
				n, d := send(g.Shared())
				want := 992
				if i < spec.Groups {
					want = 0 // the group's first request fills the cache
				} else {
					warm = append(warm, d)
				}
				if n != want {
					t.Errorf("shared request %d: %d cached tokens, want %d", i, n, want)
				}
				if n, d := send(g.Cold()); n != 0 {
					t.Errorf("cold twin %d: %d cached tokens, want 0", i, n)
				} else {
					cold = append(cold, d)
				}
			}
			slices.Sort(warm)
			slices.Sort(cold)
			coldPrefill := 1008 * perToken
			if cold[0] < coldPrefill {
				t.Errorf("fastest cold twin's TTFT %v is below its configured prefill %v", cold[0], coldPrefill)
			}
			if mw, mc := warm[len(warm)/2], cold[len(cold)/2]; mw >= mc {
				t.Errorf("median TTFT warm %v, cold %v: the cache bought nothing", mw, mc)
			} else {
				t.Logf("median TTFT warm %v, cold %v: speedup %.1f", mw, mc, float64(mc)/float64(mw))
			}

			// A deploy that lost the cache: nothing is reused any more.
			off := false
			if _, err := s.Update(sim.Update{PrefixCache: &off}); err != nil {
				t.Fatal(err)
			}
			var offShared, offCold []time.Duration
			for i := range 5 {
				n, d := send(g.Shared())
				if n != 0 {
					t.Errorf("with the cache off, shared request %d: %d cached tokens", i, n)
				}
				offShared = append(offShared, d)
				_, d = send(g.Cold())
				offCold = append(offCold, d)
			}
			// The speedup collapses to about 1: both pay the whole prefill.
			slices.Sort(offShared)
			slices.Sort(offCold)
			ms, mc := offShared[len(offShared)/2], offCold[len(offCold)/2]
			if offShared[0] < coldPrefill || ms > 2*mc || mc > 2*ms {
				t.Errorf("with the cache off: median TTFT shared %v, cold %v (fastest shared %v): want both at least %v and within a factor 2",
					ms, mc, offShared[0], coldPrefill)
			} else {
				t.Logf("cache off: median TTFT shared %v, cold %v: speedup %.2f", ms, mc, float64(mc)/float64(ms))
			}
		})
	}
}
