package dashgen

import (
	"bytes"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// repoRoot is the repository root relative to this package's directory.
const repoRoot = "../.."

func TestGeneratedFilesUpToDate(t *testing.T) {
	files, err := Files()
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range files {
		got, err := os.ReadFile(filepath.Join(repoRoot, filepath.FromSlash(name)))
		if err != nil {
			t.Errorf("%s: %v (run go generate ./internal/dashgen)", name, err)
			continue
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs from the generator's output: run go generate ./internal/dashgen", name)
		}
	}
}

func TestGeneratorIsDeterministic(t *testing.T) {
	a, err := Files()
	if err != nil {
		t.Fatal(err)
	}
	b, err := Files()
	if err != nil {
		t.Fatal(err)
	}
	for name := range a {
		if !bytes.Equal(a[name], b[name]) {
			t.Errorf("%s: two runs of the generator differ", name)
		}
	}
}

// jsonDashboard is the part of Grafana's dashboard JSON the tests inspect.
type jsonDashboard struct {
	UID        string      `json:"uid"`
	Title      string      `json:"title"`
	Panels     []jsonPanel `json:"panels"`
	Templating struct {
		List []struct {
			Name  string `json:"name"`
			Type  string `json:"type"`
			Query any    `json:"query"`
		} `json:"list"`
	} `json:"templating"`
	Annotations struct {
		List []struct {
			Name   string `json:"name"`
			Target struct {
				Expr string `json:"expr"`
			} `json:"target"`
		} `json:"list"`
	} `json:"annotations"`
}

type jsonPanel struct {
	Type        string `json:"type"`
	Title       string `json:"title"`
	Datasource  *struct{ UID string }
	FieldConfig *struct {
		Defaults struct {
			Unit string `json:"unit"`
		} `json:"defaults"`
	} `json:"fieldConfig"`
	Targets []struct {
		RefID      string `json:"refId"`
		Expr       string `json:"expr"`
		Instant    bool   `json:"instant"`
		Datasource *struct {
			UID string `json:"uid"`
		} `json:"datasource"`
	} `json:"targets"`
	GridPos struct{ H, W, X, Y int } `json:"gridPos"`
}

func loadDashboards(t *testing.T) map[string]jsonDashboard {
	t.Helper()
	ds, err := Dashboards()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]jsonDashboard{}
	for _, d := range ds {
		var jd jsonDashboard
		if err := json.Unmarshal(d.JSON, &jd); err != nil {
			t.Fatalf("%s: %v", d.File, err)
		}
		out[d.UID] = jd
	}
	return out
}

func TestDashboardsShape(t *testing.T) {
	ds := loadDashboards(t)
	for _, uid := range []string{UIDOverview, UIDCapacity, UIDHealth, UIDFleet} {
		if _, ok := ds[uid]; !ok {
			t.Errorf("dashboard %q missing", uid)
		}
	}
	if len(ds) != 4 {
		t.Errorf("got %d dashboards, want 4", len(ds))
	}
	for uid, d := range ds {
		var vars []string
		for _, v := range d.Templating.List {
			vars = append(vars, v.Name)
		}
		for _, want := range []string{"datasource", "target", "class"} {
			if !slices.Contains(vars, want) {
				t.Errorf("%s: no %q variable (have %v)", uid, want, vars)
			}
		}
		seen := map[string]bool{}
		for _, p := range d.Panels {
			if p.Type == "row" {
				continue
			}
			if seen[p.Title] {
				t.Errorf("%s: duplicate panel title %q", uid, p.Title)
			}
			seen[p.Title] = true
			if p.FieldConfig == nil || p.FieldConfig.Defaults.Unit == "" {
				t.Errorf("%s / %s: no unit", uid, p.Title)
			}
			if p.Datasource == nil || p.Datasource.UID != "${datasource}" {
				t.Errorf("%s / %s: panel datasource is not the datasource variable", uid, p.Title)
			}
			if len(p.Targets) == 0 {
				t.Errorf("%s / %s: no queries", uid, p.Title)
			}
			for _, q := range p.Targets {
				if strings.TrimSpace(q.Expr) == "" {
					t.Errorf("%s / %s / %s: empty expression", uid, p.Title, q.RefID)
				}
				if q.Datasource == nil || q.Datasource.UID != "${datasource}" {
					t.Errorf("%s / %s / %s: query datasource is not the datasource variable", uid, p.Title, q.RefID)
				}
			}
			if p.GridPos.W == 0 || p.GridPos.H == 0 || p.GridPos.X+p.GridPos.W > 24 {
				t.Errorf("%s / %s: bad grid position %+v", uid, p.Title, p.GridPos)
			}
		}
	}
}

