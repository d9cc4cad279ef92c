package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/llmprobe/llmprobe/internal/durfmt"
	"github.com/llmprobe/llmprobe/internal/ladder"
	"github.com/llmprobe/llmprobe/internal/ladderresult"
	"github.com/llmprobe/llmprobe/internal/ledger"
	"github.com/llmprobe/llmprobe/internal/stats"
)

// Exit codes: what a script can rely on. This table is the one place they
// are defined; README.md ("Exit codes") documents the same table and a test
// holds the two together. When several apply, the first in this order wins
// (after 1 and 2): 7, 3, 8, 4, then 5 or 6.
const (
	exitOK               = 0 // the run completed and none of the codes below applies (ladder: also an abort after its capacity was measured)
	exitError            = 1 // llmprobe itself failed (a file it could not open, a broken ledger invariant, …)
	exitUsage            = 2 // bad flags or arguments
	exitNoSuccess        = 3 // not one planned request ended ok (a refused port, a wrong URL or key)
	exitGeneratorInvalid = 4 // the prober did not keep its schedule: the figures may describe the prober, not the target
	exitGatesFailed      = 5 // probe with --slo-* gates: the good fraction is below --good-fraction
	exitLadderNoCapacity = 6 // ladder: aborted before any capacity was measured (an abort rule or an interrupt), or no valid step met the gates
	exitNotWritten       = 7 // the ledger (--ledger) or the ladder history (--history) was not completely written
	exitWrongAnswers     = 8 // probe with --checks: an answer check was judged and failed
)

// exitCodes describes each code, for --help and the documentation test.
var exitCodes = []struct {
	code    int
	meaning string
}{
	{exitOK, "fine: the run completed and none of the codes below applies (ladder: an abort rule that fired after the capacity was measured ended it; stderr names the rule)"},
	{exitError, "llmprobe failed (a file it could not open or write, a broken ledger invariant, …)"},
	{exitUsage, "bad flags or arguments"},
	{exitNoSuccess, "no request succeeded: not one planned request ended ok"},
	{exitGeneratorInvalid, "generator invalid: the prober did not keep its schedule, so the figures cannot be trusted (ladder: the generator-invalid rule stopped it, or no step was valid)"},
	{exitGatesFailed, "gates failed: probe with --slo-* gates whose good fraction is below --good-fraction"},
	{exitLadderNoCapacity, "ladder aborted or no capacity: an abort rule stopped it before any capacity was measured, an interrupt stopped it, or no valid step met the gates"},
	{exitNotWritten, "ledger not written: the --ledger file (or the ladder --history) is incomplete"},
	{exitWrongAnswers, "wrong answers: probe with --checks in which a check was judged and failed (the answer was wrong; a check whose request failed is not judged)"},
}

// exitStatus is a run that completed with a verdict a script must see: its
// report was printed, and the process exits with code.
type exitStatus struct {
	code int
	why  string
}

func (e exitStatus) Error() string { return fmt.Sprintf("exit %d: %s", e.code, e.why) }

// exitCodeOf returns the exit code an error maps to (exitError for any
// other error).
func exitCodeOf(err error) int {
	var es exitStatus
	if errors.As(err, &es) {
		return es.code
	}
	return exitError
}

// outcomesText lists the non-zero outcome counts, e.g. "transport_error 9".
func outcomesText(o stats.Outcomes) string {
	var parts []string
	for _, oc := range ledger.Outcomes {
		if n := o.ByOutcome[oc]; n > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", oc, n))
		}
	}
	return strings.Join(parts, ", ")
}

// probeExit is a probe's exit status (nil: exit 0). lost counts ledger
// records not written to --ledger; gated says whether any --slo-* gate was
// set; goodTarget is --good-fraction.
func probeExit(s stats.Summary, gated bool, goodTarget float64, lost int, lostErr error) error {
	switch {
	case lost > 0 || lostErr != nil:
		why := ""
		if lostErr != nil {
			why = ": " + lostErr.Error()
		}
		return exitStatus{exitNotWritten, fmt.Sprintf("ledger not written: %d record(s) missing from the --ledger file%s", lost, why)}
	case s.Completed == 0:
		if s.Planned == 0 {
			return exitStatus{exitNoSuccess, "no request succeeded: no arrival was planned in the window"}
		}
		return exitStatus{exitNoSuccess, fmt.Sprintf("no request succeeded: 0 of %d planned arrivals ended ok (%s)", s.Planned, outcomesText(s.Outcomes))}
	case !s.Validity.Valid:
		var cs []string
		for _, c := range s.Validity.Causes {
			cs = append(cs, string(c.Cause))
		}
		return exitStatus{exitGeneratorInvalid, "generator invalid (" + strings.Join(cs, ", ") + "): the figures cannot be trusted"}
	case gated && s.GoodFraction < goodTarget:
		return exitStatus{exitGatesFailed, fmt.Sprintf("gates failed: good fraction %.1f%% below --good-fraction %.1f%%", 100*s.GoodFraction, 100*goodTarget)}
	}
	return nil
}

