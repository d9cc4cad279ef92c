package deploy

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/llmprobe/llmprobe/internal/testutil"
)

// probeAlerts is the rule block of docs/probe-endpoint.md that alerts on
// /probe.
func probeAlerts(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, "docs", "probe-endpoint.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	start := strings.Index(doc, "```yaml\ngroups:\n  - name: llm-probe\n")
	if start < 0 {
		t.Fatal("docs/probe-endpoint.md: no ```yaml block of the llm-probe rule group")
	}
	doc = doc[start+len("```yaml\n"):]
	end := strings.Index(doc, "```")
	if end < 0 {
		t.Fatal("docs/probe-endpoint.md: the rule block does not end")
	}
	return doc[:end]
}

// probeAlertsTest: target a succeeds throughout; b's probes fail from
// minute 10 (probe_success 0); c is mistyped, so every scrape of it is
// refused (up 0, no probe_success) and llmprobe counts the refusals.
const probeAlertsTest = `rule_files: [probe.rules.yml]
evaluation_interval: 1m
tests:
  - interval: 1m
    input_series:
      - series: 'probe_success{job="llm-probe", instance="a"}'
        values: '1x30'
      - series: 'up{job="llm-probe", instance="a"}'
        values: '1x30'
      - series: 'probe_success{job="llm-probe", instance="b"}'
        values: '1x9 0x20'
      - series: 'up{job="llm-probe", instance="b"}'
        values: '1x30'
      - series: 'up{job="llm-probe", instance="c"}'
        values: '_x9 0x20'
      - series: 'llmprobe_probe_refused_total{job="llmprobe", instance="llmprobe:9464", reason="target_not_allowed"}'
        values: '0x9 1+1x20'
      - series: 'llmprobe_probe_refused_total{job="llmprobe", instance="llmprobe:9464", reason="module_unknown"}'
        values: '0x30'
    alert_rule_test:
      - eval_time: 5m
        alertname: LLMProbeFailed
        exp_alerts: []
      - eval_time: 5m
        alertname: LLMProbeRefused
        exp_alerts: []
      - eval_time: 15m
        alertname: LLMProbeFailed
        exp_alerts:
          - exp_labels: {severity: page, job: llm-probe, instance: b}
            exp_annotations:
              summary: '/probe of b failed or was refused (Status → Targets shows the refusal)'
          - exp_labels: {severity: page, job: llm-probe, instance: c}
            exp_annotations:
              summary: '/probe of c failed or was refused (Status → Targets shows the refusal)'
      - eval_time: 15m
        alertname: LLMProbeRefused
        exp_alerts:
          - exp_labels: {severity: ticket, job: llmprobe, instance: 'llmprobe:9464', reason: target_not_allowed}
            exp_annotations:
              summary: 'llmprobe llmprobe:9464 refused /probe scrapes: target_not_allowed'
`

// TestProbeAlertsInDocs: the alerts docs/probe-endpoint.md gives for
// /probe fire for a failed probe and a refused one alike (a refused scrape
// leaves no probe_success series), say why a scrape was refused, and stay
// silent for a successful probe.
func TestProbeAlertsInDocs(t *testing.T) {
	rules := probeAlerts(t)
	for _, want := range []string{"probe_success", "llmprobe_probe_refused_total"} {
		if !strings.Contains(rules, want) {
			t.Errorf("the /probe alerts do not read %s", want)
		}
	}
	bin := testutil.Promtool(t, "check the /probe alerts of docs/probe-endpoint.md")
	dir := t.TempDir()
	for name, body := range map[string]string{"probe.rules.yml": rules, "probe_test.yml": probeAlertsTest} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{{"check", "rules", "probe.rules.yml"}, {"test", "rules", "probe_test.yml"}} {
		cmd := exec.Command(bin, args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
}
