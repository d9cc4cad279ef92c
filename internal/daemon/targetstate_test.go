package daemon

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/config"
	"github.com/llmprobe/llmprobe/internal/ledger"
	"github.com/llmprobe/llmprobe/internal/slo"
	"github.com/llmprobe/llmprobe/internal/stats"
)

// TestSLIListsCoverLedger: every outcome and reason the ledger can record
// is classified by slo's lists on purpose: an outcome added to the ledger
// must be placed (event or not, failed or not) before this passes.
func TestSLIListsCoverLedger(t *testing.T) {
	known := append(append([]string{slo.GoodOutcome}, slo.NotEventOutcomes...), slo.FailedOutcomes...)
	for _, o := range ledger.Outcomes {
		if !strings.Contains(" "+strings.Join(known, " ")+" ", " "+string(o)+" ") {
			t.Errorf("outcome %s is in none of slo's lists", o)
		}
	}
	all := map[string]bool{}
	for _, o := range ledger.Outcomes {
		for _, r := range ledger.ReasonsFor(o) {
			all[string(r)] = true
		}
	}
	for _, r := range slo.NotEventReasons {
		if !all[r] {
			t.Errorf("slo.NotEventReasons names %q, which the ledger never records", r)
		}
	}
}

// rec is a baseline record of class c ending in o/r, its first token ttft
// after its planned send.
func stateRec(c string, o ledger.Outcome, r ledger.Reason, ttft time.Duration) *ledger.Record {
	return &ledger.Record{Target: "t1", Class: c, Traffic: ledger.TrafficBaseline, Outcome: o, Reason: r,
		Planned: time.Second, Dispatched: time.Second, Headers: time.Second + ttft, FirstContent: time.Second + ttft, End: 2*time.Second + ttft}
}

// TestSpeakStatesOncePerChange: a target's state changes are logged once
// each, with the figures, as its card judges them: one failed request is
// too few events to judge (never OK, not worth a line at start), then OK,
// SLOW, FAILING.
func TestSpeakStatesOncePerChange(t *testing.T) {
	var buf bytes.Buffer
	clock := time.Now()
	st := newTargetState()
	d := &Daemon{log: slog.New(slog.NewJSONHandler(&buf, nil)), now: func() time.Time { return clock },
		targets: map[string]*targetRun{"t1": {name: "t1", state: st, cfg: config.Target{Baseline: config.Baseline{Enabled: true, Rate: 1}}}}}
	gates := stats.Gates{TTFT: 500 * time.Millisecond}
	feed := func(n int, ttft time.Duration, o ledger.Outcome, r ledger.Reason) {
		for range n {
			st.status.Record(clock, stateRec("chat", o, r, ttft), gates)
		}
	}
	feed(1, 0, ledger.HTTPError, ledger.ReasonServerError)
	d.logStateChanges() // one event: too few to judge, quiet at start
	feed(50, 100*time.Millisecond, ledger.OK, ledger.ReasonStop)
	d.logStateChanges() // → OK
	d.logStateChanges()
	clock = clock.Add(2 * time.Minute)
	feed(500, 2*time.Second, ledger.OK, ledger.ReasonStop)
	d.logStateChanges() // → SLOW
	d.logStateChanges()
	clock = clock.Add(2 * time.Minute)
	feed(300, 0, ledger.Rejected, ledger.ReasonStatus429)
	d.logStateChanges() // → FAILING
	d.logStateChanges()
	var got []string
	for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		if line == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		if m["msg"] != "target state changed" || m["target"] != "t1" || !strings.Contains(m["figures"].(string), "sent") || m["next"] == "" {
			t.Errorf("line %v", m)
		}
		got = append(got, m["from"].(string)+"→"+m["state"].(string))
	}
	if strings.Join(got, " ") != "TOO FEW EVENTS→OK OK→SLOW SLOW→FAILING" {
		t.Errorf("state lines %q, want TOO FEW EVENTS→OK, OK→SLOW, SLOW→FAILING, once each", got)
	}
}
