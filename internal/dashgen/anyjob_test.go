package dashgen

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
)

// rawDashboards decodes the generated dashboards as generic JSON.
func rawDashboards(t *testing.T) map[string]map[string]any {
	t.Helper()
	ds, err := Dashboards()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]map[string]any{}
	for _, d := range ds {
		var m map[string]any
		if err := json.Unmarshal(d.JSON, &m); err != nil {
			t.Fatalf("%s: %v", d.File, err)
		}
		out[d.UID] = m
	}
	return out
}

// jobLiteral is a job matched by name rather than by the variable.
var jobLiteral = regexp.MustCompile(`job\s*(=|!=|=~|!~)\s*"[^$]`)

// TestNoJobNameAssumed: nothing generated names a scrape job — no panel
// query, variable, annotation or rule — and every query of a series the
// prober's scrape writes selects the job variable (only the SLI and
// prefix-cache recording rules, aggregated without the job, are exempt), so the dashboards work
// whatever the scrape config calls the job.
func TestNoJobNameAssumed(t *testing.T) {
	files, err := Files()
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range files {
		if m := jobLiteral.Find(b); m != nil {
			t.Errorf("%s names a job: %q", name, m)
		}
	}
	sliRecorded := regexp.MustCompile(`^llmprobe:(sli_|prefix_cache_)`)
	for _, q := range Queries() {
		scraped := false
		for _, n := range namesIn(q.Expr) {
			if !sliRecorded.MatchString(n) {
				scraped = true
			}
		}
		if scraped && !strings.Contains(q.Expr, `job=~"$job"`) {
			t.Errorf("%s / %s / %s: does not select the job variable: %s", q.Dashboard, q.Panel, q.RefID, q.Expr)
		}
	}
	for uid, d := range rawDashboards(t) {
		var job map[string]any
		for _, v := range d["templating"].(map[string]any)["list"].([]any) {
			if vm := v.(map[string]any); vm["name"] == "job" {
				job = vm
			}
		}
		if job == nil {
			t.Errorf("%s: no job variable", uid)
			continue
		}
		if job["query"] != "label_values(llmprobe_build_info, job)" || job["includeAll"] != true || job["multi"] != true {
			t.Errorf("%s: job variable %v: want every job that scrapes a prober, multi, with All", uid, job)
		}
		if av, ok := job["allValue"]; ok && av != "" {
			t.Errorf("%s: job variable's All is %q: it must expand to the prober jobs, not match every job", uid, av)
		}
	}
}

// TestTTFTHeatmapNative: the overview has a TTFT heatmap whose query reads
// the native histogram (no _bucket series), and the classic-bucket one is
// optional (may be empty).
func TestTTFTHeatmapNative(t *testing.T) {
	var native, classic bool
	for _, b := range boards(DefaultRuleOptions()) {
		for _, r := range b.rows {
			for _, p := range r.panels {
				if p.kind != "heatmap" {
					continue
				}
				for _, x := range p.queries {
					switch {
					case strings.Contains(x.expr, "llmprobe_time_to_first_token_seconds{") && !x.heatmap && x.expect == ExpectAlways:
						native = b.uid == UIDOverview
					case strings.Contains(x.expr, "llmprobe_time_to_first_token_seconds_bucket{") && x.expect == ExpectMaybe:
						classic = true
					}
				}
			}
		}
	}
	if !native {
		t.Error("no TTFT heatmap from the native histogram on the overview")
	}
	if !classic {
		t.Error("no optional classic-bucket TTFT heatmap")
	}
}

// TestPanelIDsUnique: every panel and row of a dashboard has an id, unique
// within the dashboard.
func TestPanelIDsUnique(t *testing.T) {
	for uid, d := range rawDashboards(t) {
		seen := map[float64]string{}
		for _, p := range d["panels"].([]any) {
			pm := p.(map[string]any)
			id, ok := pm["id"].(float64)
			if !ok || id <= 0 {
				t.Errorf("%s / %v: no id", uid, pm["title"])
				continue
			}
			if other, dup := seen[id]; dup {
				t.Errorf("%s: id %v on %q and %q", uid, id, other, pm["title"])
			}
			seen[id] = pm["title"].(string)
		}
		if len(seen) < 5 {
			t.Errorf("%s: %d panels with ids", uid, len(seen))
		}
	}
}

// TestBudgetPanelsSayNoBudget: a budget panel reads series that exist only
// for a target with a budget; when they are absent it says no budget is
// configured, not "No data".
func TestBudgetPanelsSayNoBudget(t *testing.T) {
	n := 0
	for uid, d := range rawDashboards(t) {
		for _, p := range d["panels"].([]any) {
			pm := p.(map[string]any)
			body, _ := json.Marshal(pm["targets"])
			if !strings.Contains(string(body), "llmprobe_budget_remaining_") {
				continue
			}
			n++
			fc, _ := pm["fieldConfig"].(map[string]any)
			def, _ := fc["defaults"].(map[string]any)
			if nv, _ := def["noValue"].(string); !strings.Contains(nv, "No budget configured") {
				t.Errorf("%s / %v: noValue %q, want it to say no budget is configured", uid, pm["title"], nv)
			}
		}
	}
	if n < 2 {
		t.Errorf("%d budget panels found, want the tokens and requests panels", n)
	}
}