// ladderExit is a ladder's exit status (nil: exit 0). historyErr is the
// error appending to --history, if any. The line names what stopped the
// ladder: the rule that fired, with its figure. Exit 4 when the
// generator-invalid rule stopped it (or the unsent rule on a step whose
// generator was invalid: the prober's own limits held the load back), or
// no step was valid; an abort by another rule (errors, rejections, TTFT,
// unsent on a valid step) is the ladder's normal
// end once it has a capacity (exit 0, said on stderr: the rule kept the
// climb from going further past it), exit 6 before any; an interrupt is 6.
func ladderExit(res ladder.Result, historyErr error) error {
	planned, ok, valid := 0, 0, 0
	for _, s := range res.Steps {
		planned += s.Summary.Planned
		ok += s.Summary.Completed
		if s.Summary.Validity.Valid {
			valid++
		}
	}
	var last ladderresult.LadderStep
	if n := len(res.Steps); n > 0 {
		last = res.Steps[n-1]
	}
	by := ladder.AbortedBy(last.AbortReason)
	if res.AbortReason == ladder.ReasonInterrupted {
		by = ladder.ReasonInterrupted
	}
	switch {
	case historyErr != nil:
		return exitStatus{exitNotWritten, historyErr.Error()} // says "ladder history not written: …"
	case planned > 0 && ok == 0:
		return exitStatus{exitNoSuccess, fmt.Sprintf("no request succeeded: 0 of %d planned arrivals ended ok", planned)}
	case res.Aborted && by == ladder.ReasonGeneratorInvalid:
		return exitStatus{exitGeneratorInvalid, fmt.Sprintf("generator invalid: step %d (%s) stopped the ladder", last.Index, strings.Join(last.Summary.Validity.CauseNames(), ", "))}
	case res.Aborted && by == ladder.ReasonUnsent && !last.Summary.Validity.Valid:
		// What the prober's own limits held back stopped it, and its
		// generator was invalid for it: the prober's doing.
		return exitStatus{exitGeneratorInvalid, fmt.Sprintf("generator invalid: step %d (%s) stopped the ladder by its unsent rule: %s",
			last.Index, strings.Join(last.Summary.Validity.CauseNames(), ", "), last.AbortReason)}
	case res.Aborted && by != ladder.ReasonInterrupted && res.CapacityStep > 0:
		return exitStatus{exitOK, fmt.Sprintf("capacity %s req/s (step %d, %s bound); the ladder ended at its abort rule: %s%s",
			durfmt.Rate(res.Capacity), res.CapacityStep, res.CapacityBound, res.AbortReason, alsoInvalid(last))}
	case res.Aborted && by != ladder.ReasonInterrupted:
		return exitStatus{exitLadderNoCapacity, "ladder aborted before any capacity was measured: " + res.AbortReason + alsoInvalid(last)}
	case len(res.Steps) > 0 && valid == 0:
		return exitStatus{exitGeneratorInvalid, "generator invalid: no step was valid, so the ladder measured nothing it can trust"}
	case res.Aborted:
		return exitStatus{exitLadderNoCapacity, "ladder aborted: " + res.AbortReason}
	case res.CapacityStep == 0:
		return exitStatus{exitLadderNoCapacity, "no capacity: no valid step met the gates"}
	}
	return nil
}

// alsoInvalid notes that the step an abort rule stopped was invalid too
// (never used for capacity or knee), "" when it was valid.
func alsoInvalid(st ladderresult.LadderStep) string {
	if st.Summary.Validity.Valid {
		return ""
	}
	causes := ""
	if names := st.Summary.Validity.CauseNames(); len(names) > 0 {
		causes = " (" + strings.Join(names, ", ") + ")"
	}
	return fmt.Sprintf("; step %d's generator was also invalid%s: not used for capacity or knee", st.Index, causes)
}
