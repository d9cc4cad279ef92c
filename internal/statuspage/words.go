package statuspage

import (
	"fmt"
	"sort"
	"strings"

	"github.com/llmprobe/llmprobe/internal/budget"
	"github.com/llmprobe/llmprobe/internal/durfmt"
	"github.com/llmprobe/llmprobe/internal/ladder"
	"github.com/llmprobe/llmprobe/internal/ledger"
	"github.com/llmprobe/llmprobe/internal/slo"
)

// The card's smaller facts in words, from the daemon's typed facts.

// activityText is what the prober is doing: "ladder step 3/8 at 12
// req/s", "budget spent until 00:00 UTC", "baseline off", "probing".
func activityText(t TargetInput) string {
	switch b := t.Budget; {
	case t.Ladder != nil:
		return fmt.Sprintf("ladder step %d/%d at %s req/s", t.Ladder.Step, t.Ladder.Steps, durfmt.Rate(t.Ladder.Rate))
	case t.Settle != nil:
		return settleText(*t.Settle)
	case t.Queued != nil:
		return queuedText(*t.Queued)
	case b != nil && ((b.TokensLimited && b.Tokens <= 0) || (b.RequestsLimited && b.Requests <= 0)):
		return "budget spent until " + b.ResetAt.UTC().Format(timeOfDayLayout)
	case t.Configured.BaselineOff:
		return "baseline off"
	}
	return "probing"
}

// outcomeText is "outcome/reason", or "none yet".
func outcomeText(o ledger.Outcome, r ledger.Reason) string {
	if o == "" {
		return "none yet"
	}
	return string(o) + "/" + string(r)
}

// heldText is the account of the baseline planned during ladders
// (labelled during="ladder", not in the SLO).
func heldText(h Held) string {
	txt := fmt.Sprintf("%d of %d baseline requests", h.During, h.Outside+h.During)
	switch {
	case h.Running:
		txt += "; labelled during=\"ladder\" now (a ladder is running)"
	case !h.Until.IsZero():
		txt += "; labelled during=\"ladder\" until " + h.Until.UTC().Format("2006-01-02 15:04:05 UTC") + " (settle)"
	}
	return txt
}

// budgetText is today's spend split by use ("" without a budget).
func budgetText(rem *budget.Remaining) string {
	if rem == nil {
		return ""
	}
	sp := func(tr ledger.Traffic, during ledger.During) budget.Spend {
		return rem.ByUse[budget.Use{Traffic: tr, During: during.Label()}]
	}
	base := sp(ledger.TrafficBaseline, ledger.DuringNone)
	dur := sp(ledger.TrafficBaseline, ledger.DuringLadder)
	lad := sp(ledger.TrafficLadder, ledger.DuringLadder)
	prb := sp(ledger.TrafficProbe, ledger.DuringNone) // /probe scrapes
	txt := fmt.Sprintf("%d requests, %d tokens: baseline %d/%d, baseline during ladders %d/%d, ladders %d/%d, /probe %d/%d (requests/tokens)",
		rem.RequestsUsed, rem.TokensUsed, base.Requests, base.Tokens, dur.Requests, dur.Tokens, lad.Requests, lad.Tokens, prb.Requests, prb.Tokens)
	if rem.InvalidUsage > 0 {
		txt += fmt.Sprintf("; %d answers reported impossible usage and were charged their upper bound (prompt estimate + max tokens)", rem.InvalidUsage)
	}
	return txt
}

// summaryText is the page's summary line: how many targets are in each
// state, worst first ("5 targets: 1 DOWN, 1 SLOW, 3 OK").
func summaryText(ts []TargetStatus) string {
	if len(ts) == 0 {
		return ""
	}
	n := map[string]int{}
	for _, t := range ts {
		n[t.Target.State]++
	}
	var parts []string
	for _, s := range stateOrder {
		if n[s] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n[s], s))
		}
	}
	word := "targets"
	if len(ts) == 1 {
		word = "target"
	}
	line := fmt.Sprintf("%d %s: %s", len(ts), word, strings.Join(parts, ", "))
	invalid := 0 // judged while the prober was invalid, beyond PROBER BLOCKED
	for _, t := range ts {
		if !t.Prober.Valid && t.Target.State != StateBlocked {
			invalid++
		}
	}
	if invalid > 0 {
		line += fmt.Sprintf("; %d more with the prober invalid: their state may describe the prober, not the target (marked below)", invalid)
	}
	return line
}

