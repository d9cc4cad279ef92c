package statuspage

import (
	"strings"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/answercheck"
	"github.com/llmprobe/llmprobe/internal/budget"
	"github.com/llmprobe/llmprobe/internal/ledger"
	"github.com/llmprobe/llmprobe/internal/slo"
	"github.com/llmprobe/llmprobe/internal/stats"
	"github.com/llmprobe/llmprobe/internal/verdict"
)

// tally is one check's counts under identity v of model sim ("" for none).
func tally(class, check, v string, pass, fail, notJudged int, reason string) CheckCount {
	c := CheckCount{Class: class, Check: check, Pass: pass, Fail: fail, NotJudged: notJudged}
	if v != "" {
		c.Identity = IdentityOf{Model: "sim", Version: v}
	}
	if fail > 0 {
		c.Reasons = map[string]int{reason: fail}
	}
	return c
}

// TestWrongAnswersState: WRONG ANSWERS when the correctness SLI burns at
// the first page tier, below DOWN, REFUSED and FAILING, above SLOW and a
// blocked prober; never from not_judged checks or under the guard; its
// evidence names the failing checks, reasons and counts, and the
// identities they failed and passed under.
func TestWrongAnswersState(t *testing.T) {
	now := time.Date(2026, 12, 5, 1, 0, 0, 0, time.UTC)
	gate := stats.Gates{TTFT: 500 * time.Millisecond}
	gated := []ClassFacts{{Name: "chat", TTFT: gate.TTFT}, {Name: "canary", TTFT: gate.TTFT}}
	okRec := stateRec("chat", ledger.OK, ledger.ReasonStop, 100*time.Millisecond)
	healthy := func(m *Memory) { feed(m, now, 100, okRec, gate) }
	allWrong := &Answers{
		Short: []CheckCount{tally("canary", "add", "v1", 0, 5, 0, "mismatch")},
		Long:  []CheckCount{tally("canary", "add", "v1", 0, 60, 0, "mismatch"), tally("canary", "json", "v1", 60, 0, 0, "")},
	}
	for _, tc := range []struct {
		name    string
		mem     func(*Memory)
		in      TargetInput
		want    string
		figures []string
		next    []string
	}{
		{name: "fast, available and wrong", mem: healthy, in: TargetInput{Answers: allWrong}, want: StateWrong,
			figures: []string{"class canary: 5 of 5 judged answer checks failed in the last 5 min, 60 of 120 in the last 60 min", "correctness burn 100.0×", "failing: add failed 60 of 60 (mismatch ×60)"},
			next:    []string{"answers wrong", "mismatch is a wrong text", "/debug/requests?target=t1"}},
		{name: "one check of six always wrong", mem: healthy, in: TargetInput{Answers: &Answers{
			Short: []CheckCount{tally("canary", "add", "", 0, 1, 0, "mismatch"), tally("canary", "copy", "", 5, 0, 0, "")},
			Long:  []CheckCount{tally("canary", "add", "", 0, 10, 0, "mismatch"), tally("canary", "copy", "", 50, 0, 0, "")}}},
			want: StateWrong, figures: []string{"10 of 60 in the last 60 min"}},
		{name: "not_judged checks are availability's, not wrong answers", mem: healthy, in: TargetInput{Answers: &Answers{
			Short: []CheckCount{tally("canary", "add", "", 0, 0, 5, "")}, Long: []CheckCount{tally("canary", "add", "", 0, 0, 60, "")}}},
			want: StateOK},
		{name: "two wrong answers: the guard", mem: healthy, in: TargetInput{Answers: &Answers{
			Short: []CheckCount{tally("canary", "add", "", 0, 2, 0, "mismatch")}, Long: []CheckCount{tally("canary", "add", "", 0, 2, 0, "mismatch")}}},
			want: StateOK},
		{name: "slow and wrong: wrong answers are worse", mem: func(m *Memory) {
			feed(m, now, 100, stateRec("chat", ledger.OK, ledger.ReasonStop, 2*time.Second), gate)
		}, in: TargetInput{Answers: allWrong}, want: StateWrong},
		{name: "failing and wrong: failing is worse", mem: func(m *Memory) {
			feed(m, now, 10, failRec(ledger.HTTPError, ledger.ReasonServerError, 500), gate)
		}, in: TargetInput{Answers: allWrong}, want: StateFailing},
		{name: "down and wrong: down is worse", mem: func(m *Memory) {
			feed(m, now, 10, failRec(ledger.TransportError, ledger.ReasonConnectionRefused, 0), gate)
		}, in: TargetInput{Answers: allWrong}, want: StateDown},
		{name: "budget spent: the answers judged were still wrong", mem: healthy,
			in:   TargetInput{Answers: allWrong, Budget: &budget.Remaining{TokensLimited: true, Tokens: 0, ResetAt: now.Add(time.Hour)}},
			want: StateWrong},
		{name: "wrong after a deploy: both identities named", mem: healthy, in: TargetInput{Answers: &Answers{
			Short: []CheckCount{tally("canary", "tool", "v2", 0, 5, 0, "no_tool_call")},
			Long:  []CheckCount{tally("canary", "tool", "v1", 30, 0, 0, ""), tally("canary", "tool", "v2", 0, 20, 0, "no_tool_call")}}},
			want:    StateWrong,
			figures: []string{"tool failed 20 of 50 (no_tool_call ×20) [under sim v1: 30 passed, 0 failed; under sim v2: 0 passed, 20 failed]"},
			next:    []string{"no_tool_call is no tool call", "roll it back"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := NewMemory()
			if tc.mem != nil {
				tc.mem(m)
			}
			tc.in.Name, tc.in.Memory, tc.in.Classes = "t1", m, gated
			tc.in.Verdict.Valid = true
			st := Build(Input{Now: now, Targets: []TargetInput{tc.in}})
			got := st.Targets[0].Target
			if got.State != tc.want {
				t.Fatalf("state %q, want %q (%+v)", got.State, tc.want, got)
			}
			for _, f := range tc.figures {
				if !strings.Contains(got.Figures, f) {
					t.Errorf("evidence %q lacks %q", got.Figures, f)
				}
			}
			for _, n := range tc.next {
				if !strings.Contains(got.Next, n) {
					t.Errorf("next step %q lacks %q", got.Next, n)
				}
			}
			if got.State == StateWrong && JudgeTarget(now, time.Time{}, tc.in).State != StateWrong {
				t.Error("the state log judges otherwise than the card")
			}
		})
	}
	if !(stateRank(StateFailing) < stateRank(StateWrong) && stateRank(StateWrong) < stateRank(StateSlow)) {
		t.Error("state order: want FAILING before WRONG ANSWERS before SLOW")
	}
}

