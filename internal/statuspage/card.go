package statuspage

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/llmprobe/llmprobe/internal/cause"
	"github.com/llmprobe/llmprobe/internal/durfmt"
	"github.com/llmprobe/llmprobe/internal/ladder"
	"github.com/llmprobe/llmprobe/internal/slo"
)

// The card's state: one word per target, computed from the daemon's typed
// facts and records, each with its evidence and its next step. Worst
// first: the order the cards are sorted in.
const (
	StateDown      = "DOWN"               // nothing answers
	StateRefused   = "REFUSED"            // the target answers but refuses the prober (401/403, 404)
	StateFailing   = "FAILING"            // the availability SLI burns at the page tier
	StateWrong     = "WRONG ANSWERS"      // the correctness SLI (answer checks) burns at the page tier
	StateSlow      = "SLOW"               // the latency SLI burns at the page tier
	StateRegressed = "CAPACITY REGRESSED" // the last ladder's capacity fell across an identity change
	StateBlocked   = "PROBER BLOCKED"     // the prober cannot send or cannot be trusted: budget, cap, host
	StateNoData    = "NO DATA"            // nothing to judge, with the reason
	StateTooFew    = "TOO FEW EVENTS"     // events, too few to judge
	StateLadder    = "LADDER RUNNING"     // a ladder holds the baseline out of the SLO
	StateOK        = "OK"
	StateDisabled  = "DISABLED" // baseline probing is off by configuration
)

// timeOfDayLayout is how the card names a time of day.
const timeOfDayLayout = "15:04 UTC"

// stateOrder ranks the states, worst first.
var stateOrder = []string{StateDown, StateRefused, StateFailing, StateWrong, StateSlow, StateRegressed, StateBlocked,
	StateNoData, StateTooFew, StateLadder, StateOK, StateDisabled}

// stateRank is a state's place in stateOrder (unknown states last).
func stateRank(s string) int {
	for i, o := range stateOrder {
		if o == s {
			return i
		}
	}
	return len(stateOrder)
}

// judgeInput is everything a card's state is judged from.
type judgeInput struct {
	now        time.Time
	started    time.Time
	t          TargetInput
	classes    []ClassJudgement // worst first
	regression *Regression
}

// judgeCard is the target's state with its evidence and next step.
func judgeCard(in judgeInput) TargetState {
	t := in.t
	if t.Configured.BaselineOff {
		return disabledState(t)
	}
	st := slo.StateNoData
	var worst ClassJudgement
	if len(in.classes) > 0 {
		worst = in.classes[0]
		st = worst.state
	}
	if st == slo.StateDown || st == slo.StateFailing {
		return failingState(st, worst, t.Failures)
	}
	// Wrong answers are worse than slow ones and than a blocked prober:
	// whatever the prober's state, the answers it judged were wrong.
	if w := wrongAnswersState(t); w != nil {
		return *w
	}
	if b := sendBlocked(in); b != nil {
		return *b
	}
	switch {
	case st == slo.StateSlow:
		return slowState(worst, t)
	case in.regression != nil: // a valid ladder's finding: the host's state now does not undo it
		return regressedState(*in.regression)
	case t.Ladder != nil:
		return ladderState(*t.Ladder)
	}
	if b := hostBlocked(in); b != nil {
		return *b
	}
	switch {
	case st == slo.StateNoData:
		return noDataState(in)
	}
	if few, short := tooFew(worst, hasGate(t.Classes, worst.class)); few != "" {
		next := "Wait for more baseline events (or raise baseline.rate): the state is judged once there are enough."
		if r := t.Configured.BaselineRate; r > 0 {
			next = fmt.Sprintf("Wait: at baseline.rate %s req/s the events it needs come in about %s (if fewer than that come in an hour, raise the rate).",
				durfmt.Rate(r), durfmt.Format(time.Duration(float64(short)/r*float64(time.Second)).Round(time.Second)))
		}
		return TargetState{State: StateTooFew, Figures: few + ". " + stateFigures(worst), Next: next}
	}
	next := "Nothing to do: availability and latency are within their page tier."
	if missing := ungated(t.Classes); missing != "" {
		next = "Nothing to do for availability (within its page tier). No latency SLI: class " + missing +
			" has no TTFT gate (gates.ttft), so slow first tokens are judged by nothing."
	}
	return TargetState{State: StateOK, Figures: stateFigures(worst) + abortNote(t, in.now), Next: next}
}

