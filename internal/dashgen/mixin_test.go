package dashgen

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// exampleMixin is the documented example configuration, tested with promtool
// in TestPromtoolMixinExample.
var exampleMixin = filepath.Join(repoRoot, "alerts", "mixin", "example.yaml")

func loadExample(t *testing.T) RuleOptions {
	t.Helper()
	m, err := LoadMixin(exampleMixin)
	if err != nil {
		t.Fatal(err)
	}
	o := DefaultRuleOptions()
	o.Mixin = m
	return o
}

func TestParseMixin(t *testing.T) {
	tests := []struct {
		name, in string
		wantErr  string // "" = valid
	}{
		{"empty file: the defaults", "", ""},
		{"JSON", `{"runbook_url_pattern": "https://r.example/%s", "severity": {"LLMProbeAbsent": "critical"}}`, ""},
		{"selector with regexp and trailing comma", `selector: 'job=~"llmprobe|probe", namespace!="dev",'`, ""},
		{"unknown key", "runbook_base: https://x", "runbook_base"},
		{"pattern without %s", "runbook_url_pattern: https://r.example/", "exactly one %s"},
		{"pattern with two %s", "runbook_url_pattern: https://r.example/%s#%s", "exactly one %s"},
		{"selector not matchers", "selector: llmprobe", "label matchers"},
		{"selector unquoted value", "selector: job=llmprobe", "label matchers"},
		{"selector on the metric name", `selector: '__name__=~"llmprobe.*"'`, "__name__"},
		{"severity of an unknown alert", "severity: {LLMProbeCapacityRegresion: page}", `no alert "LLMProbeCapacityRegresion"`},
		{"empty severity", "severity: {LLMProbeAbsent: ''}", "empty"},
		{"extra label overriding severity", "extra_labels: {severity: critical}", "set by the rules"},
		{"extra label overriding target", "extra_labels: {target: x}", "set by the rules"},
		{"extra label not a name", "extra_labels: {'team-a': x}", "not a label name"},
		{"certificate thresholds", "certificate_expiry: {ticket: 21d, page: 3d}", ""},
		{"certificate threshold not a duration", "certificate_expiry: {ticket: soon}", "soon"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseMixin([]byte(tt.in))
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("ParseMixin: %v", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("ParseMixin error = %v, want one containing %q", err, tt.wantErr)
			}
		})
	}
}

// TestMixinRules: the example configuration's rules carry its severities,
// extra labels and runbook pattern on every alert, and its selector on every
// series the prober exports; the defaults carry none of it.
func TestMixinRules(t *testing.T) {
	o := loadExample(t)
	f, err := Rules(o)
	if err != nil {
		t.Fatal(err)
	}
	defaults := DefaultSeverity()
	_, certPage := o.certThresholds()
	latePage := "< " + strconv.FormatFloat(certPage.Seconds(), 'f', -1, 64)
	alerts, selected := map[string]bool{}, 0
	for _, g := range f.Groups {
		for _, r := range g.Rules {
			selected += checkSelected(t, r, o.Mixin.Selector)
			if r.Alert == "" {
				continue
			}
			alerts[r.Alert] = true
			want := defaults[r.Alert]
			if s, ok := o.Mixin.Severity[r.Alert]; ok {
				want = s
			}
			if r.Alert == "LLMProbeCertificateExpiringSoon" && strings.HasSuffix(r.Expr, latePage) {
				want = "page" // the late tier always pages
			}
			if got := r.Labels["severity"]; got != want {
				t.Errorf("%s: severity %q, want %q", r.Alert, got, want)
			}
			if got := r.Labels["team"]; got != "inference-sre" {
				t.Errorf("%s: team label %q, want the extra label inference-sre", r.Alert, got)
			}
			if got, want := r.Annotations["runbook_url"], "https://runbooks.example.com/llmprobe/"+strings.ToLower(r.Alert); got != want {
				t.Errorf("%s: runbook_url %q, want %q", r.Alert, got, want)
			}
		}
	}
	if selected < 20 {
		t.Errorf("only %d selectors of exported series found in the rules", selected)
	}
	if len(alerts) != len(defaults) {
		t.Errorf("%d alerts, DefaultSeverity names %d", len(alerts), len(defaults))
	}
}

// exported matches a series the prober exports (or up) with its matchers.
var exported = regexp.MustCompile(`\b(llmprobe_[a-z0-9_]+|up)\b(\{[^}]*\})?`)

// checkSelected: every selector of an exported series in r's expression
// starts with sel; it returns how many it checked.
func checkSelected(t *testing.T, r Rule, sel string) int {
	t.Helper()
	ms := exported.FindAllStringSubmatch(r.Expr, -1)
	for _, m := range ms {
		if !strings.HasPrefix(m[2], "{"+sel) {
			t.Errorf("%s%s: %s without the selector %s", r.Record, r.Alert, m[0], sel)
		}
	}
	return len(ms)
}

// TestMixinDashboards: with a selector, every dashboard query of a prober's
// series and the job, target and class variables select it.
func TestMixinDashboards(t *testing.T) {
	o := loadExample(t)
	scoped := o.Mixin.jobSel()
	for _, b := range boards(o) {
		for _, q := range b.queries() {
			if strings.Contains(q.Expr, selJob) && !strings.Contains(q.Expr, scoped) {
				t.Errorf("%s / %s: job selector without the mixin's selector: %s", q.Dashboard, q.Panel, q.Expr)
			}
		}
	}
	ds, err := DashboardsFor(o)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range ds {
		s := string(d.JSON)
		for _, v := range []string{
			`label_values(llmprobe_build_info{job=\"llmprobe\", namespace=\"inference\"}, job)`,
			`label_values(llmprobe_requests_planned_total{job=\"llmprobe\", namespace=\"inference\", job=~\"$job\"}, target)`,
		} {
			if !strings.Contains(s, v) {
				t.Errorf("%s: no variable query %s", d.File, v)
			}
		}
	}
}

// TestDefaultMixinIsShipped: the zero Mixin renders the shipped defaults
// (DefaultRunbookURLPattern, DefaultSeverity, no selector, no extra label),
// and an empty configuration file is the zero Mixin.
func TestDefaultMixinIsShipped(t *testing.T) {
	m, err := ParseMixin(nil)
	if err != nil {
		t.Fatal(err)
	}
	o := DefaultRuleOptions()
	o.Mixin = m
	got, err := FilesFor(o)
	if err != nil {
		t.Fatal(err)
	}
	want, err := Files()
	if err != nil {
		t.Fatal(err)
	}
	for name := range want {
		if string(got[name]) != string(want[name]) {
			t.Errorf("%s: an empty configuration differs from the shipped defaults", name)
		}
	}
}

// TestPromtoolMixinExample generates the rules of the example configuration
// and runs promtool check rules and the example's rule tests on them.
func TestPromtoolMixinExample(t *testing.T) {
	bin := promtool(t)
	rules, err := RenderRules(loadExample(t))
	if err != nil {
		t.Fatal(err)
	}
	tests, err := os.ReadFile(filepath.Join(repoRoot, "alerts", "mixin", "example_test.yml"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for name, b := range map[string][]byte{"llmprobe.rules.yml": rules, "example_test.yml": tests} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	runPromtool(t, bin, dir, "check", "rules", "llmprobe.rules.yml")
	runPromtool(t, bin, dir, "test", "rules", "example_test.yml")
}
