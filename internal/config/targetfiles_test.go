package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fileSDYAML is a configuration with one template and one target_files
// block reading targets/*.json and targets/*.yaml.
const fileSDYAML = `target_templates:
  chat:
    api: openai-chat
    model: tmpl-model
    baseline: {rate: 0.2}
    classes:
      - name: short
        input: {dist: fixed, value: 16}
        output: {dist: fixed, value: 4}
    ladder: {enabled: false}
target_files:
  - files: ["targets/*.json", "targets/*.yaml"]
`

// fileSD writes main (the configuration) and files (name under targets/ →
// body) into a new directory and loads the configuration.
func fileSD(t *testing.T, main string, files map[string]string) (*Config, error) {
	t.Helper()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "targets"), 0o755); err != nil {
		t.Fatal(err)
	}
	for n, b := range files {
		if err := os.WriteFile(filepath.Join(dir, "targets", n), []byte(b), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	p := filepath.Join(dir, "c.yaml")
	if err := os.WriteFile(p, []byte(main), 0o600); err != nil {
		t.Fatal(err)
	}
	return LoadWith(Options{Path: p, Environ: noEnv})
}

func TestDecodeTargetFile(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, path, body string
		targets          int
		wantErr          string
	}{
		{"json", "a.json", `[{"targets":["http://h:1/v1","http://h:2/v1"],"labels":{"team":"x"}}]`, 2, ""},
		{"yaml", "a.yaml", "- targets: [\"http://h:1/v1\"]\n  labels: {team: x}\n", 1, ""},
		{"yml empty", "a.yml", "", 0, ""},
		{"json unknown key", "a.json", `[{"targets":["http://h/v1"],"lables":{}}]`, 0, `unknown field "lables"`},
		{"yaml unknown key", "a.yaml", "- targets: [x]\n  lables: {}\n", 0, "lables"},
		{"json trailing", "a.json", `[] []`, 0, "text after the list"},
		{"no targets", "a.json", `[{"targets":[]},{"targets":[]}]`, 0, "entry 0: no targets"},
		{"empty target", "a.json", `[{"targets":["http://h/v1"]},{"targets":["http://h/v1", " "]}]`, 0, "entry 1: targets[1] is empty"},
		{"label not a string", "a.json", `[{"targets":["x"],"labels":{"n":1}}]`, 0, "cannot parse JSON"},
		{"extension", "a.txt", `[]`, 0, `want a .json, .yml or .yaml file`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			gs, err := DecodeTargetFile(tc.path, []byte(tc.body))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.HasPrefix(err.Error(), tc.path+": ") {
					t.Fatalf("err = %v, want one naming %s and %q", err, tc.path, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			for _, g := range gs {
				n += len(g.Targets)
			}
			if n != tc.targets {
				t.Errorf("%d targets, want %d", n, tc.targets)
			}
		})
	}
}

// TestTargetFilesExpand: each URL is a target built from the template; its
// name is the name label or derived from the URL, its model the model
// label or the template's, its other labels constant labels (values
// cleaned); hand-written targets come first.
func TestTargetFilesExpand(t *testing.T) {
	t.Parallel()
	main := fileSDYAML + `targets:
  - name: own
    url: http://127.0.0.1:9000/v1
    model: own-model
`
	c, err := fileSD(t, main, map[string]string{
		"a.json": `[{"targets":["http://127.0.0.1:8000/v1"],"labels":{"name":"eu-small","model":"m1","team":"platform","note":"a\u0007b"}},
		            {"targets":["http://10.0.0.5:8001/v1","HTTPS://Gw.Example:443/x/y"]}]`,
		"b.yaml": "- targets: [\"http://127.0.0.1:8003/v1\"]\n  labels: {name: us-large}\n",
	})
	if err != nil {
		t.Fatal(err)
	}
	type want struct{ name, url, model, team, note string }
	wants := []want{
		{"own", "http://127.0.0.1:9000/v1", "own-model", "", ""},
		{"eu-small", "http://127.0.0.1:8000/v1", "m1", "platform", "a\uFFFDb"},
		{"10.0.0.5-8001-v1", "http://10.0.0.5:8001/v1", "tmpl-model", "", ""},
		{"gw.example-443-x-y", "HTTPS://Gw.Example:443/x/y", "tmpl-model", "", ""},
		{"us-large", "http://127.0.0.1:8003/v1", "tmpl-model", "", ""},
	}
	if len(c.Targets) != len(wants) {
		t.Fatalf("%d targets, want %d", len(c.Targets), len(wants))
	}
	for i, w := range wants {
		tg := c.Targets[i]
		if tg.Name != w.name || tg.URL != w.url || tg.Model != w.model || tg.Labels["team"] != w.team || tg.Labels["note"] != w.note {
			t.Errorf("targets[%d] = %s %s %s %v, want %+v", i, tg.Name, tg.URL, tg.Model, tg.Labels, w)
		}
		if fromFile := tg.FromFile != ""; fromFile != (i > 0) {
			t.Errorf("targets[%d]: from file %q", i, tg.FromFile)
		}
		if _, ok := tg.Labels["name"]; ok {
			t.Errorf("targets[%d]: the name label stayed a constant label", i)
		}
	}
	if got := c.Targets[2]; got.Baseline.Rate != 0.2 || len(got.Classes) != 1 || got.Classes[0].Name != "short" || got.Ladder.Enabled {
		t.Errorf("a file target is not its template: %+v", got)
	}
	if got := c.Targets[2].Timeouts.Total; got <= 0 {
		t.Errorf("a file target has no default timeouts: total %v", got)
	}
	if ls, n := TargetLabels(c); n != 4 || ls["eu-small"]["team"] != "platform" || len(ls) != 5 {
		t.Errorf("TargetLabels = %v, %d; want 5 targets, 4 from files", ls, n)
	}
	if c.TargetFiles[0].Interval() != DefaultRefreshInterval.D() {
		t.Errorf("refresh interval %v, want the default", c.TargetFiles[0].Interval())
	}
}

// TestTargetFilesErrors: every problem names the file and the entry (or the
// key of the configuration), and a template's problem is reported once
// per file, counting the other targets.
func TestTargetFilesErrors(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("v", MaxLabelValueBytes+1)
	var many strings.Builder
	for i := range MaxTargetLabels + 1 {
		if i > 0 {
			many.WriteString(",")
		}
		many.WriteString(`"l` + string(rune('a'+i)) + `":"x"`)
	}
	tests := []struct {
		name, main string
		files      map[string]string
		want       []string
		not        []string // consequences not reported
	}{
		{"reserved label", fileSDYAML, map[string]string{"a.json": `[{"targets":["http://h:1/v1"]},{"targets":["http://h:2/v1"],"labels":{"job":"x"}}]`},
			[]string{"a.json: entry 1 targets[0].labels.job: label \"job\" is reserved"}, nil},
		{"__ label", fileSDYAML, map[string]string{"a.json": `[{"targets":["http://h:1/v1"],"labels":{"__meta_x":"x"}}]`},
			[]string{"entry 0 targets[0].labels.__meta_x: label \"__meta_x\" is reserved"}, nil},
		{"bad label name", fileSDYAML, map[string]string{"a.json": `[{"targets":["http://h:1/v1"],"labels":{"a-b":"x"}}]`},
			[]string{"entry 0 targets[0].labels.a-b: label name \"a-b\""}, nil},
		{"long value", fileSDYAML, map[string]string{"a.json": `[{"targets":["http://h:1/v1"],"labels":{"a":"` + long + `"}}]`},
			[]string{"labels.a: value longer than 128 bytes"}, nil},
		{"too many labels", fileSDYAML, map[string]string{"a.json": `[{"targets":["http://h:1/v1"],"labels":{` + many.String() + `}}]`},
			[]string{"entry 0 targets[0].labels: at most 16 constant labels, got 17"}, nil},
		{"bad name", fileSDYAML, map[string]string{"a.json": `[{"targets":["http://h:1/v1"],"labels":{"name":"Bad Name"}}]`},
			[]string{"a.json: entry 0 targets[0].name: want 1-63"}, nil},
		{"duplicate", fileSDYAML, map[string]string{"a.json": `[{"targets":["http://h:1/v1","http://h:2/v1"],"labels":{"name":"x"}}]`},
			[]string{"a.json: entry 0 targets[1].name: duplicate target name \"x\""}, nil},
		{"bad url", fileSDYAML, map[string]string{"a.yaml": "- targets: [\"ftp://h\"]\n"},
			[]string{"a.yaml: entry 0 targets[0].url: want an absolute http(s) URL"}, nil},
		{"parse", fileSDYAML, map[string]string{"a.json": `[{"targets":`},
			[]string{"a.json: cannot parse JSON"}, []string{"at least one target"}},
		{"template problem once", strings.Replace(fileSDYAML, "rate: 0.2", "rate: -1", 1), map[string]string{"a.json": `[{"targets":["http://h:1/v1","http://h:2/v1","http://h:3/v1"]}]`},
			[]string{"a.json: entry 0 targets[0].baseline.rate: must be above 0", "(and 2 more targets of this file)"}, nil},
		{"template with url", strings.Replace(fileSDYAML, "api: openai-chat", "url: http://h/v1", 1), map[string]string{"a.json": `[{"targets":["http://h:1/v1"]}]`},
			[]string{"target_templates.chat.url: a template holds no url"}, nil},
		{"template unknown key", strings.Replace(fileSDYAML, "api: openai-chat", "rtae: 1", 1), map[string]string{"a.json": `[{"targets":["http://h:1/v1"]}]`},
			[]string{"target_templates.chat.rtae: unknown key"}, nil},
		{"no such template", fileSDYAML + "    template: nope\n", nil,
			[]string{"target_files[0].template: no template \"nope\""}, nil},
		{"two templates, none named", strings.Replace(fileSDYAML, "target_files:", "  other: {api: openai-chat}\ntarget_files:", 1), nil,
			[]string{"target_files[0].template: required: target_templates holds 2 templates"}, nil},
		{"short refresh", fileSDYAML + "    refresh_interval: 10ms\n", map[string]string{"a.json": `[{"targets":["http://h:1/v1"]}]`},
			[]string{"target_files[0].refresh_interval: want at least 1s"}, nil},
		{"no files", fileSDYAML, nil, []string{"targets: at least one target is required"}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := fileSD(t, tc.main, tc.files)
			var es Errors
			if !errors.As(err, &es) {
				t.Fatalf("err = %v, want Errors", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("errors do not say %q:\n%v", w, err)
				}
			}
			for _, n := range tc.not {
				if strings.Contains(err.Error(), n) {
					t.Errorf("errors say %q, a consequence:\n%v", n, err)
				}
			}
			if n := strings.Count(err.Error(), "must be above 0 req/s"); n > 1 {
				t.Errorf("a template's problem reported %d times in one file:\n%v", n, err)
			}
		})
	}
}

