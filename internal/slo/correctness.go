package slo

// The correctness SLI (issue 29, docs/checks.md): of the answer checks the
// prober judged, the fraction that passed. Its events are the judged
// checks, pass and fail; a check whose request failed (not_judged) is no
// event here: that request is already an availability event (a failure),
// and a target that does not answer has told nothing about whether it
// answers right. Its bad events are the fails, whatever their reason.
//
// The objective, CorrectnessObjective, is 99.5 % of judged checks passing
// over the 30-day budget period the burn-rate tiers assume. A check is
// deterministic by construction (temperature 0, a seed, a prompt whose
// answer does not depend on the model's size), so a right server passes
// it every time; the 0.5 % budget absorbs a rare honest flake (a
// non-deterministic kernel or batch) without paging, while a single check
// of a rotation of up to 13 that always fails (≥ 7.7 % of judged checks)
// burns it faster than the first page tier's 14.4× (7.2 %). A check that
// flakes more than 1 in 200 opens a ticket: fix it.
//
// Counted over every judged check whatever its traffic: the check metric
// carries no traffic label, and a wrong answer under a ladder's load is a
// wrong answer (the load's own failures end not_judged and are not
// counted).

// CorrectnessObjective is the target fraction of judged answer checks that
// pass.
const CorrectnessObjective = 0.995

// The check results (answercheck.Result's values: this package is a leaf).
const (
	CheckPass      = "pass"
	CheckFail      = "fail"
	CheckNotJudged = "not_judged"
)

// JudgedResults are the check results the correctness SLI counts.
var JudgedResults = []string{CheckPass, CheckFail}

// Correctness classifies one check result for the correctness SLI: event
// reports whether it counts (it was judged), bad whether it failed. An
// unknown result is no event: only a judgement the prober made counts.
func Correctness(result string) (event, bad bool) {
	switch result {
	case CheckPass:
		return true, false
	case CheckFail:
		return true, true
	}
	return false, false
}
