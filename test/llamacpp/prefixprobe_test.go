package llamacpp

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/report"
	"github.com/llmprobe/llmprobe/internal/testutil"
)

// TestProbePrefixSpeedup (issue 21 part 5): `llmprobe probe` with a shared
// 1,000-token prefix (two groups, round robin) against llama-server, whose
// prompt cache is on by default, sends the class and its generated cold
// twin "default-cold" and reports a prefix-cache speedup above 1 and a
// cached-token fraction above 0 for the shared class (read from the
// server's usage.prompt_tokens_details.cached_tokens, or timings.cache_n),
// the cold twin's far below it. The cached fraction is a count the server
// reports and holds on any host; the speedup is a latency ratio and is not
// judged when the generator was late because the host lacked CPU.
func TestProbePrefixSpeedup(t *testing.T) {
	srv := testutil.StartLlamaCpp(t) // skips without the engine (RequireLlamaCpp)
	const d = 20 * time.Second
	stdout, stderr, code := testutil.Run(t, d+120*time.Second, testutil.Env(), binary(t), "probe",
		"--url", srv.URL()+"/v1", "--model", "tiny", "--api", "openai-chat",
		"--prefix-tokens", "1000", "--prefix-groups", "2", "--prompt-tokens", "16", "--max-tokens", "8",
		"--rate", "2", "--arrival", "constant", "--duration", d.String(), "--seed", "5", "--drain", "60s", "--json")
	var rep report.Probe
	if err := json.Unmarshal(stdout, &rep); err != nil {
		t.Fatalf("probe --json printed no report (exit %d): %v\nstderr:\n%s", code, err, testutil.Tail(string(stderr), 3000))
	}
	hostLate := false
	switch code {
	case 0:
	case 4:
		hostLate = len(rep.InvalidCauses) > 0
		for _, c := range rep.InvalidCauses {
			hostLate = hostLate && (c.Cause == "host_starved" || c.Cause == "cgroup_throttled")
		}
		if !hostLate {
			t.Fatalf("generator invalid without a host cause: %s", strings.Join(rep.InvalidReasons, "; "))
		}
	default:
		t.Fatalf("probe exit %d; stderr:\n%s", code, testutil.Tail(string(stderr), 3000))
	}
	if len(rep.PrefixCache) != 1 {
		t.Fatalf("prefix_cache: %+v", rep.PrefixCache)
	}
	p := rep.PrefixCache[0]
	out, _ := json.Marshal(p)
	t.Logf("prefix_cache: %s", out)
	if p.Class != "default" || p.ColdClass != "default-cold" {
		t.Errorf("classes %q / %q", p.Class, p.ColdClass)
	}
	if p.CachedTTFT.Count < p.MinSamples || p.ColdTTFT.Count < p.MinSamples || !p.Judged {
		t.Fatalf("not judged: %d cached and %d cold TTFTs (min %d); outcomes %v", p.CachedTTFT.Count, p.ColdTTFT.Count, p.MinSamples, rep.Outcomes)
	}
	shared, cold := p.CachedTokens.Fraction, p.ColdCachedTokens.Fraction
	if shared == nil || *shared <= 0 {
		t.Errorf("cached-token fraction %v (%d of %d tokens, %d records): want reported and above 0", shared, p.CachedTokens.Cached, p.CachedTokens.Prompt, p.CachedTokens.Records)
	}
	if shared != nil && (cold == nil || *cold >= *shared/2) {
		t.Errorf("the cold twins' cached fraction %v is not far below the shared class's %v", cold, *shared)
	}
	if hostLate {
		t.Skipf("generator invalid with a host cause (%s): the speedup (p50 %v) is not judged", strings.Join(rep.InvalidReasons, "; "), *p.SpeedupP50)
	}
	if *p.SpeedupP50 <= 1 {
		t.Errorf("speedup p50 %.2f, want above 1 (cached TTFT p50 %.3fs, cold %.3fs)", *p.SpeedupP50, p.CachedTTFT.P50, p.ColdTTFT.P50)
	}
}