// LadderServerLog is the per-step server explanations of a ladder for its
// end log line ("" without server views).
func LadderServerLog(res ladder.Result) string {
	var parts []string
	for _, s := range res.Steps {
		if s.Server != nil {
			parts = append(parts, fmt.Sprintf("step %d (%s req/s): %s", s.Index, durfmt.Rate(s.Rate), s.Server.Explanation))
		}
	}
	return strings.Join(parts, " | ")
}

// Rates lists configured rates as every page and log line prints them
// ("0.5,1,2").
func Rates(rs []float64) string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = durfmt.Rate(r)
	}
	return strings.Join(out, ",")
}

// queuedText is a ladder waiting its turn: how many wait before it, what
// made it due and since when.
func queuedText(q LadderQueued) string {
	return fmt.Sprintf("ladder queued: %d ahead of it (%s, due since %s; limits.max_concurrent_ladders)",
		q.Ahead, q.Trigger, q.Since.UTC().Format(timeOfDayLayout))
}

// settleText is a ladder waiting for its target to settle: what it waits
// for, since when, and how long at most before it starts anyway.
func settleText(w LadderSettle) string {
	txt := fmt.Sprintf("waiting for the target to settle before the %s ladder (since %s", w.Trigger, w.Since.UTC().Format(timeOfDayLayout))
	if w.Max > 0 {
		txt += "; it starts anyway at " + w.Since.Add(w.Max).UTC().Format(timeOfDayLayout) + ", ladder.settle_max"
	}
	txt += ")"
	if why := SettleWhy(w); why != "" {
		txt += ": " + why
	}
	return txt
}

// SettleWhy is what a settle wait waits for, in words ("" when nothing
// is known): the card's activity line and the daemon's log say the same.
func SettleWhy(w LadderSettle) string {
	switch k := w.Waiting; {
	case w.LadderInFlight > 0:
		return fmt.Sprintf("%d requests of the previous ladder still in flight", w.LadderInFlight)
	case k.Kind == SettleFailed:
		return fmt.Sprintf("a baseline request failed (%s): the target is down or restarting", k.Failure)
	case k.Kind == SettleSlow && w.Limit > 0:
		return fmt.Sprintf("baseline TTFT %s above its normal range (up to %s)", durfmt.Format(k.TTFT), durfmt.Format(w.Limit))
	case w.Limit > 0 && w.BaselineTTFT > w.Limit:
		return fmt.Sprintf("baseline TTFT %s above its normal range (up to %s)", durfmt.Format(w.BaselineTTFT), durfmt.Format(w.Limit))
	case k.Kind == SettleFew:
		return fmt.Sprintf("%d of %d baseline answers since the target last changed", k.Answers, k.Need)
	case k.Kind == SettleNoIdentity:
		return "the target's identity (model and version) is not known yet"
	}
	return ""
}

// bufferedText is the path finding of a target whose streams an
// intermediary buffers ("" for none).
func bufferedText(b *Buffered) string {
	if b == nil || b.Streams == 0 {
		return ""
	}
	return fmt.Sprintf("%s (%d of %d ok streams since start, the last at %s). %s",
		b.Verdict, b.Streams, b.OK, b.Last.UTC().Format(timeOfDayLayout), b.Settings)
}

// reasonsText is a check's fails by reason, most first ("mismatch ×12,
// invalid_json ×3"; "" without fails).
func reasonsText(reasons map[string]int) string {
	type rc struct {
		r string
		n int
	}
	var rs []rc
	for r, n := range reasons {
		if n > 0 {
			rs = append(rs, rc{r, n})
		}
	}
	sort.Slice(rs, func(i, j int) bool {
		if rs[i].n != rs[j].n {
			return rs[i].n > rs[j].n
		}
		return rs[i].r < rs[j].r
	})
	parts := make([]string, len(rs))
	for i, x := range rs {
		parts[i] = fmt.Sprintf("%s ×%d", x.r, x.n)
	}
	return strings.Join(parts, ", ")
}

