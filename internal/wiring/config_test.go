package wiring

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/llmprobe/llmprobe/internal/config"
	"github.com/llmprobe/llmprobe/internal/workload"
)

const minimal = `
targets:
  - name: t1
    url: http://127.0.0.1:8000/v1
    model: m
`

func write(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "c.yaml")
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func noEnv() []string { return nil }

func TestExampleConfigsValidate(t *testing.T) {
	files, err := filepath.Glob("../../config/*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 3 {
		t.Fatalf("want at least 3 example configs, found %v", files)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			c, err := Load(config.Options{Path: f, Environ: noEnv})
			if err != nil {
				t.Fatalf("%s does not validate:\n%v", f, err)
			}
			if len(c.Targets) == 0 || len(c.Targets[0].Classes) == 0 {
				t.Fatalf("%s: no targets or classes after load", f)
			}
		})
	}
}

// TestErrorsNameFileAndKey: what only the domain can check (Checks) is
// reported like config's own rules, naming the file and the key. Config's
// own cases are config's TestErrorsNameFileAndKey.
func TestErrorsNameFileAndKey(t *testing.T) {
	cases := []struct {
		name string
		body string
		want []string // each must appear, prefixed by "<file>: "
	}{
		{"bad api", minimal + "    api: grpc\n", []string{"targets[0].api: want one of"}},
		{"bad dist", minimal + "    classes: [{name: a, input: {dist: uniform, min: 10, max: 5}}]\n", []string{"targets[0].classes[0].input: uniform min 10"}},
		{"bad ttft boundary", minimal + "    ttft_boundary: reasoning\n", []string{"targets[0].ttft_boundary: want content or any_token"}},
		{"bad arrival", minimal + "    baseline: {arrival: bursty}\n", []string{"targets[0].baseline.arrival: want poisson, constant or gamma, got \"bursty\""}},
		{"bad ladder arrival", minimal + "    ladder: {enabled: true, steps: [1], schedule: {every: 24h}, arrival: bursty}\n",
			[]string{"targets[0].ladder.arrival: want poisson, constant or gamma"}},
		{"bad stop_at", minimal + "    ladder: {enabled: true, steps: [1], schedule: {every: 24h}, stop_at: peak}\n",
			[]string{"targets[0].ladder.stop_at: want knee, capacity or top"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := write(t, tc.body)
			_, err := Load(config.Options{Path: p, Environ: noEnv})
			if err == nil {
				t.Fatal("want an error, got none")
			}
			var es config.Errors
			if !errors.As(err, &es) {
				t.Fatalf("want config.Errors, got %T: %v", err, err)
			}
			for _, w := range tc.want {
				if !strings.Contains(unplaced(err), p+": ") || !strings.Contains(err.Error(), w) {
					t.Errorf("error does not name file and %q:\n%v", w, err)
				}
			}
			if strings.Contains(err.Error(), "sk-abc") || strings.Contains(err.Error(), "Bearer x") {
				t.Errorf("error echoes a secret: %v", err)
			}
		})
	}
}

// TestServerMetricsErrors: the server flavour is checked by servermetrics'
// own parser. Config's own cases are config's TestServerMetricsErrors.
func TestServerMetricsErrors(t *testing.T) {
	sm := func(body string) string { return minimal + "    server_metrics: " + body + "\n" }
	tests := []struct {
		name string
		body string
		want []string
	}{
		{"flavour", sm("{url: \"http://h/metrics\", flavour: triton}"), []string{"targets[0].server_metrics.flavour: want auto, vllm, sglang, tgi or llamacpp; got \"triton\""}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := write(t, tc.body)
			_, err := Load(config.Options{Path: p, Environ: noEnv})
			var es config.Errors
			if !errors.As(err, &es) {
				t.Fatalf("want config.Errors, got %T: %v", err, err)
			}
			for _, w := range tc.want {
				if !strings.Contains(unplaced(err), p+": "+w) {
					t.Errorf("want %q naming the file in\n%v", w, err)
				}
			}
		})
	}
}

func TestWorkloadClasses(t *testing.T) {
	c, err := Load(config.Options{Path: "../../config/simulator.yaml", Environ: noEnv})
	if err != nil {
		t.Fatal(err)
	}
	wcs, err := Classes(c.Targets[0], 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(wcs) != len(c.Targets[0].Classes) {
		t.Fatalf("%d workload classes for %d config classes", len(wcs), len(c.Targets[0].Classes))
	}
	for i, w := range wcs {
		cc := c.Targets[0].Classes[i]
		if w.Name != cc.Name || w.Weight != cc.Weight || w.Gates.TTFT != cc.Gates.TTFT || w.InputLen == nil || w.OutputLen == nil {
			t.Errorf("class %d converted wrongly: %+v from %+v", i, w, cc)
		}
	}
	bad := c.Targets[0].Classes[0]
	bad.Prompt = workload.PromptSpec{Source: "file", File: filepath.Join(t.TempDir(), "missing.txt")}
	if _, err := Class(bad, "targets[0].classes[0]"); err == nil || !strings.Contains(err.Error(), "targets[0].classes[0].prompt") || !strings.Contains(err.Error(), "missing.txt") {
		t.Fatalf("missing prompt file: %v", err)
	}
}
