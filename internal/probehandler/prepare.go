package probehandler

import (
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/llmprobe/llmprobe/internal/config"
	"github.com/llmprobe/llmprobe/internal/dispatch"
	"github.com/llmprobe/llmprobe/internal/ledger"
	"github.com/llmprobe/llmprobe/internal/protocol"
	"github.com/llmprobe/llmprobe/internal/sanitize"
	"github.com/llmprobe/llmprobe/internal/telemetry"
	"github.com/llmprobe/llmprobe/internal/urlprefix"
	"github.com/llmprobe/llmprobe/internal/wiring"
	"github.com/llmprobe/llmprobe/internal/workload"
)

// ScrapeTimeoutHeader is the header Prometheus sends with its scrape
// timeout, in seconds.
const ScrapeTimeoutHeader = "X-Prometheus-Scrape-Timeout-Seconds"

// probe is one scrape, resolved: what to send, to whom, and for how long.
type probe struct {
	module   string
	mod      config.ProbeModule
	burst    config.Burst
	label    string // the records' target: a configured target's name, or the allow-list prefix
	shown    string // the target as logs and the debug page show it
	api      string
	boundary ledger.TTFTBoundary
	exec     dispatch.Exec // through the target's or the URL's client
	admit    dispatch.Admit
	timeout  time.Duration
	bound    string // what set the timeout, in words
	close    func()
}

// prepare resolves a scrape into a probe, or refuses it (a requestError
// with its status) before anything is planned.
func (h *Handler) prepare(r *http.Request, cfg *config.Config) (*probe, error) {
	q := r.URL.Query()
	name := q.Get("module")
	if name == "" {
		return nil, refused(telemetry.ProbeRefusedModuleUnknown, "the module parameter is missing (configured modules: %s)", modules(cfg))
	}
	mod, ok := cfg.Probe.Modules[name]
	if !ok {
		return nil, refused(telemetry.ProbeRefusedModuleUnknown, "unknown module %q (configured modules: %s)", sanitize.String(name, 64), modules(cfg))
	}
	raw := q.Get("target")
	if raw == "" {
		return nil, refused(telemetry.ProbeRefusedBadRequest, "the target parameter is missing")
	}
	timeout, bound, err := probeTimeout(r.Header.Get(ScrapeTimeoutHeader), cfg.Probe.TimeoutOffset.D(), mod.Timeouts.Total.D())
	if err != nil {
		return nil, err
	}
	if span := mod.Burst.Span(); span >= timeout {
		return nil, refused(telemetry.ProbeRefusedBadRequest, "module %s: the burst spans %s (%d requests %s apart), not shorter than the probe's timeout %s (%s)",
			name, span, mod.Burst.Requests, mod.Burst.Spacing, timeout, bound)
	}
	allow, class, err := h.builtFor(cfg, name)
	if err != nil {
		return nil, err
	}
	p := &probe{module: name, mod: mod, burst: mod.Burst, timeout: timeout, bound: bound, close: func() {}}
	mix, err := wiring.Mix(seeded(mod.Target(name, config.CheckURL), h.seq.Add(1)), class, 0)
	if err != nil {
		return nil, fmt.Errorf("module %s: %w", name, err)
	}
	var model string
	var deltas bool
	params := func(*ledger.Record) protocol.Params {
		prm := mix.Next().Params
		prm.Model, prm.UsageDeltas = model, deltas
		return prm
	}
	if strings.Contains(raw, "://") {
		if err := h.toURL(p, raw, allow, params); err != nil {
			return nil, err
		}
		model, deltas = mod.Model, mod.UsageDeltas
		return p, nil
	}
	var c Configured
	if h.o.Targets != nil {
		c, ok = h.o.Targets(raw)
	}
	if !ok {
		shown := "(not shown: not a target name)"
		if config.ValidName(raw) { // what a configured target's name can be; anything else is never echoed
			shown = strconv.Quote(raw)
		}
		return nil, refused(telemetry.ProbeRefusedTargetNotAllowed, "target %s is neither a configured target nor a URL under probe.allowed_targets: /probe sends to nothing else", shown)
	}
	model, deltas = c.Target.Model, c.Target.UsageDeltas
	p.label, p.shown, p.api, p.admit = c.Target.Name, c.Target.Name, c.Target.API, c.Admit
	p.boundary = c.Target.TTFTBoundary // read by ledger.TTFTBoundary with the configuration
	p.exec = c.Exec(params)
	return p, nil
}

