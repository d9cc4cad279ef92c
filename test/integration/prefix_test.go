package integration

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/testutil"
)

// prefixConfig: a shared-prefix class "agent" (one 4,000-token prefix
// group before a unique 16-token suffix) and the cold twin llmprobe
// generates for it, "agent-cold" (identical lengths, a prefix shared with
// nothing), paired by the rules through the twin's name. 2 req/s each (the
// twin's weight is the class's); a 1 s TTFT gate that the cache's loss
// (≈ 50 → 250 ms) does not break. No ladder: the deploy changes nothing but
// the cache.
const prefixConfig = `
admin:
  listen: "ADMIN_ADDR"
log: {level: info, format: json}
drain: {timeout: 5s}
targets:
  - name: sim
    url: http://SIM_ADDR/v1
    api: openai-chat
    model: itest-model
    max_in_flight: 512
    timeouts: {connect: 2s, headers: 5s, first_content: 5s, idle: 5s, total: 10s}
    baseline: {rate: 4, arrival: poisson, seed: 11}
    identity: {response_header: X-Model-Version, poll_every: 1s}
    classes:
      - name: agent
        prefix: {tokens: 4000, groups: 1}
        input: {dist: fixed, value: 16}
        output: {dist: fixed, value: 16}
        gates: {ttft: 1s}
    # No ladder; its max_lag_p99 also judges the live generator: room for
    # the other tests on the same cores (this test is about the alerts).
    ladder: {enabled: false, max_lag_p99: 1s}
`

// TestDeployPrefixCacheLost: a deploy that drops the target's prefix cache
// (the simulator's POST /admin/state {"prefix_cache": false}, no version
// change). The speedup of "agent" over its cold twin collapses from ≈ 5 to
// ≈ 1 and its cached-token fraction from ≈ 1 to 0, so
// LLMProbePrefixCacheRegression fires on both signals. As documented in
// alerts/README.md, the other alerts stay quiet: the slower first tokens
// stay within the class's gate (no burn-rate alert), and no ladder runs
// (the identity did not change), so no capacity alert can.
func TestDeployPrefixCacheLost(t *testing.T) {
	st := startDeployStackWith(t, prefixConfig, false, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()

	const speedup = `llmprobe:prefix_cache_speedup:p50_rate1h{target="sim",class="agent"}`
	const fraction = `llmprobe:prefix_cache_cached_fraction:ratio_rate1h{target="sim"}`
	testutil.EventuallyOK(t, 120*time.Second, "the speedup recorded", func() error {
		_, err := queryOne(ctx, st.promURL, speedup)
		return err
	})
	// Let the speedup build its reference (the scaled 1-day median) well
	// beyond the time the alert needs after the deploy.
	time.Sleep(90 * time.Second)
	before := st.value(ctx, t, speedup)
	p95 := st.value(ctx, t, `llmprobe:prefix_cache_speedup:p95_rate1h{target="sim",class="agent"}`)
	fractions := st.byClass(ctx, t, fraction)
	t.Logf("cache on: speedup p50 %.2f, p95 %.2f; cached fraction %v", before, p95, fractions)
	if before < 2 {
		t.Fatalf("speedup %.2f with the cache on: want ≥ 2 (cold ≈ 50 ms + 4,000 × 50 µs, cached ≈ 50 ms)", before)
	}
	if f := fractions["agent"]; f < 0.9 {
		t.Errorf("cached fraction of agent %.3f, want ≥ 0.9 (the whole prompt but its last block)", f)
	}
	if f := fractions["agent-cold"]; f > 0.01 {
		t.Errorf("cached fraction of agent-cold %.3f: the cold twin shares a prefix", f)
	}
	if fired := st.everFired(ctx, t, "LLMProbePrefixCacheRegression"); len(fired) > 0 {
		t.Fatalf("fired before the deploy: %v", fired)
	}

	deployed := st.deploy(t, `{"prefix_cache": false}`)
	seen := map[string]bool{}
	testutil.EventuallyOK(t, 150*time.Second, "LLMProbePrefixCacheRegression firing on both signals", func() error {
		got, err := st.firing(ctx, "LLMProbePrefixCacheRegression")
		if err != nil {
			return err
		}
		for _, g := range got {
			if g["target"] == "sim" && g["class"] == "agent" && g["severity"] == "ticket" && !seen[g["signal"]] {
				seen[g["signal"]] = true
				t.Logf("LLMProbePrefixCacheRegression firing %v after the deploy: %v", time.Since(deployed).Round(time.Second), g)
			}
		}
		if !seen["speedup"] || !seen["cached_fraction"] {
			return fmt.Errorf("firing: %v", got)
		}
		return nil
	})
	after := st.value(ctx, t, speedup)
	t.Logf("cache off: speedup p50 %.2f; cached fraction %v", after, st.byClass(ctx, t, fraction))
	if after < 0.7 || after > 1.4 {
		t.Errorf("speedup %.2f with the cache off: want ≈ 1", after)
	}
	for _, r := range []string{"LLMProbe.*BurnRate.*", "LLMProbeCapacity.*"} {
		if fired := st.everFired(ctx, t, r); len(fired) > 0 {
			t.Errorf("%s fired for a cache loss within the gates and no ladder: %v", r, fired)
		}
	}
	if fired := st.everFired(ctx, t, "LLMProbeGeneratorInvalid"); len(fired) > 0 {
		t.Logf("the prober's generator was judged invalid at some time (a busy host): %v", fired)
	}
}

// queryOne runs an instant query that must return at least one sample.
func queryOne(ctx context.Context, promURL, q string) (promResult, error) {
	res, err := query(ctx, promURL, q)
	if err != nil {
		return promResult{}, err
	}
	if len(res) == 0 {
		return promResult{}, fmt.Errorf("%s: no data yet", q)
	}
	return res[0], nil
}

// byClass runs an instant query and returns its values by class.
func (st deployStack) byClass(ctx context.Context, t *testing.T, q string) map[string]float64 {
	t.Helper()
	res, err := query(ctx, st.promURL, q)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, r := range res {
		v, _ := scalarOf(r)
		out[r.Metric["class"]] = v
	}
	return out
}