// TestQueriesMatchJSON checks that Queries lists exactly the queries in the
// rendered dashboards, in order.
func TestQueriesMatchJSON(t *testing.T) {
	ds := loadDashboards(t)
	var fromJSON []string
	for _, uid := range []string{UIDOverview, UIDCapacity, UIDHealth, UIDFleet} {
		for _, a := range ds[uid].Annotations.List {
			fromJSON = append(fromJSON, uid+"|"+AnnotationPrefix+a.Name+"|Anno|"+a.Target.Expr)
		}
		for _, p := range ds[uid].Panels {
			for _, q := range p.Targets {
				fromJSON = append(fromJSON, uid+"|"+p.Title+"|"+q.RefID+"|"+q.Expr)
			}
		}
	}
	var listed []string
	for _, q := range Queries() {
		listed = append(listed, q.Dashboard+"|"+q.Panel+"|"+q.RefID+"|"+q.Expr)
		switch q.Expect {
		case ExpectAlways, ExpectRules, ExpectLadder, ExpectMaybe:
		default:
			t.Errorf("%s / %s: unknown expectation %q", q.Dashboard, q.Panel, q.Expect)
		}
	}
	if !slices.Equal(fromJSON, listed) {
		t.Errorf("Queries() does not match the dashboard JSON:\njson:   %q\nlisted: %q", fromJSON, listed)
	}
}

var metricName = regexp.MustCompile(`\b(llmprobe[_:][a-zA-Z0-9_:]+)|\b(up|scrape_duration_seconds|go_sched_latencies_seconds_bucket|process_cpu_seconds_total)\{`)

// knownSeries is every series name the dashboards may read: the telemetry
// contract (with classic histogram suffixes), recording rules, scrape series.
func knownSeries(t *testing.T) map[string]bool {
	t.Helper()
	known := map[string]bool{}
	for _, m := range Metrics {
		known[m] = true
		for _, s := range []string{"_bucket", "_sum", "_count"} {
			known[m+s] = true
		}
	}
	for _, m := range ScrapeMetrics {
		known[m] = true
	}
	for _, m := range HostMetrics {
		known[m] = true
		known[m+"_bucket"] = true
	}
	f, err := Rules(DefaultRuleOptions())
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range f.Groups {
		for _, r := range g.Rules {
			if r.Record != "" {
				known[r.Record] = true
			}
		}
	}
	return known
}

func namesIn(expr string) []string {
	var out []string
	for _, m := range metricName.FindAllStringSubmatch(expr, -1) {
		if m[1] != "" {
			out = append(out, m[1])
		} else {
			out = append(out, m[2])
		}
	}
	return out
}

func TestQueriesReadOnlyKnownSeries(t *testing.T) {
	known := knownSeries(t)
	for _, q := range Queries() {
		names := namesIn(q.Expr)
		if len(names) == 0 {
			t.Errorf("%s / %s / %s: reads no known series: %s", q.Dashboard, q.Panel, q.RefID, q.Expr)
		}
		for _, n := range names {
			if !known[n] {
				t.Errorf("%s / %s / %s: unknown series %q", q.Dashboard, q.Panel, q.RefID, n)
			}
		}
	}
}

func TestRulesReadOnlyKnownSeries(t *testing.T) {
	known := knownSeries(t)
	f, err := Rules(DefaultRuleOptions())
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range f.Groups {
		for _, r := range g.Rules {
			for _, n := range namesIn(r.Expr) {
				if !known[n] {
					t.Errorf("rule %s%s: unknown series %q", r.Record, r.Alert, n)
				}
			}
		}
	}
}