// toURL resolves a target given as a URL: it must fall under an allowed
// prefix, and the module must name a model; its client is built from the
// module, as a configured target's is from its keys.
func (h *Handler) toURL(p *probe, raw string, allow urlprefix.List, params func(*ledger.Record) protocol.Params) error {
	u, err := urlprefix.Parse(raw)
	if err != nil {
		return refused(telemetry.ProbeRefusedTargetNotAllowed, "target refused: %v (/probe sends only to configured targets and to URLs under probe.allowed_targets)", err)
	}
	prefix, ok := allow.Match(u)
	if !ok {
		if len(allow) == 0 {
			return refused(telemetry.ProbeRefusedTargetNotAllowed, "target %s refused: probe.allowed_targets is empty, so only configured targets, by name, may be probed", sanitize.URL(u.String()))
		}
		return refused(telemetry.ProbeRefusedTargetNotAllowed, "target %s is not under any of the %d prefixes of probe.allowed_targets (same scheme, host and port, the path at a segment boundary)",
			sanitize.URL(u.String()), len(allow))
	}
	if p.mod.Model == "" {
		return refused(telemetry.ProbeRefusedBadRequest, "module %s names no model: it can probe configured targets only", p.module)
	}
	p.label, p.shown, p.api = sanitize.URL(prefix.String()), sanitize.URL(u.String()), p.mod.API
	p.boundary = p.mod.TTFTBoundary // read by ledger.TTFTBoundary with the configuration
	var hook Hook
	if h.o.Hook != nil {
		hook = h.o.Hook(p.label, p.api)
	}
	client, target, err := wiring.Client(p.mod.Target(p.module, u.String()), wiring.ClientOptions{Buffers: h.o.Buffers, Logger: h.o.Logger, Hook: hook})
	if err != nil {
		return fmt.Errorf("module %s: %w", p.module, err) // names a variable or file, never a value
	}
	p.exec = client.Exec(target, params, h.o.Group.Ledger().Now)
	p.close = client.CloseIdleConnections
	return nil
}

// probeTimeout is the probe's bound: the scrape timeout Prometheus sends
// less offset, at most the module's timeouts.total (alone when the header
// is absent).
func probeTimeout(header string, offset, total time.Duration) (time.Duration, string, error) {
	if header == "" {
		return total, "the module's timeouts.total; no " + ScrapeTimeoutHeader + " header", nil
	}
	secs, err := strconv.ParseFloat(strings.TrimSpace(header), 64)
	if err != nil || math.IsNaN(secs) || math.IsInf(secs, 0) || secs <= 0 {
		return 0, "", refused(telemetry.ProbeRefusedBadRequest, "%s: want a positive number of seconds, got %q", ScrapeTimeoutHeader, sanitize.String(header, 32))
	}
	scrape := time.Duration(math.Min(secs, 1e6) * float64(time.Second))
	d := scrape - offset
	if d <= 0 {
		return 0, "", refused(telemetry.ProbeRefusedBadRequest, "the scrape timeout %s leaves nothing once probe.timeout_offset %s is taken off", scrape, offset)
	}
	if d >= total {
		return total, fmt.Sprintf("the module's timeouts.total, within the scrape timeout %s less probe.timeout_offset %s", scrape, offset), nil
	}
	return d, fmt.Sprintf("the scrape timeout %s less probe.timeout_offset %s", scrape, offset), nil
}

// builtFor returns the allow-list and module name's class for cfg, built
// once per configuration (a reload builds them again).
func (h *Handler) builtFor(cfg *config.Config, name string) (urlprefix.List, workload.Class, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.built != cfg {
		allow, err := urlprefix.ParseList(cfg.Probe.AllowedTargets)
		if err != nil { // checked when the configuration was loaded
			return nil, workload.Class{}, fmt.Errorf("probe.allowed_targets%w", err)
		}
		h.built, h.allow, h.class = cfg, allow, map[string]workload.Class{}
	}
	c, ok := h.class[name]
	if !ok {
		var err error
		t := cfg.Probe.Modules[name].Target(name, config.CheckURL)
		if c, err = wiring.Class(t.Classes[0], "probe.modules."+name+".class"); err != nil {
			return nil, workload.Class{}, err
		}
		h.class[name] = c
	}
	return h.allow, c, nil
}

// seeded gives a module's target its n-th probe's seed: each probe draws
// its own prompt (and cache-bust prefix).
func seeded(t config.Target, n uint64) config.Target {
	t.Baseline.Seed = int64(config.SeedFor(t.Name, 0)+n*7919) & math.MaxInt64
	if t.Baseline.Seed == 0 {
		t.Baseline.Seed = 1
	}
	return t
}

func modules(cfg *config.Config) string {
	names := cfg.Probe.ModuleNames()
	if len(names) == 0 {
		return "none; see probe.modules"
	}
	return strings.Join(names, ", ")
}
