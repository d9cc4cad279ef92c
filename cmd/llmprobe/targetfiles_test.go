package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
)

// fileSDConf is a daemon configuration whose targets all come from
// targets/*.json through one template, polled every second.
func fileSDConf(admin string) string {
	return fmt.Sprintf(`admin:
  listen: %q
log: {format: json}
drain: {timeout: 2s}
target_templates:
  chat:
    model: llmprobe-sim
    timeouts: {connect: 2s, headers: 5s, first_content: 5s, idle: 5s, total: 10s}
    baseline: {rate: 5, arrival: constant}
    classes:
      - name: chat
        input: {dist: fixed, value: 16}
        output: {dist: fixed, value: 4}
    ladder: {enabled: false}
target_files:
  - files: ["targets/*.json"]
    refresh_interval: 1s
`, admin)
}

// writeFileSD writes a file_sd JSON file: one entry per target name, each
// probing url, labelled team=teams[name] when set.
func writeFileSD(t *testing.T, path, url string, names []string, teams map[string]string) {
	t.Helper()
	type entry struct {
		Targets []string          `json:"targets"`
		Labels  map[string]string `json:"labels"`
	}
	var es []entry
	for _, n := range names {
		ls := map[string]string{"name": n}
		if teams[n] != "" {
			ls["team"] = teams[n]
		}
		es = append(es, entry{Targets: []string{url}, Labels: ls})
	}
	b, err := json.Marshal(es)
	if err != nil {
		t.Fatal(err)
	}
	writeWhole(t, path, b)
}

// writeWhole writes a file whole, then renames it into place: what file_sd
// writers do (a poller never reads half a file).
func writeWhole(t *testing.T, path string, b []byte) {
	t.Helper()
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// TestTargetFilesFollowed: a running daemon follows its file_sd file. A
// target added starts probing, one removed loses its series, one changed
// (a new team label) shows it on llmprobe_target_labels; each applied
// change is logged with what it added, changed and removed, and counted.
// A broken file is refused: the last good targets keep probing, the log
// names the file, and the refusal is counted; mending it reloads.
func TestTargetFilesFollowed(t *testing.T) {
	t.Parallel()
	simURL := startSim(t, fastSim())
	admin := closedPort(t)
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "targets"), 0o755); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "targets", "a.json")
	writeFileSD(t, file, simURL, []string{"f1", "f2", "f3"}, map[string]string{"f2": "red"})
	conf := filepath.Join(dir, "llmprobe.yaml")
	writeConf(t, conf, fileSDConf(admin))
	d := startDaemon(t, admin, "run", "--config.file", conf)

	labels := func(mf map[string]*dto.MetricFamily) map[string]map[string]string {
		out := map[string]map[string]string{}
		for _, m := range mf["llmprobe_target_labels"].GetMetric() {
			ls := map[string]string{}
			for _, l := range m.GetLabel() {
				ls[l.GetName()] = l.GetValue()
			}
			out[ls["target"]] = ls
		}
		return out
	}
	okFor := func(target string, n float64) bool {
		mf := d.waitMetrics(func(map[string]*dto.MetricFamily) bool { return true })
		return sum(mf["llmprobe_requests_total"], map[string]string{"target": target, "outcome": "ok"}) >= n
	}
	start := d.waitMetrics(func(mf map[string]*dto.MetricFamily) bool {
		return sum(mf["llmprobe_requests_total"], map[string]string{"target": "f3", "outcome": "ok"}) >= 1
	})
	if got := labels(start); len(got) != 3 || got["f2"]["team"] != "red" || got["f1"]["team"] != "" {
		t.Errorf("llmprobe_target_labels at start = %v, want f1 f2 f3 with f2 team=red", got)
	}
	if n := sum(start["llmprobe_target_files_targets"], nil); n != 3 {
		t.Errorf("llmprobe_target_files_targets = %g, want 3", n)
	}

	// Added f4, changed f2, removed f3.
	writeFileSD(t, file, simURL, []string{"f1", "f2", "f4"}, map[string]string{"f2": "blue"})
	after := d.waitMetrics(func(mf map[string]*dto.MetricFamily) bool {
		ls := labels(mf)
		return sum(mf["llmprobe_target_files_changes_total"], map[string]string{"result": "applied"}) == 1 &&
			ls["f4"] != nil && ls["f3"] == nil && ls["f2"]["team"] == "blue"
	})
	if n := sum(after["llmprobe_target_files_changes_total"], map[string]string{"result": "refused"}); n != 0 {
		t.Errorf("refused changes = %g, want 0", n)
	}
	d.waitFor("f4 probed", 20e9, func() bool { return okFor("f4", 2) })

	// A broken file: refused, the last good set keeps running.
	writeWhole(t, file, []byte(`[{"targets": ["`+simURL+`"], "labels": {"name": "f5"}}, {"targets":`))
	refused := d.waitMetrics(func(mf map[string]*dto.MetricFamily) bool {
		return sum(mf["llmprobe_target_files_changes_total"], map[string]string{"result": "refused"}) == 1
	})
	if ok := sum(refused["llmprobe_config_last_reload_successful"], nil); ok != 0 {
		t.Errorf("llmprobe_config_last_reload_successful = %g after a broken file, want 0", ok)
	}
	if got := labels(refused); len(got) != 3 || got["f4"] == nil || got["f5"] != nil {
		t.Errorf("after a broken file the target set is %v, want the last good f1 f2 f4", got)
	}
	n := sum(refused["llmprobe_requests_total"], map[string]string{"target": "f4", "outcome": "ok"})
	d.waitFor("f4 still probed after a broken file", 20e9, func() bool { return okFor("f4", n+2) })

	// The file put back as the running configuration read it: reloaded,
	// so that the last reload's outcome is good again.
	writeFileSD(t, file, simURL, []string{"f1", "f2", "f4"}, map[string]string{"f2": "blue"})
	back := d.waitMetrics(func(mf map[string]*dto.MetricFamily) bool {
		return sum(mf["llmprobe_target_files_changes_total"], map[string]string{"result": "applied"}) == 2
	})
	if ok := sum(back["llmprobe_config_last_reload_successful"], nil); ok != 1 {
		t.Errorf("llmprobe_config_last_reload_successful = %g after the file was mended, want 1", ok)
	}

	r := d.stop()
	for _, want := range []string{
		`"msg":"target set changed","trigger":"target_files changed","targets":3,"added":1,"changed":1,"removed":1,"added_names":["f4"],"changed_names":["f2"],"removed_names":["f3"]`,
		`"msg":"reload refused: the configuration does not load; the old one keeps running","trigger":"target_files changed","err":"` + file + `: cannot parse JSON`,
	} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("log lacks %s:\n%s", want, r.stderr)
		}
	}
	if c := strings.Count(r.stderr, `"trigger":"target_files changed"`); c != 4 {
		t.Errorf("%d log lines of target file changes, want 4 (reloaded, target set changed, refused once, reloaded with no change):\n%s", c, r.stderr)
	}
}
