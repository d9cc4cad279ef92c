package wiring

import (
	"fmt"
	"strings"

	"github.com/llmprobe/llmprobe/internal/answercheck"
	"github.com/llmprobe/llmprobe/internal/config"
	"github.com/llmprobe/llmprobe/internal/protocol"
	"github.com/llmprobe/llmprobe/internal/protocol/sse"
	"github.com/llmprobe/llmprobe/internal/workload"
)

// Load reads the configuration (config.LoadWith) and checks it with
// Checks as well: the one way the daemon and `validate` load a file.
func Load(o config.Options) (*config.Config, error) {
	o.Checks = append(Checks(), o.Checks...)
	return config.LoadWith(o)
}

// Checks are the rules only the domain can check, each by the parser that
// owns the value: the API by the protocol registry, prompt sources and
// length distributions by workload (prompt files and datasets are read
// now, before any traffic), a check's kind by the target's API (checkCanary), and the /probe
// endpoint's modules (as the targets they describe)
// and allowed URL prefixes (checkProbe).
func Checks() []config.Check {
	return []config.Check{checkTargets, checkProbe, checkFleet}
}

func checkTargets(c *config.Config, add func(key, format string, args ...any)) {
	for i := range c.Targets {
		t := &c.Targets[i]
		p := fmt.Sprintf("targets[%d]", i)
		if _, err := protocol.Lookup(t.API); err != nil {
			add(p+".api", "want one of %s; got %q", strings.Join(protocol.Names(), ", "), t.API)
		}
		if ev := eventBytes(*t); sse.BudgetForEvent(ev) > c.Limits.MaxBufferedBytes {
			add(p+".max_event_bytes", "%d bytes needs limits.max_buffered_bytes of at least %d (one event sent as one line is held twice, as its line and its data), got %d",
				ev, sse.BudgetForEvent(ev), c.Limits.MaxBufferedBytes)
		}
		for j, cl := range t.Classes {
			checkClass(add, fmt.Sprintf("%s.classes[%d]", p, j), cl)
			checkCanary(add, fmt.Sprintf("%s.classes[%d]", p, j), t.API, cl)
		}
	}
}

// eventBytes is the largest event the target's streams accept.
func eventBytes(t config.Target) int {
	if t.MaxEventBytes > 0 {
		return t.MaxEventBytes
	}
	return sse.DefaultMaxEventBytes
}

// checkClass reads the class's prompt source (a missing or malformed
// prompt file or dataset is refused with its file and line) and checks its
// length distributions.
func checkClass(add func(key, format string, args ...any), p string, cl config.Class) {
	if _, err := cl.Prompt.Build(p + ".prompt"); err != nil {
		msg := strings.TrimPrefix(err.Error(), p+".prompt: ")
		key := p + ".prompt.file"
		if strings.HasPrefix(msg, "unknown source") {
			key = p + ".prompt.source"
		}
		add(key, "%s", msg)
	}
	for _, d := range []struct {
		key  string
		spec workload.DistSpec
	}{{p + ".input", cl.Input}, {p + ".output", cl.Output}} {
		if _, err := d.spec.Build(d.key); err != nil {
			add(d.key, "%s", strings.TrimPrefix(err.Error(), d.key+": "))
		}
	}
	checkPrefix(add, p, cl)
	if cl.Session.Enabled() {
		if _, err := sessionThink(cl.Session); err != nil {
			add(p+".session.think", "%q: %s", cl.Session.Think, strings.TrimPrefix(err.Error(), "schedule: "))
		}
	}
}

// checkCanary refuses a check the target's API cannot send: a tool call
// on openai-completions (no tools), stop sequences on openai-responses
// (no stop parameter).
func checkCanary(add func(key, format string, args ...any), p, api string, cl config.Class) {
	for k, c := range cl.Checks {
		switch kind := c.Kind(); {
		case kind == answercheck.KindToolCall && api == "openai-completions":
			add(fmt.Sprintf("%s.checks[%d].tool_call", p, k), "the target's api openai-completions has no tools: send tool_call checks through openai-chat, openai-responses or anthropic-messages")
		case kind == answercheck.KindStop && api == "openai-responses":
			add(fmt.Sprintf("%s.checks[%d].stop", p, k), "the target's api openai-responses has no stop sequences: send stop checks through openai-chat, openai-completions or anthropic-messages")
		}
	}
}
