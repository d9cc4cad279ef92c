package daemon

import (
	"strings"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/answercheck"
	"github.com/llmprobe/llmprobe/internal/ladderresult"
	"github.com/llmprobe/llmprobe/internal/ledger"
	"github.com/llmprobe/llmprobe/internal/statuspage"
)

func checkRec(class, check string, res answercheck.Result, reason answercheck.Reason) *ledger.Record {
	return &ledger.Record{Target: "t1", Class: class, Traffic: ledger.TrafficBaseline, Outcome: ledger.OK, Reason: ledger.ReasonStop,
		Check: &ledger.CheckRecord{Name: check, Kind: answercheck.KindExpect, Result: res, Reason: reason, AnswerSHA256: "ab"}}
}

// TestCheckTally: results by class, check and identity over the windows
// asked for, reasons counted on fails, records without a check ignored,
// old minutes out of the window, and the keys bounded.
func TestCheckTally(t *testing.T) {
	now := time.Date(2026, 12, 5, 1, 0, 30, 0, time.UTC)
	v1, v2 := ladderresult.Identity{Model: "sim", Version: "v1"}, ladderresult.Identity{Model: "sim", Version: "v2"}
	var c checkTally
	if c.answers(now) != nil {
		t.Fatal("answers before any check")
	}
	c.record(now.Add(-30*time.Minute), checkRec("canary", "add", answercheck.Pass, ""), v1)
	c.record(now.Add(-2*time.Hour), checkRec("canary", "add", answercheck.Pass, ""), v1) // out of the hour
	for range 3 {
		c.record(now.Add(-time.Minute), checkRec("canary", "add", answercheck.Fail, answercheck.Mismatch), v2)
	}
	c.record(now, checkRec("canary", "add", answercheck.NotJudged, ""), v2)
	c.record(now, &ledger.Record{Class: "canary", Outcome: ledger.OK}, v2) // no check
	a := c.answers(now)
	if a == nil || len(a.Long) != 2 || len(a.Short) != 1 {
		t.Fatalf("answers %+v: want two identities over the hour, one in 5 min", a)
	}
	got := map[string]statuspage.CheckCount{}
	for _, cc := range a.Long {
		got[cc.Identity.Version] = cc
	}
	if g := got["v1"]; g.Pass != 1 || g.Fail != 0 || g.Class != "canary" || g.Check != "add" {
		t.Errorf("v1: %+v, want 1 pass", g)
	}
	if g := got["v2"]; g.Fail != 3 || g.NotJudged != 1 || g.Reasons["mismatch"] != 3 || len(g.Reasons) != 1 {
		t.Errorf("v2: %+v, want 3 fails (mismatch) and 1 not judged", g)
	}
	var b checkTally
	for i := range maxCheckKeys + 10 {
		b.record(now, checkRec("canary", "add", answercheck.Pass, ""), ladderresult.Identity{Model: "m", Version: string(rune('a'+i%26)) + string(rune('a'+i/26))})
	}
	if len(b.keys) != maxCheckKeys {
		t.Errorf("%d keys kept, want the bound %d", len(b.keys), maxCheckKeys)
	}
	// A key idle for an hour makes room.
	later := now.Add(2 * time.Hour)
	b.record(later, checkRec("canary", "copy", answercheck.Pass, ""), v1)
	if len(b.keys) != 1 {
		t.Errorf("%d keys after an idle hour, want the new one alone", len(b.keys))
	}
}

// TestDaemonCardSaysWrongAnswers: checks that fail on requests that end
// ok reach the target's card through the daemon's tally: WRONG ANSWERS,
// with the check and its reason, never an answer's text.
func TestDaemonCardSaysWrongAnswers(t *testing.T) {
	fake := newFakeTarget(t)
	r := startDaemon(t, loadConfig(t, configYAML("2s", targetYAML("t1", fake.url, 0.5, ""))), nil)
	r.d.mu.Lock()
	tr := r.d.targets["t1"]
	r.d.mu.Unlock()
	sink := tr.sink(r.d)
	for range 10 {
		rec := checkRec("canary", "add", answercheck.Fail, answercheck.Mismatch)
		rec.Check.Excerpt = "SECRET-ANSWER-TEXT"
		sink.Record(rec)
	}
	st := r.d.statusOf("t1")
	if len(st.Targets) != 1 {
		t.Fatalf("%d targets", len(st.Targets))
	}
	card := st.Targets[0]
	if card.Target.State != statuspage.StateWrong {
		t.Fatalf("state %q (%s), want %s", card.Target.State, card.Target.Figures, statuspage.StateWrong)
	}
	if len(card.Checks) != 1 || card.Checks[0].Check != "add" || card.Checks[0].Fail != 10 || card.Checks[0].Reasons != "mismatch ×10" {
		t.Errorf("checks %+v", card.Checks)
	}
	for _, s := range []string{card.Target.Figures, card.Target.Next, card.Checks[0].Reasons, card.Checks[0].Identities} {
		if strings.Contains(s, "SECRET-ANSWER-TEXT") {
			t.Errorf("the card shows an answer's text: %q", s)
		}
	}
	if err := r.stop(t); err != nil {
		t.Fatal(err)
	}
}
