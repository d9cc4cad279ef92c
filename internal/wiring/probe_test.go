package wiring

import (
	"strings"
	"testing"

	"github.com/llmprobe/llmprobe/internal/config"
)

// TestCheckProbe: a module is checked as the target it describes, by the
// domain's rules, and each allowed prefix by the allow-list's parser; the
// errors name the file and the module's own keys.
func TestCheckProbe(t *testing.T) {
	p := write(t, minimal+`probe:
  allowed_targets: ["http://127.0.0.1:8000/v1", "http://h/v1/../admin", "http://h/v1%2Fx"]
  modules:
    ok: {model: m}
    bad:
      api: grpc
      ttft_boundary: first
      class:
        prompt: {source: file, file: /nonexistent/prompts.txt}
        output: {dist: uniform, min: 9, max: 3}
`)
	_, err := Load(config.Options{Path: p, Environ: noEnv})
	if err == nil {
		t.Fatal("accepted")
	}
	for _, w := range []string{
		"probe.allowed_targets[1]: dot segments (. and ..) in the path are not accepted",
		"probe.allowed_targets[2]: escaped slashes",
		"probe.modules.bad.api: want one of",
		"probe.modules.bad.ttft_boundary: want content or any_token",
		"probe.modules.bad.class.prompt.file:",
		"probe.modules.bad.class.output: uniform min 9",
	} {
		if !strings.Contains(unplaced(err), p+": "+w) {
			t.Errorf("missing %q in:\n%v", p+": "+w, err)
		}
	}
	if strings.Contains(err.Error(), "allowed_targets[0]") || strings.Contains(err.Error(), "modules.ok") {
		t.Errorf("a good entry refused:\n%v", err)
	}
	c, err := Load(config.Options{BuiltIn: []byte(minimal + "probe: {allowed_targets: [\"http://127.0.0.1:8000/v1\"], modules: {m: {}}}\n"), Environ: noEnv})
	if err != nil {
		t.Fatalf("a module without a model (configured targets only): %v", err)
	}
	if _, err := Class(config.Class{}, "x"); err == nil {
		t.Error("an empty class built")
	}
	m := c.Probe.Modules["m"]
	if _, err := Class(m.Target("m", config.CheckURL).Classes[0], "probe.modules.m.class"); err != nil {
		t.Errorf("the module's class does not build: %v", err)
	}
}
