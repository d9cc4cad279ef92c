package config

import (
	"fmt"
	"math"
	"net/url"
	"regexp"
	"sort"
	"strings"
	"time"
)

// Bounds of the probe keys.
const (
	maxProbeConcurrent  = 1000
	maxProbeBurst       = 100
	maxProbeOffset      = time.Minute
	probeModelForChecks = "model" // a module without a model is checked with this one
)

// minSpacing is the shortest burst spacing limits.max_rate allows (a
// burst is a stream like any other: never faster than the hard maximum).
func minSpacing(maxRate float64) time.Duration {
	if !(maxRate > 0) {
		return time.Second
	}
	return time.Duration(math.Ceil(float64(time.Second) / maxRate))
}

// moduleName is a module's name: a class label, and a single koanf key
// (no dot).
var moduleName = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,62}$`)

// ModuleNames returns the configured module names, sorted.
func (p Probe) ModuleNames() []string {
	out := make([]string, 0, len(p.Modules))
	for n := range p.Modules {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// CheckURL is a URL a module may be checked against: what probing a URL
// with it would send to, for the rules that need one.
const CheckURL = "http://127.0.0.1/v1"

// ModuleTarget is the target description module name is checked as (and
// the rules a target obeys applied to it): Target with CheckURL, and a
// stand-in model when the module names none (it then probes configured
// targets only).
func (m ProbeModule) ModuleTarget(name string) Target {
	t := m.Target(name, CheckURL)
	if t.Model == "" {
		t.Model = probeModelForChecks
	}
	return t
}

func (c *Config) validateProbe(el *errorList) {
	p := c.Probe
	if d := p.TimeoutOffset.D(); d < 0 || d > maxProbeOffset {
		el.add("probe.timeout_offset", "want 0 to %s, got %s", maxProbeOffset, d)
	}
	if p.MaxConcurrent < 1 || p.MaxConcurrent > maxProbeConcurrent {
		el.add("probe.max_concurrent", "want 1..%d, got %d", maxProbeConcurrent, p.MaxConcurrent)
	}
	for i, raw := range p.AllowedTargets {
		key := fmt.Sprintf("probe.allowed_targets[%d]", i)
		before := len(el.errs)
		checkURL(el, key, raw, "http://127.0.0.1:8000/v1 (a URL prefix)", "; a module's api_key_env, api_key_file or header_env carry credentials")
		if len(el.errs) > before {
			continue
		}
		if u, err := url.Parse(raw); err == nil && (u.RawQuery != "" || u.ForceQuery || u.Fragment != "" || strings.Contains(raw, "#")) {
			el.add(key, "a URL prefix has no query or fragment")
		}
	}
	for _, name := range p.ModuleNames() {
		m := p.Modules[name]
		key := "probe.modules." + name
		if !moduleName.MatchString(name) {
			el.add(key, "want a module name of 1-63 of [a-z0-9_-] starting with a letter or digit (it is the class label), got %q", name)
			continue
		}
		// The rules of a target, reported under the module's own keys.
		sub := &errorList{src: el.src}
		t := m.ModuleTarget(name)
		c.validateTarget(sub, "t", &t)
		for _, e := range sub.errs {
			k := ModuleKey(name, strings.TrimPrefix(strings.TrimPrefix(e.Key, "t"), "."))
			el.add(k, "%s", e.Msg)
		}
		b := m.Burst
		switch {
		case b.Requests < 1 || b.Requests > maxProbeBurst:
			el.add(key+".burst.requests", "want 1..%d, got %d", maxProbeBurst, b.Requests)
		case b.Requests > 1 && b.Spacing.D() < minSpacing(c.Limits.MaxRate):
			el.add(key+".burst.spacing", "%s between %d requests is faster than limits.max_rate %g req/s: want at least %s",
				b.Spacing, b.Requests, c.Limits.MaxRate, minSpacing(c.Limits.MaxRate))
		case m.Timeouts.Total > 0 && b.Span() >= m.Timeouts.Total.D():
			el.add(key+".burst.spacing", "the burst spans %s (%d requests %s apart), not shorter than timeouts.total %s",
				b.Span(), b.Requests, b.Spacing, m.Timeouts.Total)
		}
	}
}