// TestCheckRowsOnTheCard: the card lists every check of the last hour,
// failing first, with its reasons and counts, and the page renders them
// (escaped like every word) under the state.
func TestCheckRowsOnTheCard(t *testing.T) {
	now := time.Date(2026, 12, 5, 1, 0, 0, 0, time.UTC)
	in := TargetInput{Name: "t1", Verdict: verdict.Validity{Valid: true}, Answers: &Answers{
		Short: []CheckCount{tally("canary", "add", "", 0, 5, 0, "mismatch")},
		Long: []CheckCount{tally("canary", "copy", "", 40, 0, 2, ""), tally("canary", "add", "", 0, 40, 1, "mismatch"),
			{Class: "canary", Check: "json", Pass: 10, Fail: 30, Reasons: map[string]int{"invalid_json": 20, "schema": 10}}}}}
	st := Build(Input{Now: now, Targets: []TargetInput{in}})
	rows := st.Targets[0].Checks
	if len(rows) != 3 || rows[0].Check != "add" || rows[1].Check != "json" || rows[2].Check != "copy" || rows[2].Failing {
		t.Fatalf("rows %+v: want add, json (failing), then copy", rows)
	}
	if rows[1].Reasons != "invalid_json ×20, schema ×10" || rows[0].NotJudged != 1 {
		t.Errorf("rows %+v", rows)
	}
	var sloRow *SLORow
	for i, r := range st.Targets[0].SLO {
		if strings.HasPrefix(r.SLI, "correctness") {
			sloRow = &st.Targets[0].SLO[i]
		}
	}
	if sloRow == nil || !sloRow.Burning || sloRow.Objective != "objective 99.5 %" || sloRow.Long != "58.33 % bad, burn 116.7×" {
		t.Errorf("correctness SLO row %+v", sloRow)
	}
	body := get(t, Handler(func() Status { return st }, nil)).Body.String()
	for _, want := range []string{`data-state="WRONG ANSWERS"`, `class="state state-wrong"`, "Answer checks (last 60 min)", "<td>invalid_json ×20, schema ×10</td>"} {
		if !strings.Contains(body, want) {
			t.Errorf("page lacks %q", want)
		}
	}
}

// TestCheckValuesAreTheContract: the result and reason words the page and
// slo count by are answercheck's (slo is a leaf and keeps copies).
func TestCheckValuesAreTheContract(t *testing.T) {
	if slo.CheckPass != string(answercheck.Pass) || slo.CheckFail != string(answercheck.Fail) || slo.CheckNotJudged != string(answercheck.NotJudged) {
		t.Error("slo's check results differ from answercheck's")
	}
	for _, r := range answercheck.Reasons() {
		if _, ok := reasonHint[string(r)]; !ok {
			t.Errorf("reason %s has no hint on the card", r)
		}
	}
	if len(reasonHint) != len(answercheck.Reasons()) {
		t.Errorf("%d hints for %d reasons", len(reasonHint), len(answercheck.Reasons()))
	}
}
