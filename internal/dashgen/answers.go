package dashgen

import (
	"fmt"
	"strings"

	"github.com/llmprobe/llmprobe/internal/slo"
)

// The answer checks' rules (issue 29, docs/checks.md): the correctness SLI
// (judged checks that passed; not_judged is availability's), its burn-rate
// alerts at the tiers of the other SLIs, and LLMProbeAnswersWrongAfterChange.

// answerChecks is the check metric (telemetry: one increment per check
// request sent, result pass|fail|not_judged, reason on fail).
const answerChecks = "llmprobe_answer_checks_total"

// Recording rule names of the correctness SLI.
func recCorrectEvents(w string) string { return "llmprobe:sli_correctness_events:increase" + w }
func recCorrectBad(w string) string    { return "llmprobe:sli_correctness_bad_events:increase" + w }
func recCorrectErrors(w string) string { return "llmprobe:sli_correctness_errors:ratio_rate" + w }

// recCheckPassByVersion is each check's pass ratio over wrongWindow,
// labelled with the target's identity when it was evaluated.
const recCheckPassByVersion = "llmprobe:answer_check_pass_by_version:ratio_rate30m"

// The windows and thresholds of LLMProbeAnswersWrongAfterChange (nominal:
// TimeScale scales the windows).
const (
	// wrongWindow is the window of each check's pass ratio, under the
	// identity the target has at its end.
	wrongWindow = "30m"
	// wrongSince is how long after an identity change the alert may fire,
	// and how far back a previous identity's last pass ratio is read.
	wrongSince = "6h"
	// wrongBelow: the check passes at most this fraction of its judged
	// runs over wrongWindow under the new identity.
	wrongBelow = 0.5
	// passedAbove: the check passed at least this fraction of its judged
	// runs over the last wrongWindow under the previous identity.
	passedAbove = 0.9
)

// checkBy is the aggregation of the per-check rules.
const checkBy = "region, job, instance, target, class, check"

// checksSel selects the check metric with matchers.
func (o RuleOptions) checksSel(matchers string) string { return o.Mixin.sel(answerChecks, matchers) }

func correctnessRules(o RuleOptions, w string) []Rule {
	rw := o.dur(w)
	judged := fmt.Sprintf(`result=~"%s"`, strings.Join(slo.JudgedResults, "|"))
	return []Rule{
		// Events: judged checks (pass or fail); a check whose request
		// failed is not_judged, an availability event only.
		{Record: recCorrectEvents(w), Expr: fmt.Sprintf(`sum by (%s) (increase(%s[%s]))`, sliBy, o.checksSel(judged), rw)},
		// Bad events: judged checks that did not pass, whatever the reason.
		{Record: recCorrectBad(w), Expr: fmt.Sprintf(
			"clamp_min(\n  %s\n  - (sum by (%s) (increase(%s[%s])) or 0 * %s),\n  0\n)",
			recCorrectEvents(w), sliBy, o.checksSel(fmt.Sprintf("result=%q", slo.CheckPass)), rw, recCorrectEvents(w))},
		{Record: recCorrectErrors(w), Expr: fmt.Sprintf("%s / (%s > 0)", recCorrectBad(w), recCorrectEvents(w))},
	}
}

// checkPassByVersionRule labels each check's pass ratio over wrongWindow
// with the identity the target has now (the most recent target_info), as
// capacityByVersionExpr does for capacities: a check's ratio under an
// identity the target left stays readable by last_over_time.
func checkPassByVersionRule(o RuleOptions) Rule {
	w := o.dur(wrongWindow)
	inc := func(m string) string {
		return fmt.Sprintf("sum by (%s) (increase(%s[%s]))", checkBy, o.checksSel(m), w)
	}
	return Rule{Record: recCheckPassByVersion, Expr: fmt.Sprintf(
		"(\n  (%s or 0 * %s)\n  / (%s > 0)\n)\n"+
			"+ on (job, instance, target) group_left (model, version)\n"+
			"0 * topk by (job, instance, target) (1, timestamp(%s))",
		inc(`result="pass"`), inc(`result="fail"`), inc(fmt.Sprintf(`result=~"%s"`, strings.Join(slo.JudgedResults, "|"))),
		o.Mixin.sel("llmprobe_target_info"))}
}

