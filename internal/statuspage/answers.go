package statuspage

import (
	"sort"

	"github.com/llmprobe/llmprobe/internal/slo"
)

// The answer checks on the card (issue 29, docs/checks.md): the state
// WRONG ANSWERS when the correctness SLI (judged checks that failed) burns
// at the first page tier, as LLMProbeCorrectnessBurnRatePage's first tier
// judges it, and the failing checks with their reasons and counts. The
// daemon hands over tallies (Answers); the words are words.go's. Never an
// answer's text: a check's name, result and reason are all the page gets.

// CheckCount is one answer check's results in a window, under one
// identity of the target (the identity when each result came in; zero
// when not yet known).
type CheckCount struct {
	Class, Check          string
	Identity              IdentityOf
	Pass, Fail, NotJudged int
	// Reasons counts the fails by reason (answercheck.Reason's values).
	Reasons map[string]int
}

// Answers are a target's answer-check tallies over the first page tier's
// short and long windows (5 and 60 minutes), what the card judges WRONG
// ANSWERS from. Nil: the target ran no check.
type Answers struct {
	Short, Long []CheckCount
}

// CheckRow is one check on the card: its results over the long window
// (every identity), the fail reasons with their counts, and the identity
// note ("" when it ran under one identity only).
type CheckRow struct {
	Class, Check          string
	Pass, Fail, NotJudged int
	Reasons               string // "mismatch ×12, invalid_json ×3"
	Identities            string // "failed under m v2; passed under m v1"
	Failing               bool
}

// classCorrectness sums a window's judged checks and fails by class.
func classCorrectness(cs []CheckCount) map[string][2]int {
	out := map[string][2]int{}
	for _, c := range cs {
		v := out[c.Class]
		v[0] += c.Pass + c.Fail
		v[1] += c.Fail
		out[c.Class] = v
	}
	return out
}

// wrongClass is the class whose correctness burns at the first page tier
// (the worst long-window ratio, then by name), with its short and long
// (judged, failed) counts; ok is false when none burns.
func wrongClass(a *Answers) (class string, short, long [2]int, ok bool) {
	if a == nil {
		return "", short, long, false
	}
	page := slo.PageTiers()[0]
	s, l := classCorrectness(a.Short), classCorrectness(a.Long)
	names := make([]string, 0, len(l))
	for n := range l {
		names = append(names, n)
	}
	sort.Strings(names)
	best := -1.0
	for _, n := range names {
		if !slo.Burning(page, slo.CorrectnessObjective, s[n][1], s[n][0], l[n][1], l[n][0]) {
			continue
		}
		if r := float64(l[n][1]) / float64(l[n][0]); r > best {
			class, short, long, ok, best = n, s[n], l[n], true, r
		}
	}
	return class, short, long, ok
}

// wrongAnswersState is WRONG ANSWERS with the failing checks of the
// burning class and the identities they failed and passed under; nil
// when no class's correctness burns.
func wrongAnswersState(t TargetInput) *TargetState {
	class, short, long, ok := wrongClass(t.Answers)
	if !ok {
		return nil
	}
	rows := checkRows(t.Answers.Long)
	var failing []CheckRow
	for _, r := range rows {
		if r.Class == class && r.Failing {
			failing = append(failing, r)
		}
	}
	return &TargetState{State: StateWrong, Figures: wrongFigures(class, short, long, failing), Next: wrongNext(t.Name, failing)}
}

// checkRows are the long window's checks, one row per (class, check),
// failing first, then by class and check.
func checkRows(cs []CheckCount) []CheckRow {
	type key struct{ class, check string }
	byKey := map[key][]CheckCount{}
	for _, c := range cs {
		k := key{c.Class, c.Check}
		byKey[k] = append(byKey[k], c)
	}
	var out []CheckRow
	for k, counts := range byKey {
		r := CheckRow{Class: k.class, Check: k.check}
		reasons := map[string]int{}
		for _, c := range counts {
			r.Pass, r.Fail, r.NotJudged = r.Pass+c.Pass, r.Fail+c.Fail, r.NotJudged+c.NotJudged
			for rs, n := range c.Reasons {
				reasons[rs] += n
			}
		}
		r.Failing = r.Fail > 0
		r.Reasons = reasonsText(reasons)
		r.Identities = identitiesText(counts)
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Failing != out[j].Failing {
			return out[i].Failing
		}
		if out[i].Class != out[j].Class {
			return out[i].Class < out[j].Class
		}
		return out[i].Check < out[j].Check
	})
	return out
}

// correctnessRows are the SLO rows of the answer checks, per class with
// judged or not-judged checks in the hour, counted as the correctness
// rules count them (nil without checks).
func correctnessRows(a *Answers) []SLORow {
	if a == nil {
		return nil
	}
	s, l := classCorrectness(a.Short), classCorrectness(a.Long)
	names := make([]string, 0, len(l))
	for n := range l {
		names = append(names, n)
	}
	sort.Strings(names)
	var rows []SLORow
	for _, n := range names {
		of := ""
		if len(names) > 1 {
			of = ", class " + n
		}
		r := sloRow("correctness (answer checks failed / judged)"+of, slo.CorrectnessObjective, s[n][1], s[n][0], l[n][1], l[n][0], slo.MinBadEvents)
		if r.NoData {
			r.State = "no data: no check judged in the last 60 minutes (a check whose request failed is not judged)"
		}
		rows = append(rows, r)
	}
	return rows
}