func disabledState(t TargetInput) TargetState {
	fig := "baseline probing is off in this target's configuration (baseline.enabled false or rate 0): no SLO is judged"
	if t.Configured.Ladder {
		fig += "; its ladders still run"
	}
	return TargetState{State: StateDisabled, Figures: fig,
		Next: "Nothing to do if intended; to probe it, set baseline.enabled: true and a rate."}
}

// failingState tells DOWN (nothing answers), REFUSED (it answers, refusing
// the prober) and FAILING (it answers, with errors) apart.
func failingState(st slo.State, j ClassJudgement, failures []Failure) TargetState {
	a := j.shortAvail
	figs := stateFigures(j)
	switch {
	case a.Refused > 0 && 2*a.Refused >= a.Failed:
		f, _ := lastFailure(failures, func(f Failure) bool { return f.Reason == "unauthorized" || f.Reason == "not_found" })
		ev := fmt.Sprintf("%d of %d sent in the last 5 min refused", a.Refused, a.Sent)
		next := "The target refuses the prober's credentials (HTTP " + statusOr(f.Status, "401/403") +
			"): check the key the prober sends (api_key_env) against the target's."
		if f.Reason == "not_found" {
			next = "The target does not serve what the prober asks for (HTTP 404): check the configured model and url against the target's GET /models."
		}
		return TargetState{State: StateRefused, Figures: ev + failureText(f) + ". " + figs, Next: next}
	case st == slo.StateDown && a.Answered == 0:
		f, _ := lastFailure(failures, func(Failure) bool { return true })
		return TargetState{State: StateDown, Figures: fmt.Sprintf("none of %d sent in the last 5 min got an answer", a.Sent) + failureText(f) + ". " + figs,
			Next: "Nothing answers: is the target up and reachable from the prober (host, port, network)? Read the last failures below."}
	}
	f, _ := lastFailure(failures, func(f Failure) bool { return f.Status != 0 })
	return TargetState{State: StateFailing, Figures: fmt.Sprintf("%d of %d sent in the last 5 min failed", a.Failed, a.Sent) + failureText(f) + ". " + figs,
		Next: "The target answers with errors: read the last failures below by outcome/reason, then the target's own errors and any identity change."}
}

// lastFailure is the newest failure that ok accepts.
func lastFailure(fs []Failure, ok func(Failure) bool) (Failure, bool) {
	for _, f := range fs {
		if ok(f) {
			return f, true
		}
	}
	return Failure{}, false
}

// failureText is "; last: outcome/reason (HTTP s): excerpt" ("" for none);
// the excerpt was cleaned by the one sanitiser before it reached the page.
func failureText(f Failure) string {
	if f.Outcome == "" {
		return ""
	}
	txt := "; last: " + f.Outcome + "/" + f.Reason
	if f.Status != 0 {
		txt += fmt.Sprintf(" (HTTP %d)", f.Status)
	}
	if f.Error != "" {
		txt += ": " + excerpt(f.Error, 120)
	}
	return txt
}

func statusOr(s int, or string) string {
	if s == 0 {
		return or
	}
	return fmt.Sprint(s)
}

// excerpt cuts s (already cleaned) to at most n runes.
func excerpt(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}

// slowState is SLOW with the gate beside the p99 (and the prober's
// verdict when it is invalid: a starved prober adds its own delay, seldom
// a whole gate's worth).
func slowState(j ClassJudgement, t TargetInput) TargetState {
	gate := "its gate"
	for _, c := range t.Classes {
		if c.Name == j.class && c.TTFT > 0 {
			gate = "the gate " + durfmt.Format(c.TTFT)
		}
	}
	ev := fmt.Sprintf("class %s: TTFT p99 %s (n=%d, last 60 min) against %s; %d of %d first tokens over it",
		j.class, durfmt.Format(j.ttft.P99), j.ttft.Count, gate, j.long.LatencyBad, j.long.LatencyEvents)
	if !t.Verdict.Valid && len(t.Verdict.Causes) > 0 {
		ev += " (the prober's own verdict is invalid too: " + strings.Join(t.Verdict.CauseNames(), ", ") + ", see its badge)"
	}
	return TargetState{State: StateSlow, Figures: ev + ". " + stateFigures(j),
		Next: "First tokens are over the class's gate: check the target's queue and load, an identity change, the last ladder's capacity."}
}