// answersWrongAfterChange fires for a check that, under the target's
// current identity, passes at most wrongBelow of its judged runs over
// wrongWindow (with at least MinBadEvents fails), after passing at least
// passedAbove of them over the last wrongWindow recorded under another
// identity in the last wrongSince, the prober having counted an identity
// change in the last wrongSince. A check that always failed never fires
// it (it passed under no identity); one that fails with no deploy is the
// burn-rate alerts'.
func answersWrongAfterChange(o RuleOptions) Rule {
	const name = "LLMProbeAnswersWrongAfterChange"
	r, since, w := recCheckPassByVersion, o.dur(wrongSince), o.dur(wrongWindow)
	on := "job, instance, target, class, check"
	prev := fmt.Sprintf("{{ with printf `max(last_over_time(%[1]s{job=%%q, instance=%%q, target=%%q, class=%%q, check=%%q}[%[2]s]) unless on (%[3]s, model, version) %[1]s)`"+
		" $labels.job $labels.instance $labels.target $labels.class $labels.check | query }}{{ . | first | value | humanizePercentage }}{{ else }}?{{ end }}", r, since, on)
	return Rule{
		Alert: name,
		Expr: fmt.Sprintf("%[1]s <= %[2]s\n"+
			"and on (%[3]s)\n"+
			"  max by (%[3]s) (\n"+
			"    last_over_time(%[1]s[%[4]s])\n"+
			"      unless on (%[3]s, model, version) %[1]s\n"+
			"  ) >= %[5]s\n"+
			"and on (%[3]s)\n"+
			"  sum by (%[3]s) (increase(%[6]s[%[7]s])) >= %[8]d\n"+
			"and on (job, instance, target)\n"+
			"  increase(%[9]s[%[4]s]) > 0",
			r, num(wrongBelow), on, since, num(passedAbove), o.checksSel(`result="fail"`), w, o.MinBadEvents,
			o.Mixin.sel("llmprobe_target_identity_changes_total")),
		For:    o.dur("5m"),
		Labels: o.Mixin.alertLabels(name, "slo", "correctness"),
		Annotations: map[string]string{
			"summary": "{{ $labels.target }}/{{ $labels.class }}: check {{ $labels.check }} fails under {{ $labels.model }} {{ $labels.version }} after passing under the previous identity",
			"description": "Since the target's identity changed (in the last " + wrongSince + "), answer check {{ $labels.check }} passes {{ $value | humanizePercentage }} of its judged runs over the last " + wrongWindow +
				" under {{ $labels.model }} {{ $labels.version }} (at most " + num(wrongBelow*100) + " %, at least " + fmt.Sprint(o.MinBadEvents) + " fails), after passing " + prev +
				" over its last " + wrongWindow + " under another identity (at least " + num(passedAbove*100) + " %). The server answers, and answers wrong: read the failing reasons on the status page or in /debug/requests.",
			"runbook_url": o.Mixin.runbookURL(name),
		},
	}
}

// noChecks is what an Answers panel says when its series are absent: the
// check metric exists only for a class with checks.
const noChecks = "No answer checks configured for the selected targets and classes (classes[].checks)"

// answersRow is the Overview's Answers row: the correctness SLI, checks by
// result and reason, and the failing checks. Every query may be empty (a
// target without checks exports no check series).
func answersRow(o RuleOptions) row {
	budget := 1 - o.CorrectnessObjective
	return row{title: "Answers (answer checks: is the model answering right?)", panels: []panel{
		{kind: "stat", title: "Correct answers, 1h (passed / judged)", unit: unitRatio, width: 6, height: 5, noValue: noChecks,
			description: fmt.Sprintf("Share of the answer checks judged in the last hour that passed (every traffic). A check whose request failed is not_judged and not counted here: it is the availability SLI's. Objective %g.", o.CorrectnessObjective),
			queries:     []q{query(fmt.Sprintf(`1 - %s{%s}`, recCorrectErrors("1h"), selSLI), "{{target}} {{class}}").want(ExpectMaybe)}},
		{kind: "stat", title: "Correctness error budget left, 3d", unit: unitRatio, width: 6, height: 5, noValue: noChecks,
			description: fmt.Sprintf("1 - (failed-check ratio over 3 days / error budget %g). Negative means the budget is spent.", budget),
			queries:     []q{query(fmt.Sprintf(`1 - %s{%s} / %g`, recCorrectErrors("3d"), selSLI, budget), "{{target}} {{class}}").want(ExpectMaybe)}},
		{kind: "timeseries", title: "Correctness burn rate, 1h and 5m", unit: unitBurn, width: 12, height: 5, noValue: noChecks,
			description: "Failed-check ratio divided by the error budget; the fast page fires at 14.4 on both 1h and 5m.",
			queries: []q{
				query(fmt.Sprintf(`%s{%s} / %g`, recCorrectErrors("1h"), selSLI, budget), "1h {{target}} {{class}}").want(ExpectMaybe),
				query(fmt.Sprintf(`%s{%s} / %g`, recCorrectErrors("5m"), selSLI, budget), "5m {{target}} {{class}}").want(ExpectMaybe),
			}},
		{kind: "timeseries", title: "Checks by result and reason", unit: unitReqPerSec, noValue: noChecks,
			description: "Answer checks sent, by result (pass, fail, not_judged) and, for a fail, its reason (mismatch, invalid_json, schema, no_tool_call, wrong_tool, bad_arguments, stop_ignored, length_ignored, wrong_model).",
			queries:     []q{query(fmt.Sprintf(`sum by (result, reason) (rate(%s{%s}[$__rate_interval]))`, answerChecks, selTC), "{{result}} {{reason}}").want(ExpectMaybe)}},
		{kind: "table", title: "Failing checks", unit: unitCount, noValue: "No check failed in the selected range",
			description: "Checks that failed in the selected time range, by target, class, check and reason, with how many times (never the answer's text: read a failed check in /debug/requests).",
			queries:     []q{query(fmt.Sprintf(`sum by (target, class, check, reason) (increase(%s{%s, result="fail"}[$__range])) > 0`, answerChecks, selTC), "").asInstant().want(ExpectMaybe)}},
	}}
}
