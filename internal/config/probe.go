package config

import (
	"strings"
	"time"

	"github.com/llmprobe/llmprobe/internal/sanitize"
	"github.com/llmprobe/llmprobe/internal/workload"
)

// Probe is the admin server's /probe endpoint, in the manner of
// blackbox_exporter: Prometheus scrapes /probe?target=…&module=… and each
// scrape sends one streamed request (or the module's short burst) and
// answers with its result as probe_* metrics.
type Probe struct {
	// AllowedTargets are the URL prefixes a target given as a URL must fall
	// under (same scheme, host and port, the path at a segment boundary);
	// anything else is refused with 403. None: only configured targets,
	// by name, may be probed.
	AllowedTargets []string `koanf:"allowed_targets" json:"allowed_targets,omitempty"`
	// TimeoutOffset is taken off Prometheus' scrape timeout
	// (X-Prometheus-Scrape-Timeout-Seconds), so that the answer arrives
	// before Prometheus gives up.
	TimeoutOffset Duration `koanf:"timeout_offset" json:"timeout_offset"`
	// MaxConcurrent bounds the /probe requests served at once; one more is
	// refused with 503 and its arrivals recorded unsent/client_cap.
	MaxConcurrent int `koanf:"max_concurrent" json:"max_concurrent"`
	// Modules describe what a probe sends, by name (the module= parameter).
	Modules map[string]ProbeModule `koanf:"modules" json:"modules,omitempty"`
}

// ProbeModule is what one /probe scrape sends. With a target given as a
// URL, every key applies (the URL's client is built from them, as a
// target's is); with a configured target, the target's own client (url,
// api, model, key, headers, TLS, timeouts) is used and the module gives
// the class, the burst and timeouts.total as a bound on the probe.
type ProbeModule struct {
	// Client is a target's client keys (model is required to probe a URL,
	// unused for configured targets).
	Client `koanf:",squash"`
	// Class is the request sent: prompt, input and output lengths; its
	// class label is the module's name.
	Class ProbeClass `koanf:"class" json:"class"`
	Burst Burst      `koanf:"burst" json:"burst"`
}

// ProbeClass is a module's request: a class without name, weight or gates.
type ProbeClass struct {
	Prompt            workload.PromptSpec `koanf:"prompt" json:"prompt"`
	Input             workload.DistSpec   `koanf:"input" json:"input"`   // input length in tokens
	Output            workload.DistSpec   `koanf:"output" json:"output"` // max output tokens (max_tokens)
	CacheBustFraction float64             `koanf:"cache_bust_fraction" json:"cache_bust_fraction"`
}

// Burst is how many requests one scrape sends: requests arrivals spacing
// apart, planned when the scrape arrives (open loop: never slowed by the
// responses). The whole burst must fit the probe's timeout, and its rate
// (1/spacing) limits.max_rate.
type Burst struct {
	Requests int      `koanf:"requests" json:"requests"` // 1 = one request per scrape
	Spacing  Duration `koanf:"spacing" json:"spacing"`   // between planned sends
}

// Span is the planned time from the burst's first send to its last.
func (b Burst) Span() time.Duration {
	if b.Requests < 2 {
		return 0
	}
	return time.Duration(b.Requests-1) * b.Spacing.D()
}

// DefaultProbe is probe's defaults: an offset like blackbox_exporter's
// (0.5s), at most 8 probes at once, no URL allowed, no module.
func DefaultProbe() Probe {
	return Probe{TimeoutOffset: Duration(500 * time.Millisecond), MaxConcurrent: 8}
}

// DefaultProbeModule is what a module entry leaves out: a target's
// connection defaults, one bound only (timeouts.total 1m: the scrape
// timeout bounds a probe first, and any shorter total is accepted
// without touching the other timeouts), and a short request (64 tokens
// in, at most 16 out) sent once per scrape.
func DefaultProbeModule() ProbeModule {
	t := DefaultTarget()
	return ProbeModule{
		Client: Client{API: t.API, TLS: t.TLS, Timeouts: Timeouts{Total: Duration(time.Minute)}, MaxEventBytes: t.MaxEventBytes, TTFTBoundary: t.TTFTBoundary},
		Class:  ProbeClass{Prompt: workload.PromptSpec{Source: "synthetic"}, Input: workload.DistSpec{Dist: "fixed", Value: 64}, Output: workload.DistSpec{Dist: "fixed", Value: 16}},
		Burst:  Burst{Requests: 1, Spacing: Duration(250 * time.Millisecond)},
	}
}

// Target is the target description of module name probing url, checked
// by the same rules as a configured target's and built into a client by
// the same code (wiring.Client): DefaultTarget with the module's keys, its
// one class named after the module, no baseline, no in-flight cap (the
// probe's own bound, probe.max_concurrent, applies).
func (m ProbeModule) Target(name, url string) Target {
	t := DefaultTarget()
	t.Name, t.URL = name, url
	t.Client = m.Client
	t.MaxInFlight = 0
	t.Baseline.Enabled = false
	t.Classes = []Class{{Name: name, Weight: 1, Prompt: m.Class.Prompt, Input: m.Class.Input, Output: m.Class.Output,
		CacheBustFraction: m.Class.CacheBustFraction}}
	return t
}

// ModuleKey is the key of module name that holds what a target keeps at
// targetKey (a key relative to a target: "timeouts.total",
// "classes[0].output"): the errors the target rules report on a module's
// Target name the module's own keys.
func ModuleKey(name, targetKey string) string {
	p := "probe.modules." + name
	switch {
	case targetKey == "" || targetKey == "classes[0].name" || targetKey == "name":
		return p
	case targetKey == "classes" || targetKey == "classes[0]":
		return p + ".class"
	case strings.HasPrefix(targetKey, "classes[0]."):
		return p + ".class." + strings.TrimPrefix(targetKey, "classes[0].")
	}
	return p + "." + targetKey
}

// injectProbeDefaults fills each module entry of the raw configuration
// with DefaultProbeModule, key by key (a distribution replaced whole).
func injectProbeDefaults(raw map[string]any) {
	p, ok := raw["probe"].(map[string]any)
	if !ok {
		return
	}
	mods, ok := p["modules"].(map[string]any)
	if !ok {
		return
	}
	def := asMap(DefaultProbeModule())
	for name, m := range mods {
		switch mm := m.(type) {
		case map[string]any:
			fillDefaults(mm, def)
		case nil: // "name:" with nothing under it: every default
			mods[name] = deepCopy(def)
		}
	}
}

// redact applies the one redaction rule to a copy's URLs and headers.
func (p *Probe) redact() {
	for i, u := range p.AllowedTargets {
		p.AllowedTargets[i] = sanitize.URL(u)
	}
	for _, m := range p.Modules {
		redactHeaders(m.Headers) // a map: the copy's own, decoded from JSON
	}
}