func TestSubstitute(t *testing.T) {
	vars := map[string]string{"target": "a|b", "class": ".*", "__rate_interval": "1m", "__range": "1h"}
	tests := []struct{ in, want string }{
		{`rate(x{target=~"$target"}[$__rate_interval])`, `rate(x{target=~"a|b"}[1m])`},
		{`x{class=~"${class}"}[$__range]`, `x{class=~".*"}[1h]`},
		{`x{class=~"[[class]]"}`, `x{class=~".*"}`},
		{`x{y="$unknown"}`, `x{y="$unknown"}`},
	}
	for _, tt := range tests {
		if got := Substitute(tt.in, vars); got != tt.want {
			t.Errorf("Substitute(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	for _, q := range Queries() {
		if s := Substitute(q.Expr, DefaultVariables()); strings.Contains(s, "$") {
			t.Errorf("%s / %s: variable left after substitution: %s", q.Dashboard, q.Panel, s)
		}
	}
}

func TestRuleOptionsValidate(t *testing.T) {
	base := DefaultRuleOptions()
	tests := []struct {
		name   string
		mutate func(*RuleOptions)
		ok     bool
	}{
		{"defaults", func(*RuleOptions) {}, true},
		{"objective 1", func(o *RuleOptions) { o.AvailabilityObjective = 1 }, false},
		{"latency objective 0", func(o *RuleOptions) { o.LatencyObjective = 0 }, false},
		{"no guard", func(o *RuleOptions) { o.MinBadEvents = 0 }, false},
		{"fraction 1", func(o *RuleOptions) { o.CapacityFraction = 1 }, false},
		{"no gates", func(o *RuleOptions) { o.Gates = nil }, false},
		{"unsorted gates", func(o *RuleOptions) { o.Gates = []float64{1, 0.5} }, false},
		{"one gate", func(o *RuleOptions) { o.Gates = []float64{1} }, true},
		{"lag 0", func(o *RuleOptions) { o.DispatchLagP99 = 0 }, false},
		{"prefix fraction 0", func(o *RuleOptions) { o.PrefixCacheFraction = 0 }, false},
		{"prefix fraction 1", func(o *RuleOptions) { o.PrefixCacheFraction = 1 }, false},
		{"prefix without a sample guard", func(o *RuleOptions) { o.PrefixMinSamples = 0 }, false},
		{"time scale above 1", func(o *RuleOptions) { o.TimeScale = 2 }, false},
		{"negative time scale", func(o *RuleOptions) { o.TimeScale = -0.5 }, false},
		{"time scale 1/120", func(o *RuleOptions) { o.TimeScale = 1.0 / 120 }, true},
		{"time scale 0 means 1", func(o *RuleOptions) { o.TimeScale = 0 }, true},
	}
	for _, tt := range tests {
		o := base
		o.Gates = slices.Clone(base.Gates)
		tt.mutate(&o)
		_, err := Rules(o)
		if (err == nil) != tt.ok {
			t.Errorf("%s: Rules error = %v, want ok=%v", tt.name, err, tt.ok)
		}
	}
}

func TestRulesShape(t *testing.T) {
	f, err := Rules(DefaultRuleOptions())
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile(filepath.Join(repoRoot, "alerts", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	records := map[string]bool{}
	alerts := map[string]bool{}
	for _, g := range f.Groups {
		for _, r := range g.Rules {
			if r.Record != "" {
				records[r.Record] = true
				continue
			}
			alerts[r.Alert] = true
			for _, k := range []string{"summary", "description", "runbook_url"} {
				if r.Annotations[k] == "" {
					t.Errorf("alert %s: no %s annotation", r.Alert, k)
				}
			}
			if s := r.Labels["severity"]; s != "page" && s != "ticket" {
				t.Errorf("alert %s: severity %q", r.Alert, s)
			}
			if !bytes.Contains(readme, []byte("## "+r.Alert+"\n")) {
				t.Errorf("alert %s: no '## %s' runbook section in alerts/README.md", r.Alert, r.Alert)
			}
		}
	}
	for _, w := range SLIWindows {
		for _, rec := range []string{recAvailErrors(w), recLatencyErrors(w), recAvailBad(w), recLatencyBad(w)} {
			if !records[rec] {
				t.Errorf("no recording rule %s", rec)
			}
		}
	}
	for _, a := range []string{
		"LLMProbeAvailabilityBurnRatePage", "LLMProbeAvailabilityBurnRateTicket",
		"LLMProbeLatencyBurnRatePage", "LLMProbeLatencyBurnRateTicket",
		"LLMProbeCapacityRegression", "LLMProbeCapacityRegressionAfterChange",
		"LLMProbeGeneratorInvalid", "LLMProbeAbsent", "LLMProbeBudgetExhausted", "LLMProbeConfigReloadFailed",
	} {
		if !alerts[a] {
			t.Errorf("no alert %s", a)
		}
	}
}

func TestPrometheusRuleHasSameRules(t *testing.T) {
	o := DefaultRuleOptions()
	rules, err := RenderRules(o)
	if err != nil {
		t.Fatal(err)
	}
	pr, err := RenderPrometheusRule(o)
	if err != nil {
		t.Fatal(err)
	}
	var rf RuleFile
	if err := yaml.Unmarshal(rules, &rf); err != nil {
		t.Fatal(err)
	}
	var res struct {
		Kind string   `yaml:"kind"`
		Spec RuleFile `yaml:"spec"`
	}
	if err := yaml.Unmarshal(pr, &res); err != nil {
		t.Fatal(err)
	}
	if res.Kind != "PrometheusRule" {
		t.Errorf("kind %q", res.Kind)
	}
	a, _ := json.Marshal(rf)
	b, _ := json.Marshal(res.Spec)
	if !bytes.Equal(a, b) {
		t.Error("PrometheusRule spec differs from alerts/llmprobe.rules.yml")
	}
}

// TestRulesTimeScale: a scaled rule file differs from the shipped one only
// in its range windows and for-durations (recording rules keep their
// names, so dashboards read either), and its SLIs still exclude traffic
// planned during ladders.
func TestRulesTimeScale(t *testing.T) {
	o := DefaultRuleOptions()
	shipped, err := Rules(o)
	if err != nil {
		t.Fatal(err)
	}
	o.TimeScale = 1.0 / 120
	scaled, err := Rules(o)
	if err != nil {
		t.Fatal(err)
	}
	window := regexp.MustCompile(`\[[0-9a-z]+\]`)
	for gi, g := range shipped.Groups {
		for ri, r := range g.Rules {
			sr := scaled.Groups[gi].Rules[ri]
			if sr.Record != r.Record || sr.Alert != r.Alert || !maps.Equal(sr.Labels, r.Labels) {
				t.Errorf("rule %d/%d: names or labels differ: %q/%q vs %q/%q", gi, ri, sr.Record, sr.Alert, r.Record, r.Alert)
			}
			if window.ReplaceAllString(sr.Expr, "[W]") != window.ReplaceAllString(r.Expr, "[W]") {
				t.Errorf("%s%s: expressions differ beyond their windows:\n%s\n%s", r.Record, r.Alert, r.Expr, sr.Expr)
			}
			if (r.For == "") != (sr.For == "") {
				t.Errorf("%s: for %q vs %q", r.Alert, r.For, sr.For)
			}
		}
	}
	find := func(f RuleFile, name string) Rule {
		for _, g := range f.Groups {
			for _, r := range g.Rules {
				if r.Record == name || r.Alert == name {
					return r
				}
			}
		}
		t.Fatalf("no rule %s", name)
		return Rule{}
	}
	for _, tc := range []struct{ rule, want string }{
		{recAvailEvents("1h"), "[30s]"},
		{recAvailEvents("5m"), "[3s]"},
		{recAvailEvents("3d"), "[36m]"},
		{"LLMProbeCapacityRegression", "[1h24m]"},
	} {
		if e := find(scaled, tc.rule).Expr; !strings.Contains(e, tc.want) {
			t.Errorf("%s: %s, want a %s window", tc.rule, e, tc.want)
		}
	}
	if f := find(scaled, "LLMProbeAvailabilityBurnRatePage").For; f != "1s" {
		t.Errorf("page for %q, want 1s (2m / 120)", f)
	}
	if f := find(scaled, "LLMProbeCapacityRegression").For; f != "5s" {
		t.Errorf("capacity for %q, want 5s (10m / 120)", f)
	}
	for _, w := range SLIWindows {
		for _, name := range []string{recAvailEvents(w), recTTFTRate(w), recLatencyEvents(w)} {
			if e := find(scaled, name).Expr; !strings.Contains(e, `traffic="baseline", during!="ladder"`) {
				t.Errorf("%s reads more than the baseline outside ladders: %s", name, e)
			}
		}
	}
}

// TestDuringOnlyWhereExported: a selector on `during` matches nothing on a
// metric without that label (an absent label is not "none"), so only the
// per-request series may be selected by it.
func TestDuringOnlyWhereExported(t *testing.T) {
	withDuring := map[string]bool{}
	for _, m := range []string{
		"llmprobe_time_to_first_token_seconds", "llmprobe_inter_chunk_latency_seconds", "llmprobe_time_per_output_token_seconds",
		"llmprobe_request_duration_seconds", "llmprobe_dispatch_lag_seconds",
	} {
		for _, suffix := range []string{"", "_bucket", "_count", "_sum"} {
			withDuring[m+suffix] = true
		}
	}
	for _, m := range []string{"llmprobe_requests_planned_total", "llmprobe_requests_dispatched_total", "llmprobe_requests_total",
		"llmprobe_requests_good_total", "llmprobe_tokens_total", "llmprobe_cached_prompt_tokens_total", "llmprobe_cache_reported_prompt_tokens_total"} {
		withDuring[m] = true
	}
	sel := regexp.MustCompile(`(llmprobe_[a-z_]+)\{([^}]*)\}`)
	check := func(where, expr string) {
		for _, m := range sel.FindAllStringSubmatch(expr, -1) {
			if strings.Contains(m[2], "during") && !withDuring[m[1]] {
				t.Errorf("%s: %s has no during label, yet is selected on it: %s", where, m[1], m[0])
			}
		}
	}
	for _, q := range Queries() {
		check(q.Dashboard+"/"+q.Panel, q.Expr)
	}
	f, err := Rules(DefaultRuleOptions())
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range f.Groups {
		for _, r := range g.Rules {
			check(r.Record+r.Alert, r.Expr)
		}
	}
}