func TestDeriveName(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"http://10.0.0.5:8000/v1":             "10.0.0.5-8000-v1",
		"https://user:pw@GW.example.com/a/b/": "gw.example.com-a-b",
		"http://h/v1?key=secret#x":            "h-v1",
		"http://" + strings.Repeat("a", 80):   strings.Repeat("a", 63),
		"http://[::1]:8000/v1":                "1-8000-v1",
	} {
		if got := DeriveName(in); got != want || !ValidName(got) {
			t.Errorf("DeriveName(%q) = %q (valid %v), want %q", in, got, ValidName(got), want)
		}
	}
}

// TestTargetFilesFingerprint: the fingerprint changes when a file is
// rewritten, added or removed, and only then.
func TestTargetFilesFingerprint(t *testing.T) {
	t.Parallel()
	a := `[{"targets":["http://h:1/v1"]}]`
	c, err := fileSD(t, fileSDYAML, map[string]string{"a.json": a})
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(filepath.Dir(c.Path), "targets")
	write := func(n, body string) {
		if err := os.WriteFile(filepath.Join(dir, n), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	fp := TargetFilesFingerprint(c)
	if fp == "" || TargetFilesFingerprint(c) != fp || c.TargetFilesRead() != fp {
		t.Fatalf("fingerprint %q not stable, or not what the load read (%q)", fp, c.TargetFilesRead())
	}
	seen := map[string]string{fp: "start"}
	for _, step := range []struct {
		name string
		do   func()
	}{
		{"rewritten", func() { write("a.json", `[{"targets":["http://h:2/v1"]}]`) }},
		{"added", func() { write("b.yaml", "- targets: [\"http://h:3/v1\"]\n") }},
		{"removed", func() { _ = os.Remove(filepath.Join(dir, "a.json")) }},
	} {
		step.do()
		got := TargetFilesFingerprint(c)
		if prev, dup := seen[got]; dup {
			t.Errorf("%s: fingerprint unchanged (same as after %s)", step.name, prev)
		}
		seen[got] = step.name
	}
	if TargetFilesFingerprint(&Config{}) != "" || TargetFilesInterval(c) != DefaultRefreshInterval.D() {
		t.Error("no target_files: want no fingerprint; one block: its interval")
	}
}

// TestTargetBlockLabels: a hand-written target's labels follow the same
// rules as a file entry's, and their values are cleaned.
func TestTargetBlockLabels(t *testing.T) {
	t.Parallel()
	base := "targets:\n  - name: a\n    url: http://127.0.0.1:8000/v1\n    model: m\n    labels: "
	c, err := LoadWith(Options{Path: write(t, base+"{team: \"x\\ty\"}\n"), Environ: noEnv})
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Targets[0].Labels["team"]; got != "x\uFFFDy" {
		t.Errorf("team = %q, want the control character replaced", got)
	}
	_, err = LoadWith(Options{Path: write(t, base+"{class: x}\n"), Environ: noEnv})
	if err == nil || !strings.Contains(err.Error(), `targets[0].labels.class: label "class" is reserved`) {
		t.Errorf("err = %v, want class refused as reserved", err)
	}
}
