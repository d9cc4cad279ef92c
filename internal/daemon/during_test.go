package daemon

import (
	"io"
	"strings"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/ledger"
)

// TestBaselineDuringLadderLabelled: the target's baseline arrivals planned
// while a ladder runs, and within ladder.baseline_settle after it ended, are
// labelled during="ladder" in the ledger, the metrics, the budget split and
// the status page; those planned before the ladder and after the settle
// time are not.
func TestBaselineDuringLadderLabelled(t *testing.T) {
	if testing.Short() {
		t.Skip("full tier: a daemon's baseline through a whole ladder and its settle time, in real time")
	}
	fake := newFakeTarget(t)
	const settle = 800 * time.Millisecond
	extra := `    budget: {requests_per_day: 100000}
    identity: {models_field: root}
    ladder:
      enabled: true
      run_on_identity_change: true
      steps: [10, 20]
      step_duration: 1s
      gap: 200ms
      max_rate: 50
      baseline_settle: 800ms
`
	sink := &recSink{}
	r := startDaemon(t, loadConfig(t, configYAML("5s", targetYAML("t1", fake.url, 20, extra))), func(o *Options) {
		o.Sinks = append(o.Sinks, sink)
	})
	// Baseline only, then a deploy starts the ladder; wait for it to end,
	// then for the settle time to pass with baseline arrivals after it.
	time.Sleep(600 * time.Millisecond)
	fake.root.Store("build-2")
	waitFor(t, 20*time.Second, "the ladder to finish", func() bool {
		r.d.mu.Lock()
		defer r.d.mu.Unlock()
		_, ok := r.d.last["t1"]
		return ok
	})
	// The ladder's span began when the ladder did, before its first
	// step's first arrival (on a loaded host by tens of milliseconds).
	r.d.mu.Lock()
	span := &r.d.targets["t1"].state.ladderSpan
	r.d.mu.Unlock()
	span.mu.Lock()
	begun := span.start
	span.mu.Unlock()
	time.Sleep(settle + time.Second)

	page := r.get(t, "/")
	if !strings.Contains(page, "baseline during ladders") || !strings.Contains(page, "baseline requests") {
		t.Errorf("status page does not account for baseline requests during ladders")
	}
	if !strings.Contains(page, "baseline during ladders ") || !strings.Contains(page, "ladders ") {
		t.Errorf("status page lacks the budget split")
	}
	fams := r.metrics(t)
	if err := r.stop(t); err != nil {
		t.Fatal(err)
	}

	ladderRecs := sink.where(func(s seen) bool { return s.traffic == ledger.TrafficLadder })
	if len(ladderRecs) == 0 {
		t.Fatal("no ladder records")
	}
	first, lastEnd := ladderRecs[0].planned, time.Duration(0)
	for _, s := range ladderRecs {
		first = min(first, s.planned)
		lastEnd = max(lastEnd, s.end)
		if s.during != ledger.DuringLadder {
			t.Errorf("ladder record (step %d) with during %q", s.step, s.during)
		}
	}
	var before, inside, settling, after, inLabelled, settleLabelled int
	for _, s := range sink.where(func(s seen) bool { return s.traffic == ledger.TrafficBaseline && s.attempt <= 1 }) {
		switch {
		case s.planned < begun:
			before++
			if s.during != "" {
				t.Errorf("baseline planned at %v, before the ladder began (%v; its first arrival %v), labelled %q", s.planned, begun, first, s.during)
			}
		case s.planned < first:
			// Between the ladder's start and its first arrival: labelled
			// ladder, as the ladder had begun.
			if s.during != ledger.DuringLadder {
				t.Errorf("baseline planned at %v, after the ladder began (%v), labelled %q", s.planned, begun, s.during)
			}
		case s.planned >= first && s.planned <= lastEnd:
			inside++
			if s.during == ledger.DuringLadder {
				inLabelled++
			} else {
				t.Errorf("baseline planned at %v, during the ladder (%v–%v), labelled %q", s.planned, first, lastEnd, s.during)
			}
		case s.planned > lastEnd+100*time.Millisecond && s.planned < lastEnd+settle-100*time.Millisecond:
			settling++
			if s.during == ledger.DuringLadder {
				settleLabelled++
			} else {
				t.Errorf("baseline planned at %v, within the settle time after the ladder ended (%v), labelled %q", s.planned, lastEnd, s.during)
			}
		case s.planned > lastEnd+settle+300*time.Millisecond:
			after++
			if s.during != "" {
				t.Errorf("baseline planned at %v, after the settle time (ladder ended %v), labelled %q", s.planned, lastEnd, s.during)
			}
		}
	}
	t.Logf("baseline: %d before, %d during (%d labelled), %d settling (%d labelled), %d after", before, inside, inLabelled, settling, settleLabelled, after)
	if before < 3 || inside < 10 || settling < 3 || after < 3 {
		t.Fatalf("too few baseline arrivals to judge: %d before, %d during, %d settling, %d after", before, inside, settling, after)
	}
	// The metrics say the same as the ledger.
	labelled := sink.count(func(s seen) bool {
		return s.traffic == ledger.TrafficBaseline && s.attempt <= 1 && s.during == ledger.DuringLadder
	})
	if v, _ := sum(fams, "llmprobe_requests_planned_total", "target", "t1", "traffic", "baseline", "during", "ladder"); v < 1 || int(v) > labelled {
		t.Errorf("planned{baseline, during=ladder} = %v; the ledger labelled %d", v, labelled)
	}
	if v, ok := sum(fams, "llmprobe_requests_planned_total", "target", "t1", "traffic", "ladder", "during", "none"); ok && v != 0 {
		t.Errorf("ladder requests exported as during=none: %v", v)
	}
}

// get fetches an admin path.
func (r *running) get(t *testing.T, path string) string {
	t.Helper()
	resp, err := r.client.Get(r.admin + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
