package dashgen

import (
	"fmt"

	"github.com/llmprobe/llmprobe/internal/cause"
)

// proberAlerts are the alerts on the prober itself: its generator, its
// scrape, its budget and its configuration.
func proberAlerts(o RuleOptions) []Rule {
	ten, m := o.dur("10m"), o.Mixin
	return []Rule{
		{
			Alert: "LLMProbeGeneratorInvalid",
			Expr: fmt.Sprintf("min by (job, instance, target) (%[3]s) == 0\n"+
				"or\n"+
				"sum by (job, instance, target) (increase(%[4]s[%[2]s])) > 0\n"+
				"or\n"+
				"histogram_quantile(0.99, sum by (job, instance, target) (rate(%[5]s[%[2]s]))) > %[1]s",
				num(o.DispatchLagP99), ten, m.sel("llmprobe_generator_valid"),
				m.sel("llmprobe_requests_total", `outcome="unsent"`, `reason="client_cap"`), m.sel("llmprobe_dispatch_lag_seconds")),
			For:    o.dur("5m"),
			Labels: o.Mixin.alertLabels("LLMProbeGeneratorInvalid"),
			Annotations: map[string]string{
				"summary":     "llmprobe's measurements of {{ $labels.target }} cannot be trusted",
				"description": "The open-loop generator for {{ $labels.target }} is not keeping its schedule (generator_valid = 0, requests unsent at the client in-flight cap, or dispatch lag p99 above " + num(o.DispatchLagP99) + " s). Latency and capacity figures may describe the prober rather than the target until this clears; llmprobe_generator_invalid_cause and the status page name the cause (" + cause.Join(cause.Generator) + ").",
				"runbook_url": o.Mixin.runbookURL("LLMProbeGeneratorInvalid"),
			},
		},
		{
			// No job name is assumed: a prober is a scrape target that
			// exposed llmprobe_build_info in the last day (its job and
			// instance), and none at all being scraped is absent().
			Alert: "LLMProbeAbsent",
			Expr: m.sel("up") + " == 0 and on (job, instance) max_over_time(" + m.sel("llmprobe_build_info") + "[" + o.dur("1d") + "])\n" +
				"or on ()\nabsent(" + m.sel("llmprobe_build_info") + ")",
			For:    ten,
			Labels: o.Mixin.alertLabels("LLMProbeAbsent"),
			Annotations: map[string]string{
				"summary":     "{{ with $labels.instance }}llmprobe {{ . }} is not being scraped{{ else }}no llmprobe is being scraped{{ end }}",
				"description": "Prometheus cannot scrape a prober that it scraped in the last day (up == 0), or scrapes no prober at all (no llmprobe_build_info), for 10 minutes: no SLO or capacity alert can fire while the prober is blind.",
				"runbook_url": o.Mixin.runbookURL("LLMProbeAbsent"),
			},
		},
		{
			Alert: "LLMProbeBudgetExhausted",
			Expr: "min by (job, instance, target) (" + m.sel("llmprobe_budget_remaining_tokens") + ") <= 0\n" +
				"or\n" +
				"min by (job, instance, target) (" + m.sel("llmprobe_budget_remaining_requests") + ") <= 0",
			For:    o.dur("5m"),
			Labels: o.Mixin.alertLabels("LLMProbeBudgetExhausted"),
			Annotations: map[string]string{
				"summary":     "llmprobe's daily budget for {{ $labels.target }} is exhausted",
				"description": "The prober stopped sending to {{ $labels.target }} because its token or request budget for the day is spent; planned arrivals end as unsent/budget until the budget resets.",
				"runbook_url": o.Mixin.runbookURL("LLMProbeBudgetExhausted"),
			},
		},
		{
			// As Prometheus' own mixin alerts on
			// prometheus_config_last_reload_successful.
			Alert:  "LLMProbeConfigReloadFailed",
			Expr:   "max by (job, instance) (" + m.sel("llmprobe_config_last_reload_successful") + ") == 0",
			For:    ten,
			Labels: o.Mixin.alertLabels("LLMProbeConfigReloadFailed"),
			Annotations: map[string]string{
				"summary":     "llmprobe {{ $labels.instance }} refused its last configuration reload",
				"description": "The last configuration reload (SIGHUP or POST /-/reload) of {{ $labels.instance }} failed, for 10 minutes: the prober keeps running its previous configuration, so an edit (a new target, a changed gate or rate) has not taken effect, and the next restart would refuse to start.",
				"runbook_url": o.Mixin.runbookURL("LLMProbeConfigReloadFailed"),
			},
		},
	}
}