func ladderState(l LadderProgress) TargetState {
	return TargetState{State: StateLadder,
		Figures: fmt.Sprintf("step %d of %d at %s req/s; the baseline is held out of the SLO until about %s (if every step runs)",
			l.Step, l.Steps, durfmt.Rate(l.Rate), l.HeldUntil().UTC().Format(timeOfDayLayout)),
		Next: "Nothing to do: the state is judged again once the ladder and its settle time are over."}
}

func regressedState(r Regression) TargetState {
	drop := fmt.Sprintf("capacity %s → %s req/s (%s of before; the alert's threshold is %s)", durfmt.Rate(r.Prev), durfmt.Rate(r.New), pctOf(r.New, r.Prev), pctText(r.Fraction))
	if r.NewNone {
		drop = fmt.Sprintf("capacity %s req/s → none (no valid step met the gates)", durfmt.Rate(r.Prev))
	}
	return TargetState{State: StateRegressed,
		Figures: fmt.Sprintf("%s after the identity changed from %s to %s", drop, identityText(r.PrevIdentity), identityText(r.NewIdentity)),
		Next:    "The new deploy serves less: compare its configuration (slots, batch size, quantisation) with the previous one's; roll back if the capacity is needed."}
}

func pctOf(a, b float64) string {
	if b <= 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.0f %%", 100*a/b)
}

func identityText(id IdentityOf) string {
	switch {
	case id.Model == "" && id.Version == "":
		return "an unknown identity"
	case id.Version == "":
		return id.Model
	}
	return id.Model + " " + id.Version
}

// sendBlocked is PROBER BLOCKED when the prober cannot send: its budget
// is spent, or its in-flight or rate cap held back every arrival of the
// last 5 minutes; nil otherwise.
func sendBlocked(in judgeInput) *TargetState {
	if b := in.t.Budget; b != nil && ((b.TokensLimited && b.Tokens <= 0) || (b.RequestsLimited && b.Requests <= 0)) {
		return &TargetState{State: StateBlocked,
			Figures: fmt.Sprintf("today's budget is spent (%d requests, %d tokens used); probing resumes at %s", b.RequestsUsed, b.TokensUsed, b.ResetAt.UTC().Format(timeOfDayLayout)),
			Next:    "Raise budget.tokens_per_day / requests_per_day, or lower the baseline rate or lengths so the day's traffic fits."}
	}
	var capped availCounts
	if len(in.classes) > 0 {
		capped = in.classes[0].shortAvail
	}
	if capped.UnsentCap > 0 && capped.Sent == 0 {
		return &TargetState{State: StateBlocked,
			Figures: fmt.Sprintf("%d baseline arrivals in the last 5 min were held back by the prober's in-flight or rate cap, none sent", capped.UnsentCap),
			Next:    "Raise the target's max_in_flight (or lower the rate); see the generator verdict."}
	}
	return nil
}

// hostBlocked is PROBER BLOCKED when the prober's figures describe the
// prober (its host starved, its cgroup throttled, its in-flight cap
// reached): nothing can be said OK; nil otherwise.
func hostBlocked(in judgeInput) *TargetState {
	t := in.t
	var why, do []string
	for _, c := range t.Verdict.Causes {
		if c.Cause.IsHost() || c.Cause == cause.InFlightCap {
			why, do = append(why, c.Reason), append(do, c.Action)
		}
	}
	if t.Verdict.Valid || len(why) == 0 {
		return nil
	}
	return &TargetState{State: StateBlocked,
		Figures: "the prober's figures may describe the prober, not the target: " + strings.Join(why, "; ") + abortNote(t, in.now),
		Next:    strings.Join(do, "; ") + "."}
}

// noDataState is NO DATA with its true reason.
func noDataState(in judgeInput) TargetState {
	t := in.t
	switch {
	case t.Held.Until.After(in.now):
		return TargetState{State: StateNoData,
			Figures: fmt.Sprintf("the baseline is held out of the SLO until %s (the last ladder's settle time); %d of %d baseline requests so far were planned during ladders",
				t.Held.Until.UTC().Format(timeOfDayLayout), t.Held.During, t.Held.Outside+t.Held.During) + abortNote(t, in.now),
			Next: "Nothing to do: the state is judged once baseline requests outside ladders finish."}
	case !in.started.IsZero() && in.now.Sub(in.started) < slo.PageTiers()[0].Long:
		return TargetState{State: StateNoData,
			Figures: "no baseline request has finished since the daemon started at " + in.started.UTC().Format(timeOfDayLayout) + abortNote(t, in.now),
			Next:    "Wait for the first baseline requests; if none come, see the prober badge and the budget."}
	}
	return TargetState{State: StateNoData, Figures: "no baseline request was sent in the last 60 min" + abortNote(t, in.now),
		Next: "Is the prober sending? See the prober badge, the budget and the in-flight cap."}
}