// identitiesText is a check's results per identity when it ran under more
// than one in the window ("under m v1: 30 passed, 0 failed; under m v2: 0
// passed, 12 failed"), "" otherwise.
func identitiesText(counts []CheckCount) string {
	type pf struct{ pass, fail int }
	by := map[string]pf{}
	known := map[IdentityOf]bool{}
	for _, c := range counts {
		v := by[identityText(c.Identity)]
		v.pass, v.fail = v.pass+c.Pass, v.fail+c.Fail
		by[identityText(c.Identity)] = v
		if c.Identity != (IdentityOf{}) {
			known[c.Identity] = true
		}
	}
	// Checks before the first identity poll ran under no known identity:
	// that is no change of identity, so two known ones are needed.
	if len(known) < 2 {
		return ""
	}
	ids := make([]string, 0, len(by))
	for id := range by {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = fmt.Sprintf("under %s: %d passed, %d failed", id, by[id].pass, by[id].fail)
	}
	return strings.Join(parts, "; ")
}

// wrongFigures is WRONG ANSWERS' evidence: the class's judged and failed
// checks over the first page tier's windows, its burn, and each failing
// check with its reasons (never an answer's text).
func wrongFigures(class string, short, long [2]int, failing []CheckRow) string {
	txt := fmt.Sprintf("class %s: %d of %d judged answer checks failed in the last 5 min, %d of %d in the last 60 min (correctness burn %s, objective %s; not_judged checks are availability's)",
		class, short[1], short[0], long[1], long[0], burn(long[1], long[0], slo.CorrectnessObjective), pctText(slo.CorrectnessObjective))
	var parts []string
	for _, r := range failing {
		p := fmt.Sprintf("%s failed %d of %d (%s)", r.Check, r.Fail, r.Pass+r.Fail, r.Reasons)
		if r.Identities != "" {
			p += " [" + r.Identities + "]"
		}
		parts = append(parts, p)
	}
	if len(parts) > 0 {
		txt += "; failing: " + strings.Join(parts, ", ")
	}
	return txt
}

// reasonHint is what a fail reason points at (docs/checks.md).
var reasonHint = map[string]string{
	"mismatch":       "a wrong text: the chat template, tokenizer or quantisation",
	"invalid_json":   "no JSON: structured output is not enforced",
	"schema":         "JSON off its schema: structured output is not enforced",
	"no_tool_call":   "no tool call: the tool-call parser or template (llama.cpp: --jinja)",
	"wrong_tool":     "another tool called: the tool-call parser or template",
	"bad_arguments":  "tool arguments off their schema: the tool-call parser",
	"stop_ignored":   "the stop sequence ignored: a proxy or server drops sampling parameters",
	"length_ignored": "max_tokens ignored: a proxy or server drops sampling parameters",
	"wrong_model":    "another model answers: the router's model mapping",
}

// wrongNext is WRONG ANSWERS' next step: what each failing reason points
// at, then where to read a failed check.
func wrongNext(target string, failing []CheckRow) string {
	var hints []string
	seen := map[string]bool{}
	changed := false
	for _, r := range failing {
		changed = changed || r.Identities != ""
		for _, part := range strings.Split(r.Reasons, ", ") {
			reason, _, _ := strings.Cut(part, " ×")
			if h, ok := reasonHint[reason]; ok && !seen[reason] {
				seen[reason] = true
				hints = append(hints, reason+" is "+h)
			}
		}
	}
	txt := "The target answers, and answers wrong"
	if len(hints) > 0 {
		txt += " (" + strings.Join(hints, "; ") + ")"
	}
	txt += ". Read a failed check in /debug/requests?target=" + target + " (its reason and the answer's hash; a sanitised excerpt with record_answers: excerpt)"
	if changed {
		txt += "; the checks ran under more than one identity in the hour: compare the deploy with the previous one, or roll it back"
	}
	return txt + "."
}
