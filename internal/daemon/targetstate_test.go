package daemon

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"

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

// TestTargetStateJudge: the state each traffic calls for, counted as the
// rules count it: a slow success is SLOW (never FAILING), unsent arrivals
// are no data (never FAILING), failures are FAILING, nothing ok is DOWN.
func TestTargetStateJudge(t *testing.T) {
	gates := stats.Gates{TTFT: 500 * time.Millisecond}
	for _, c := range []struct {
		name string
		feed func(add func(*ledger.Record))
		want slo.State
	}{
		{"nothing", func(func(*ledger.Record)) {}, slo.StateNoData},
		{"healthy", func(add func(*ledger.Record)) {
			for range 100 {
				add(stateRec("chat", ledger.OK, ledger.ReasonStop, 100*time.Millisecond))
			}
		}, slo.StateOK},
		{"slow but successful", func(add func(*ledger.Record)) {
			for range 100 {
				add(stateRec("chat", ledger.OK, ledger.ReasonStop, 2*time.Second))
			}
		}, slo.StateSlow},
		{"every arrival unsent (budget, cap)", func(add func(*ledger.Record)) {
			for i := range 100 {
				add(stateRec("chat", ledger.Unsent, []ledger.Reason{ledger.ReasonBudget, ledger.ReasonClientCap}[i%2], 0))
			}
		}, slo.StateNoData},
		{"stale connections and cancellations only fail nothing", func(add func(*ledger.Record)) {
			for i := range 100 {
				add(stateRec("chat", ledger.OK, ledger.ReasonStop, 100*time.Millisecond))
				if i%3 == 0 {
					add(stateRec("chat", ledger.TransportError, ledger.ReasonStaleConnection, 0))
					add(stateRec("chat", ledger.Cancelled, ledger.ReasonInjected, 0))
				}
			}
		}, slo.StateOK},
		{"a third rejected", func(add func(*ledger.Record)) {
			for i := range 90 {
				if i%3 == 0 {
					add(stateRec("chat", ledger.Rejected, ledger.ReasonStatus503, 0))
				} else {
					add(stateRec("chat", ledger.OK, ledger.ReasonStop, 100*time.Millisecond))
				}
			}
		}, slo.StateFailing},
		{"nothing succeeds", func(add func(*ledger.Record)) {
			for range 20 {
				add(stateRec("chat", ledger.TransportError, ledger.ReasonConnectionRefused, 0))
			}
		}, slo.StateDown},
	} {
		t.Run(c.name, func(t *testing.T) {
			sd, now := newStatusData(), time.Now()
			c.feed(func(r *ledger.Record) { sd.record(now, r, gates) })
			got, classes := sd.judge(now)
			if got != c.want {
				t.Errorf("state %s, want %s (%+v)", got, c.want, classes)
			}
		})
	}
}

// TestSpeakStatesOncePerChange: a target's state changes are logged once
// each, with the figures, and a healthy start is not a change worth a line.
func TestSpeakStatesOncePerChange(t *testing.T) {
	var buf bytes.Buffer
	clock := time.Now()
	st := newTargetState()
	d := &Daemon{log: slog.New(slog.NewJSONHandler(&buf, nil)), now: func() time.Time { return clock },
		targets: map[string]*targetRun{"t1": {name: "t1", state: st}}}
	gates := stats.Gates{TTFT: 500 * time.Millisecond}
	feed := func(n int, ttft time.Duration, o ledger.Outcome, r ledger.Reason) {
		for range n {
			st.status.record(clock, stateRec("chat", o, r, ttft), gates)
		}
	}
	feed(50, 100*time.Millisecond, ledger.OK, ledger.ReasonStop)
	d.speakStates() // OK at start: no line
	d.speakStates()
	clock = clock.Add(2 * time.Minute)
	feed(500, 2*time.Second, ledger.OK, ledger.ReasonStop)
	d.speakStates() // → SLOW
	d.speakStates()
	clock = clock.Add(2 * time.Minute)
	feed(300, 0, ledger.Rejected, ledger.ReasonStatus429)
	d.speakStates() // → FAILING
	d.speakStates()
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
	if strings.Join(got, " ") != "OK→SLOW SLOW→FAILING" {
		t.Errorf("state lines %q, want OK→SLOW then SLOW→FAILING, once each", got)
	}
}

// TestBadgeCauses: the badge names causes briefly and links the evidence.
func TestBadgeCauses(t *testing.T) {
	for _, c := range []struct {
		causes         []stats.Cause
		names, anchors string
	}{
		{[]stats.Cause{stats.CauseHostStarved}, "host", "#prober-host"},
		{[]stats.Cause{stats.CauseCgroupThrottled, stats.CauseDispatchLag}, "cgroup, lag", "#prober-host"},
		{[]stats.Cause{stats.CauseInFlightCap}, "cap", "#generator-t1"},
		{nil, "unknown", "#generator-t1"},
	} {
		var ic []stats.InvalidCause
		for _, x := range c.causes {
			ic = append(ic, stats.InvalidCause{Cause: x})
		}
		if n, a := badgeCauses(ic, "t1"); n != c.names || a != c.anchors {
			t.Errorf("%v: %q %q, want %q %q", c.causes, n, a, c.names, c.anchors)
		}
	}
}