// abortNote is "; the last ladder aborted …; next ladder …" when the
// prober aborted the last ladder ("" otherwise: a rule about the target
// ending a ladder is how a ladder finds its top).
func abortNote(t TargetInput, now time.Time) string {
	if t.Last == nil || !proberAborted(*t.Last) {
		return ""
	}
	return "; " + abortText(*t.Last) + "; " + nextLadderText(t.NextLadder, now)
}

// proberAborted reports whether the prober aborted the ladder (generator
// invalid, unsent arrivals, an interrupt), not a rule about the target.
func proberAborted(res ladder.Result) bool {
	if !res.Aborted {
		return false
	}
	if len(res.Steps) == 0 {
		return true
	}
	return ladder.AbortedBy(res.Steps[len(res.Steps)-1].AbortReason) != ""
}

// abortText says why a ladder aborted, naming the prober when it was the
// prober's doing (host starved, cgroup throttled, cap), never as a target
// that met no gate.
func abortText(res ladder.Result) string {
	step := len(res.Steps)
	if step == 0 {
		return "the last ladder aborted before its first step: " + res.AbortReason
	}
	s := res.Steps[step-1]
	switch ladder.AbortedBy(s.AbortReason) {
	case ladder.ReasonGeneratorInvalid:
		for _, c := range s.Summary.Validity.Causes {
			if c.Cause.IsHost() {
				return fmt.Sprintf("the last ladder aborted at step %d because the prober host was starved (%s), not because of the target", step, c.Cause)
			}
		}
		return fmt.Sprintf("the last ladder aborted at step %d because the prober could not keep its schedule (%s), not because of the target",
			step, strings.Join(s.Summary.Validity.CauseNames(), ", "))
	case ladder.ReasonUnsent:
		return fmt.Sprintf("the last ladder aborted at step %d because the prober held arrivals back (its cap or budget), not because of the target", step)
	case ladder.ReasonInterrupted:
		return fmt.Sprintf("the last ladder was interrupted at step %d", step)
	}
	return fmt.Sprintf("the last ladder aborted at step %d: %s", step, s.AbortReason)
}

// nextLadderText says when the next ladder runs.
func nextLadderText(next, now time.Time) string {
	if next.IsZero() {
		return "no ladder is scheduled (no ladder.every or daily): the next runs on an identity change or a restart"
	}
	return "next ladder at " + next.UTC().Format(timeOfDayLayout) + " (in " + durfmt.Format(next.Sub(now).Round(time.Second)) + ")"
}

// minEvents is the fewest events an SLI needs before OK can be said: with
// fewer, a target burning at the page tier's rate would, with more than
// 5 % chance, have shown no bad event at all. For the shipped objectives:
// 41 availability events, 20 latency events.
func minEvents(objective float64) int {
	p := slo.PageTiers()[0].BurnRate(objective)
	return int(math.Ceil(math.Log(0.05) / math.Log(1-p)))
}

// tooFew says why a class's events are too few to judge ("" when
// enough), and how many more it needs.
func tooFew(j ClassJudgement, gated bool) (string, int) {
	if n, need := j.long.Sent, minEvents(slo.AvailabilityObjective); n < need {
		return fmt.Sprintf("%d baseline requests sent in the last 60 min (%d failed); OK needs at least %d, enough that a page-tier burn would show", n, j.long.Failed, need), need - n
	}
	if n, need := j.long.LatencyEvents, minEvents(slo.LatencyObjective); gated && n < need {
		return fmt.Sprintf("%d first tokens judged against the gate in the last 60 min; OK needs at least %d", n, need), need - n
	}
	return "", 0
}

// hasGate reports whether class has a TTFT gate (a class the facts do not
// name is taken as gated: the latency rows show what was counted).
func hasGate(classes []ClassFacts, class string) bool {
	for _, c := range classes {
		if c.Name == class {
			return c.TTFT > 0
		}
	}
	return true
}

// ungated names the classes without a TTFT gate ("" when every class has one).
func ungated(classes []ClassFacts) string {
	var out []string
	for _, c := range classes {
		if c.TTFT <= 0 {
			out = append(out, c.Name)
		}
	}
	return strings.Join(out, ", ")
}
