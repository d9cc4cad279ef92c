package dashgen

import (
	"fmt"
	"strings"
)

// Alert annotations that carry the figure that fired: Prometheus renders
// them with Go templates when the alert fires ($value is the value of the
// alert expression's left-hand side, $labels its labels). Arithmetic is
// done by the template's query function on a PromQL scalar expression
// (a scalar result is a one-sample vector, so `first | value` reads it):
// templates have no arithmetic of their own.

// budgetPeriodDays is the error-budget period the burn-rate tiers assume
// (slo.PageTiers: 14.4× over 1h is 2 % of a 30-day budget).
const budgetPeriodDays = 30

// tmplCalc is a template expression printing the PromQL scalar expression
// promql (in which %g stands for $value) formatted with format.
func tmplCalc(promql, format string) string {
	return fmt.Sprintf(`{{ with printf %q $value | query }}{{ . | first | value | printf %q }}{{ end }}`, promql, format)
}

// burnAnnotations are a burn-rate alert's summary and description: the
// burn rate, the error ratio and how long a whole error budget would last
// at that rate. $value is the long-window error ratio of the tier that
// fired (the first arm of the expression that holds).
func burnAnnotations(o RuleOptions, name, what, subject string, objective float64, tiers []burnTier) map[string]string {
	budget := num(roundTo(1-objective, 9))
	burn := tmplCalc("%g / "+budget, "%.1f")
	days := tmplCalc(fmt.Sprintf("%d / (%%g / %s)", budgetPeriodDays, budget), "%.1f")
	var desc []string
	for _, t := range tiers {
		desc = append(desc, fmt.Sprintf("%s× over %s and %s", num(t.factor), t.long, t.short))
	}
	return map[string]string{
		"summary": fmt.Sprintf("{{ $labels.target }}/{{ $labels.class }} is burning its %s error budget %s× too fast", what, burn),
		"description": fmt.Sprintf("Too many %s: error ratio {{ $value | humanizePercentage }} over the long window, "+
			"burn rate %s× (budget %s, objective %s): at this rate a whole %d-day error budget lasts %s days. "+
			"Fires above %s, with at least %d bad requests in the long window.",
			subject, burn, budget, num(objective), budgetPeriodDays, days, strings.Join(desc, " or "), o.MinBadEvents),
		"runbook_url": o.Mixin.runbookURL(name),
	}
}

// capacityRegressionAnnotations: capacity before (the 7-day median) → after
// (the latest measured capacity, $value).
func capacityRegressionAnnotations(o RuleOptions, frac, week string) map[string]string {
	const name = "LLMProbeCapacityRegression"
	// The median the alert compared with: its own identity's when the
	// capacity carries one, else the target's.
	median := "{{ if $labels.version }}{{ with printf `quantile_over_time(0.5, " + recCapacityByVersion +
		"{job=%q, instance=%q, target=%q, class=%q, model=%q, version=%q}[" + week + "])` $labels.job $labels.instance $labels.target $labels.class $labels.model $labels.version | query }}" +
		"{{ . | first | value | humanize }}{{ else }}?{{ end }}" +
		"{{ else }}{{ with printf `quantile_over_time(0.5, " + recCapacity +
		"{job=%q, instance=%q, target=%q, class=%q}[" + week + "])` $labels.job $labels.instance $labels.target $labels.class | query }}" +
		"{{ . | first | value | humanize }}{{ else }}?{{ end }}{{ end }}"
	return map[string]string{
		"summary": "{{ $labels.target }}/{{ $labels.class }} capacity fell from " + median + " to {{ $value | humanize }} req/s (below " + frac + " × its 7-day median)",
		"description": "The latest ladder measured this target and class's capacity at {{ $value | humanize }} req/s, below " + frac +
			" × its 7-day median of " + median + " req/s{{ if $labels.version }} under {{ $labels.model }} {{ $labels.version }}{{ end }} (a lower bound is never compared: only a capacity with a valid failing step above it).",
		"runbook_url": o.Mixin.runbookURL(name),
	}
}

// capacityAfterChangeAnnotations: capacity before (the last complete
// ladder's under another model/version, the highest if several, named) →
// after ($value, under the current model/version).
func capacityAfterChangeAnnotations(o RuleOptions, frac, week string) map[string]string {
	const name = "LLMProbeCapacityRegressionAfterChange"
	r := recCapacityByVersion
	before := "{{ with printf `topk(1, last_over_time(" + r + "{job=%q, instance=%q, target=%q, class=%q}[" + week + "])" +
		" unless on (job, instance, target, class, model, version) " + r + ")`" +
		" $labels.job $labels.instance $labels.target $labels.class | query }}{{ with first . }}" +
		"{{ .Value | humanize }} req/s under {{ .Labels.model }} {{ .Labels.version }}{{ end }}{{ else }}the previous version's capacity{{ end }}"
	return map[string]string{
		"summary": "{{ $labels.target }}/{{ $labels.class }} capacity fell from " + before +
			" to {{ $value | humanize }} req/s under {{ $labels.model }} {{ $labels.version }}",
		"description": "Capacity measured under {{ $labels.model }} {{ $labels.version }}, {{ $value | humanize }} req/s, is below " + frac +
			" × the last capacity of another model/version of this target in the last 7 days (" + before + "; the highest, if several), each from a complete ladder of its own identity (a lower bound, or a ladder a deploy cut, is never compared).",
		"runbook_url": o.Mixin.runbookURL(name),
	}
}
