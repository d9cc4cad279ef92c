package dashgen

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/llmprobe/llmprobe/internal/testutil"
)

// promtool is testutil.Promtool for these tests.
func promtool(t *testing.T) string {
	t.Helper()
	return testutil.Promtool(t, "run the rule tests")
}

func runPromtool(t *testing.T, bin, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("promtool %v in %s: %v\n%s", args, dir, err, out)
	}
}

func TestPromtoolCheckRules(t *testing.T) {
	bin := promtool(t)
	runPromtool(t, bin, filepath.Join(repoRoot, "alerts"), "check", "rules", "llmprobe.rules.yml")
}

// TestPromtoolRuleUnitTests runs every alerts/tests/*_test.yml (each alert
// firing and staying quiet). The files run in parallel: the 3-day and 7-day
// fixtures take several seconds each.
func TestPromtoolRuleUnitTests(t *testing.T) {
	bin := promtool(t)
	if testing.Short() {
		t.Skip("rule unit tests take ~40 s of CPU; skipped in -short mode")
	}
	dir := filepath.Join(repoRoot, "alerts")
	files, err := filepath.Glob(filepath.Join(dir, "tests", "*_test.yml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no rule tests in alerts/tests")
	}
	for _, f := range files {
		rel, err := filepath.Rel(dir, f)
		if err != nil {
			t.Fatal(err)
		}
		t.Run(filepath.Base(f), func(t *testing.T) {
			t.Parallel()
			runPromtool(t, bin, dir, "test", "rules", rel)
		})
	}
}

// TestPromtoolDashboardQueriesParse checks every dashboard query (variables
// substituted) is valid PromQL, by loading them as recording rules: those
// of the shipped dashboards and of the example mixin configuration's.
func TestPromtoolDashboardQueriesParse(t *testing.T) {
	bin := promtool(t)
	for name, o := range map[string]RuleOptions{"shipped": DefaultRuleOptions(), "example mixin": loadExample(t)} {
		t.Run(name, func(t *testing.T) {
			var f RuleFile
			g := RuleGroup{Name: "dashboard-queries"}
			for _, b := range boards(o) {
				for _, q := range b.queries() {
					g.Rules = append(g.Rules, Rule{Record: fmt.Sprintf("dashgen:query_%d", len(g.Rules)), Expr: Substitute(q.Expr, DefaultVariables())})
				}
			}
			f.Groups = append(f.Groups, g)
			body, err := encodeYAML(f)
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "queries.yml"), body, 0o644); err != nil {
				t.Fatal(err)
			}
			runPromtool(t, bin, dir, "check", "rules", "queries.yml")
		})
	}
}
