package browser

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/llmprobe/llmprobe/internal/ledger"
	"github.com/llmprobe/llmprobe/internal/stats"
	"github.com/llmprobe/llmprobe/internal/statuspage"
	"github.com/llmprobe/llmprobe/internal/verdict"
)

// TestWrongAnswersCardInChromium: a target that answers fast and
// available but wrong shows WRONG ANSWERS first on its card, in the
// failing colour, before a SLOW target's card, with the failing check,
// its reason and count in the evidence and in the card's answer-checks
// table, and never an answer's text. The page is served from the typed
// facts the daemon hands over (the daemon's feed is tested in
// internal/daemon). With LLMPROBE_SCREENSHOTS=DIR the card is saved as
// DIR/card-wrong-answers.png.
func TestWrongAnswersCardInChromium(t *testing.T) {
	chrome, _ := chromiumPath(t)
	now := time.Now()
	gate := stats.Gates{TTFT: 500 * time.Millisecond}
	classes := []statuspage.ClassFacts{{Name: "canary", TTFT: gate.TTFT}}
	mem := func(ttft time.Duration) *statuspage.Memory {
		m := statuspage.NewMemory()
		for range 100 {
			m.Record(now, &ledger.Record{Class: "canary", Traffic: ledger.TrafficBaseline, Outcome: ledger.OK, Reason: ledger.ReasonStop,
				FirstContent: ttft, End: ttft + time.Millisecond}, gate)
		}
		return m
	}
	v1, v2 := statuspage.IdentityOf{Model: "sim", Version: "v1"}, statuspage.IdentityOf{Model: "sim", Version: "v2"}
	wrong := statuspage.TargetInput{Name: "wrong", Memory: mem(100 * time.Millisecond), Classes: classes, Verdict: verdict.Validity{Valid: true},
		Answers: &statuspage.Answers{
			Short: []statuspage.CheckCount{{Class: "canary", Check: "add", Identity: v2, Fail: 5, Reasons: map[string]int{"mismatch": 5}}},
			Long: []statuspage.CheckCount{{Class: "canary", Check: "add", Identity: v1, Pass: 30},
				{Class: "canary", Check: "add", Identity: v2, Fail: 30, Reasons: map[string]int{"mismatch": 30}},
				{Class: "canary", Check: "json", Identity: v2, Pass: 60}}}}
	slow := statuspage.TargetInput{Name: "slow", Memory: mem(2 * time.Second), Classes: classes, Verdict: verdict.Validity{Valid: true}}
	st := statuspage.Build(statuspage.Input{Now: now, Started: now.Add(-2 * time.Hour), Targets: []statuspage.TargetInput{slow, wrong}})
	srv := httptest.NewServer(statuspage.Handler(func() statuspage.Status { return st }, nil))
	t.Cleanup(srv.Close)

	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	bctx := browser(t, ctx, chrome)
	c := readCard(t, bctx, srv.URL+"/", "wrong", "wrong-answers")
	if c.Word != statuspage.StateWrong {
		t.Fatalf("card shows %q, want %s", c.Word, statuspage.StateWrong)
	}
	for _, want := range []string{"add failed 30 of 60 (mismatch ×30)", "under sim v1: 30 passed, 0 failed; under sim v2: 0 passed, 30 failed"} {
		if !strings.Contains(c.Figures, want) {
			t.Errorf("evidence %q lacks %q", c.Figures, want)
		}
	}
	if !strings.Contains(c.Next, "answers wrong") || !strings.Contains(c.Next, "roll it back") {
		t.Errorf("next step %q", c.Next)
	}
	if len(c.Order) != 2 || c.Order[0] != statuspage.StateWrong || c.Order[1] != statuspage.StateSlow {
		t.Errorf("cards in order %v, want WRONG ANSWERS before SLOW", c.Order)
	}
	type shown struct {
		Color, Row string
	}
	s, err := chromedp.Run(bctx, chromedp.Evaluate[shown](`(() => {
		const sec = document.getElementById("target-wrong");
		const row = [...sec.querySelectorAll("table.checks tr")].find(tr => tr.innerText.includes("mismatch"));
		return {Color: getComputedStyle(sec.querySelector(".state .word")).color, Row: row ? row.innerText : ""};
	})()`))
	if err != nil {
		t.Fatal(err)
	}
	if s.Color != "rgb(176, 0, 32)" {
		t.Errorf("the state word's colour %s, want the failing red rgb(176, 0, 32)", s.Color)
	}
	if !strings.Contains(s.Row, "add") || !strings.Contains(s.Row, "30") || !strings.Contains(s.Row, "mismatch ×30") {
		t.Errorf("the answer-checks table's failing row reads %q", s.Row)
	}
}
