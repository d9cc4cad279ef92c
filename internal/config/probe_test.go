package config

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/ledger"
)

// TestProbeDefaults: the probe keys and each module entry take their
// defaults key by key; a module's distribution is replaced whole.
func TestProbeDefaults(t *testing.T) {
	c, err := LoadWith(Options{Path: write(t, minimal+`probe:
  allowed_targets: ["http://127.0.0.1:8000/v1"]
  modules:
    bare:
    chat:
      model: m
      timeouts: {total: 20s}
      class: {output: {dist: uniform, min: 4, max: 8}}
      burst: {requests: 3}
`), Environ: noEnv})
	if err != nil {
		t.Fatal(err)
	}
	p := c.Probe
	if p.TimeoutOffset.D() != 500*time.Millisecond || p.MaxConcurrent != 8 || len(p.AllowedTargets) != 1 {
		t.Errorf("probe defaults: %+v", p)
	}
	if got := p.ModuleNames(); strings.Join(got, ",") != "bare,chat" {
		t.Fatalf("modules %v", got)
	}
	bare, chat := p.Modules["bare"], p.Modules["chat"]
	if bare.API != "openai-chat" || bare.Timeouts.Total.D() != time.Minute || bare.Class.Output.Value != 16 || bare.Burst.Requests != 1 || bare.TTFTBoundary != ledger.TTFTContent {
		t.Errorf("bare module: %+v", bare)
	}
	if chat.Timeouts.Total.D() != 20*time.Second || chat.Timeouts.Connect != 0 || chat.Timeouts.FirstContent != 0 {
		t.Errorf("chat timeouts: %+v", chat.Timeouts)
	}
	if o := chat.Class.Output; o.Dist != "uniform" || o.Min != 4 || o.Max != 8 || o.Value != 0 {
		t.Errorf("chat output %+v: a distribution is replaced whole", o)
	}
	if chat.Class.Input.Value != 64 || chat.Burst.Requests != 3 || chat.Burst.Spacing.D() != 250*time.Millisecond {
		t.Errorf("chat class/burst: %+v %+v", chat.Class, chat.Burst)
	}
	tg := chat.Target("chat", "http://h/v1")
	if tg.Name != "chat" || tg.URL != "http://h/v1" || tg.Model != "m" || tg.MaxInFlight != 0 || tg.Baseline.Enabled ||
		len(tg.Classes) != 1 || tg.Classes[0].Name != "chat" || tg.Classes[0].Output.Max != 8 || tg.Timeouts.Total.D() != 20*time.Second {
		t.Errorf("module target %+v", tg)
	}
	if c.Probe.Modules == nil || DefaultProbe().Modules != nil {
		t.Error("defaults hold a module")
	}
}

