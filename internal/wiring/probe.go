package wiring

import (
	"fmt"
	"strings"

	"github.com/llmprobe/llmprobe/internal/config"
	"github.com/llmprobe/llmprobe/internal/urlprefix"
)

// checkProbe checks the /probe endpoint's keys only the domain can: each
// allowed URL prefix by the allow-list's own parser, and each module as
// the target it describes, by the very rules checkTargets applies to
// configured targets, reported under the module's keys.
func checkProbe(c *config.Config, add func(key, format string, args ...any)) {
	for i, raw := range c.Probe.AllowedTargets {
		if _, err := urlprefix.Parse(raw); err != nil {
			add(fmt.Sprintf("probe.allowed_targets[%d]", i), "%v", err)
		}
	}
	for _, name := range c.Probe.ModuleNames() {
		one := &config.Config{Limits: c.Limits, Targets: []config.Target{c.Probe.Modules[name].ModuleTarget(name)}}
		checkTargets(one, func(key, format string, args ...any) {
			add(config.ModuleKey(name, strings.TrimPrefix(strings.TrimPrefix(key, "targets[0]"), ".")), format, args...)
		})
	}
}
