package deploy

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/llmprobe/llmprobe/internal/testutil"
)

// promtool is testutil.Promtool for these tests.
func promtool(t *testing.T) string {
	t.Helper()
	return testutil.Promtool(t, "check the global rules of docs/scale.md")
}

// globalRules is the YAML block of docs/scale.md's section on regions that
// holds the global recording rules.
func globalRules(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, "docs", "scale.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	i := strings.Index(doc, "## Regions in Prometheus and Thanos")
	if i < 0 {
		t.Fatal("docs/scale.md: no section \"Regions in Prometheus and Thanos\"")
	}
	doc = doc[i:]
	start := strings.Index(doc, "```yaml\ngroups:")
	if start < 0 {
		t.Fatal("docs/scale.md: no ```yaml block of rule groups in the regions section")
	}
	doc = doc[start+len("```yaml\n"):]
	end := strings.Index(doc, "```")
	if end < 0 {
		t.Fatal("docs/scale.md: the rule block does not end")
	}
	return doc[:end]
}

// globalTest: two regions, the first a fleet of two shards (one failing 10%
// of its baseline requests sent), the second one prober at a tenth of the rate, all good.
// Each region's rules sum its shards; the global rules sum the regions: the
// global error ratio is a ratio of sums (360 bad of 7920, 0.045), not the
// mean of the regions' ratios (0.025).
const globalTest = `rule_files:
  - regional.rules.yml
  - global.rules.yml
evaluation_interval: 1m
tests:
  - interval: 1m
    input_series:
      - series: 'llmprobe_requests_total{job="llmprobe", instance="a0", region="eu", target="t", class="chat", traffic="baseline", during="none", outcome="ok", reason="stop"}'
        values: '0+54x120'
      - series: 'llmprobe_requests_total{job="llmprobe", instance="a0", region="eu", target="t", class="chat", traffic="baseline", during="none", outcome="http_error", reason="server_error"}'
        values: '0+6x120'
      - series: 'llmprobe_requests_total{job="llmprobe", instance="a1", region="eu", target="t", class="chat", traffic="baseline", during="none", outcome="ok", reason="stop"}'
        values: '0+60x120'
      - series: 'llmprobe_requests_total{job="llmprobe", instance="b0", region="us", target="t", class="chat", traffic="baseline", during="none", outcome="ok", reason="stop"}'
        values: '0+12x120'
    promql_expr_test:
      - expr: round(llmprobe:sli_availability_errors:ratio_rate1h, 0.001)
        eval_time: 120m
        exp_samples:
          - labels: '{region="eu", target="t", class="chat"}'
            value: 0.05
          - labels: '{region="us", target="t", class="chat"}'
            value: 0
      - expr: round(llmprobe:global_sli_availability_errors:ratio_rate1h, 0.001)
        eval_time: 120m
        exp_samples:
          - labels: '{target="t", class="chat"}'
            value: 0.045
      - expr: llmprobe:global_sli_availability_events:increase1h
        eval_time: 120m
        exp_samples:
          - labels: 'llmprobe:global_sli_availability_events:increase1h{target="t", class="chat"}'
            value: 7920
`

// TestGlobalRulesInDocs: the global recording rules docs/scale.md gives
// for a view over several regions parse, and sum the regions' recorded
// SLIs into ratios of sums, on top of the shipped regional rules.
func TestGlobalRulesInDocs(t *testing.T) {
	bin := promtool(t)
	dir := t.TempDir()
	regional, err := os.ReadFile(filepath.Join(root, "alerts", "llmprobe.rules.yml"))
	if err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string]string{
		"regional.rules.yml": string(regional),
		"global.rules.yml":   globalRules(t),
		"global_test.yml":    globalTest,
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{{"check", "rules", "global.rules.yml"}, {"test", "rules", "global_test.yml"}} {
		cmd := exec.Command(bin, args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
}