// TestProbeErrors: every probe rule names the file and the module's own key.
func TestProbeErrors(t *testing.T) {
	cases := []struct {
		name, body string
		want       []string
	}{
		{"offset and concurrency", "probe: {timeout_offset: 2m, max_concurrent: 0}\n",
			[]string{"probe.timeout_offset: want 0 to 1m0s", "probe.max_concurrent: want 1..1000, got 0"}},
		{"allowed targets", "probe:\n  allowed_targets: [\"127.0.0.1:8000\", \"http://u:pw@h/v1\", \"http://h/v1?x=1\", \"http://h/v1#f\", \"http://h/v1?api_key=1\"]\n",
			[]string{"probe.allowed_targets[0]: want an absolute http(s) URL", "probe.allowed_targets[1]: credentials in the URL are not accepted",
				"probe.allowed_targets[2]: a URL prefix has no query or fragment", "probe.allowed_targets[3]: a URL prefix has no query or fragment",
				"probe.allowed_targets[4]: query parameter \"api_key\" looks secret"}},
		{"module name", "probe: {modules: {Bad_Name: {}}}\n", []string{"probe.modules.Bad_Name: want a module name"}},
		{"module keys", `probe:
  modules:
    m:
      timeouts: {total: 0s}
      headers: {Authorization: x}
      api_key_env: "sk-123 456"
      class: {cache_bust_fraction: 2}
      burst: {requests: 0}
`, []string{"probe.modules.m.timeouts.total: must be above 0", "probe.modules.m.headers.Authorization: looks secret",
			"probe.modules.m.api_key_env: want the name of an environment variable", "probe.modules.m.class.cache_bust_fraction: want 0..1",
			"probe.modules.m.burst.requests: want 1..100, got 0"}},
		{"burst longer than the module", "probe: {modules: {m: {timeouts: {total: 1s}, burst: {requests: 5, spacing: 300ms}}}}\n",
			[]string{"probe.modules.m.burst.spacing: the burst spans 1.2s (5 requests 300ms apart), not shorter than timeouts.total 1s"}},
		{"burst faster than max_rate", "limits: {max_rate: 10}\nprobe: {modules: {m: {burst: {requests: 3, spacing: 50ms}}, z: {burst: {requests: 2, spacing: 0s}}}}\n",
			[]string{"probe.modules.m.burst.spacing: 50ms between 3 requests is faster than limits.max_rate 10 req/s: want at least 100ms",
				"probe.modules.z.burst.spacing: 0s between 2 requests is faster than limits.max_rate 10 req/s"}},
		{"unknown module key", "probe: {modules: {m: {ladder: {}}}}\n", []string{"probe.modules.m.ladder: unknown key"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := write(t, minimal+tc.body)
			_, err := LoadWith(Options{Path: p, Environ: noEnv})
			if err == nil {
				t.Fatal("accepted")
			}
			for _, w := range tc.want {
				if !strings.Contains(unplaced(err), p+": "+w) {
					t.Errorf("missing %q in:\n%v", p+": "+w, err)
				}
			}
			if strings.Contains(err.Error(), "pw") || strings.Contains(err.Error(), "sk-123") {
				t.Errorf("a secret is echoed:\n%v", err)
			}
		})
	}
}

// TestProbeRedacted: /config's copy masks a module's secret-looking header
// values and the allow-list's userinfo, and leaves the original alone.
func TestProbeRedacted(t *testing.T) {
	c, err := LoadWith(Options{Path: write(t, minimal+"probe: {modules: {m: {model: x, headers: {X-Team: a}, header_env: {X-Token: TOK}}}}\n"), Environ: noEnv})
	if err != nil {
		t.Fatal(err)
	}
	c.Probe.Modules["m"].Headers["X-Api-Key"] = "secret-value" // past validation, built in code
	c.Probe.AllowedTargets = []string{"http://u:pw@h/v1"}
	b, _ := json.Marshal(c.Redacted())
	if s := string(b); strings.Contains(s, "secret-value") || strings.Contains(s, ":pw@") || !strings.Contains(s, "TOK") {
		t.Errorf("redacted: %s", s)
	}
	if c.Probe.Modules["m"].Headers["X-Api-Key"] != "secret-value" {
		t.Error("Redacted changed the original")
	}
}

func TestModuleKey(t *testing.T) {
	for in, want := range map[string]string{
		"": "probe.modules.m", "classes[0].name": "probe.modules.m", "classes": "probe.modules.m.class",
		"classes[0].output": "probe.modules.m.class.output", "timeouts.total": "probe.modules.m.timeouts.total", "api": "probe.modules.m.api",
	} {
		if got := ModuleKey("m", in); got != want {
			t.Errorf("ModuleKey(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestBurstSpan(t *testing.T) {
	if s := (Burst{Requests: 1, Spacing: Duration(time.Second)}).Span(); s != 0 {
		t.Errorf("one request spans %v", s)
	}
	if s := (Burst{Requests: 4, Spacing: Duration(time.Second)}).Span(); s != 3*time.Second {
		t.Errorf("four requests 1s apart span %v", s)
	}
}
