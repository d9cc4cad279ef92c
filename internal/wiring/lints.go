package wiring

import (
	"fmt"
	"math"

	"github.com/llmprobe/llmprobe/internal/config"
)

// Lints are the rules for a configuration that loads and runs but cannot
// work through a day: a target that sends nothing (checkSends) and a daily
// budget spent before the day ends (checkBudgets). `validate` refuses
// them with the other errors; `run` starts anyway and logs each as a
// warning (Warnings), since pausing a target by a reload, or a budget meant
// as a hard stop, is a choice a running daemon must be able to make.
func Lints() []config.Check { return []config.Check{checkSends, checkBudgets} }

// Warnings are what `run` logs at start about a valid configuration:
// config.Warnings (a class without a latency gate) and every Lints
// finding.
func Warnings(c *config.Config) config.Errors {
	out := c.Warnings()
	var es config.Errors
	if err := c.Validate(Lints()...); err != nil && !asErrors(err, &es) {
		out = append(out, config.FieldError{Msg: err.Error()})
	}
	return append(out, es...)
}

func asErrors(err error, es *config.Errors) bool {
	e, ok := err.(config.Errors)
	*es = e
	return ok
}

// checkSends refuses a target that can never send: its baseline and its
// ladder disabled, and no /probe module to scrape it with.
func checkSends(c *config.Config, add func(key, format string, args ...any)) {
	if len(c.Probe.Modules) > 0 {
		return
	}
	for i, t := range c.Targets {
		if !t.Ladder.Enabled && (!t.Baseline.Enabled || !(t.Baseline.Rate > 0)) {
			add(fmt.Sprintf("targets[%d]", i), "sends nothing: baseline.enabled and ladder.enabled are both false and no probe.modules let /probe scrape it; enable the baseline or the ladder (or remove the target)")
		}
	}
}

// checkBudgets refuses a daily budget the configuration spends before the
// day ends (budget.tokens_per_day, budget.requests_per_day), naming the
// hour it would run out, the expected spend and what would fit.
func checkBudgets(c *config.Config, add func(key, format string, args ...any)) {
	for i := range c.Targets {
		t := c.Targets[i]
		b := t.Budget
		if b.TokensPerDay <= 0 && b.RequestsPerDay <= 0 {
			continue
		}
		u, err := ExpectedUsage(t, i)
		if err != nil {
			continue // reported by checkTargets
		}
		p := fmt.Sprintf("targets[%d].budget", i)
		if n := b.RequestsPerDay; n > 0 && u.Requests > float64(n) {
			add(p+".requests_per_day", "%d requests run out at about %s every day: the configuration sends %s a day (%s); raise it to at least %s, or send less",
				n, runsOut(float64(n), u.Requests, b.Zone), count(math.Ceil(u.Requests)), u.sources(), count(math.Ceil(u.Requests)))
		}
		if n := b.TokensPerDay; n > 0 && u.Tokens > float64(n) {
			add(p+".tokens_per_day", "%d tokens run out at about %s every day: the configuration spends at least %s tokens a day (%s requests × %s tokens: %.0f prompt + %.0f chat template + %.0f max_tokens%s; %s); raise it to at least %s, or send less (baseline.rate at most %.3g req/s)",
				n, runsOut(float64(n), u.Tokens, b.Zone), count(math.Ceil(u.Tokens)), count(u.Requests), count(u.PerRequest()), u.Prompt, u.Template, u.Output,
				unbounded(u.Unbounded), u.sources(), count(math.Ceil(u.Tokens)), u.BaselineRate*float64(n)/u.Tokens)
		}
	}
}
