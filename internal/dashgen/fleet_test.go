package dashgen

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fleetQuery is the expression (variables substituted) of the fleet view's
// panel title, query refID.
func fleetQuery(t *testing.T, title, refID string) string {
	t.Helper()
	for _, q := range Queries() {
		if q.Dashboard == UIDFleet && q.Panel == title && q.RefID == refID {
			return Substitute(q.Expr, DefaultVariables())
		}
	}
	t.Fatalf("fleet view: no query %s of panel %q", refID, title)
	return ""
}

// TestFleetViewByShard evaluates the fleet view's per-shard and fleet-wide
// queries with promtool on a fleet of two: each shard's series carry its
// shard index (joined from llmprobe_fleet_info), the fleet's planned rate is
// the sum of the shards', a shard that stopped being scraped (its series
// stale) is still listed, by its index, with up = 0, and a prober that
// changed its place within the hour is listed once, by its place now.
func TestFleetViewByShard(t *testing.T) {
	bin := promtool(t)
	exprs := map[string]string{
		"shards":    fleetQuery(t, "Shards", "A"),
		"fleetRate": fleetQuery(t, "Planned rate: the fleet and each shard", "A"),
		"shardRate": fleetQuery(t, "Planned rate: the fleet and each shard", "B"),
		"valid":     fleetQuery(t, "Generator valid by shard", "A"),
	}
	for name, e := range exprs {
		if !strings.Contains(e, "llmprobe_fleet_info") && name != "fleetRate" {
			t.Errorf("%s: %s: not joined to llmprobe_fleet_info", name, e)
		}
	}
	// Shard 1 (instance b) is scraped for 30 minutes, then not at all: its
	// up is 0 and its other series end.
	test := fmt.Sprintf(`rule_files: []
evaluation_interval: 1m
tests:
  - interval: 15s
    input_series:
      - series: 'up{job="llmprobe", instance="a"}'
        values: '1x240'
      - series: 'up{job="llmprobe", instance="b"}'
        values: '1x120 0x120'
      - series: 'llmprobe_fleet_info{job="llmprobe", instance="a", shard="0", shards="2"}'
        values: '1x240'
      # Instance c was shard 0 of a fleet of 3 until 30m, then restarted as
      # shard 2 of 3 (its series before and after within the hour).
      - series: 'up{job="llmprobe", instance="c"}'
        values: '1x240'
      - series: 'llmprobe_fleet_info{job="llmprobe", instance="c", shard="0", shards="3"}'
        values: '1x120'
      - series: 'llmprobe_fleet_info{job="llmprobe", instance="c", shard="2", shards="3"}'
        values: '_x120 1x120'
      - series: 'llmprobe_fleet_info{job="llmprobe", instance="b", shard="1", shards="2"}'
        values: '1x120'
      - series: 'llmprobe_requests_planned_total{job="llmprobe", instance="a", target="t", class="chat", traffic="baseline", during="none"}'
        values: '0+15x240'
      - series: 'llmprobe_requests_planned_total{job="llmprobe", instance="b", target="t", class="chat", traffic="baseline", during="none"}'
        values: '0+15x120'
      - series: 'llmprobe_generator_valid{job="llmprobe", instance="a", target="t"}'
        values: '1x240'
      - series: 'llmprobe_generator_valid{job="llmprobe", instance="b", target="t"}'
        values: '0x120'
    promql_expr_test:
      - expr: %[1]s
        eval_time: 20m
        exp_samples:
          - labels: '{job="llmprobe", instance="a", shard="0", shards="2"}'
            value: 1
          - labels: '{job="llmprobe", instance="b", shard="1", shards="2"}'
            value: 1
          - labels: '{job="llmprobe", instance="c", shard="0", shards="3"}'
            value: 1
      - expr: %[1]s
        eval_time: 50m
        exp_samples:
          - labels: '{job="llmprobe", instance="a", shard="0", shards="2"}'
            value: 1
          - labels: '{job="llmprobe", instance="b", shard="1", shards="2"}'
            value: 0
          - labels: '{job="llmprobe", instance="c", shard="2", shards="3"}'
            value: 1
      - expr: %[2]s
        eval_time: 20m
        exp_samples:
          - labels: '{target="t", class="chat"}'
            value: 2
      - expr: %[3]s
        eval_time: 20m
        exp_samples:
          - labels: '{job="llmprobe", instance="a", target="t", shard="0"}'
            value: 1
          - labels: '{job="llmprobe", instance="b", target="t", shard="1"}'
            value: 1
      - expr: %[4]s
        eval_time: 20m
        exp_samples:
          - labels: '{job="llmprobe", instance="a", target="t", shard="0"}'
            value: 1
          - labels: '{job="llmprobe", instance="b", target="t", shard="1"}'
            value: 0
`, yamlQuote(exprs["shards"]), yamlQuote("round("+exprs["fleetRate"]+", 0.001)"), yamlQuote("round("+exprs["shardRate"]+", 0.001)"), yamlQuote(exprs["valid"]))
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "fleet_test.yml"), []byte(test), 0o600); err != nil {
		t.Fatal(err)
	}
	runPromtool(t, bin, dir, "test", "rules", "fleet_test.yml")
}

// yamlQuote is s as a single-quoted YAML scalar.
func yamlQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }
