package daemon

import (
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/ledger"
)

// TestFleetBaselineDuringLadder: on every shard of a fleet, the target's
// baseline arrivals planned while the fleet's ladder runs are labelled
// during="ladder", and each shard counts that ladder once: shard 0's
// ladder loop marks it around the coordination, the other shards' around
// their share (shard 0's share marking it again would count two ladders
// running and move the span's start).
func TestFleetBaselineDuringLadder(t *testing.T) {
	if testing.Short() {
		t.Skip("full tier: a fleet of in-process daemons over loopback HTTP on the fleet ladder's real timetable (synctest cannot hold real sockets)")
	}
	_, url := startFleetSim(t, nil)
	extra := "    baseline: {rate: 10, arrival: poisson}\n    ladder:\n      enabled: true\n      run_on_start: true\n      steps: [6]\n" +
		"      step_duration: 3s\n      gap: 2s\n      max_lag_p99: 100ms\n      good_fraction_target: 0.9\n      baseline_settle: 500ms\n"
	f := startTestFleet(t, 2, func(shard int, addrs []string) string {
		return fleetYAML(shard, addrs, "", fleetTarget(url, extra))
	})
	span := func(i int) *ladderSpan {
		d := f.shards[i].d
		d.mu.Lock()
		defer d.mu.Unlock()
		r, ok := d.targets["sim"]
		if !ok { // not started yet
			return nil
		}
		return &r.state.ladderSpan
	}
	most := make([]int, 2)
	deadline := time.Now().Add(45 * time.Second)
	for {
		for i := range 2 {
			s := span(i)
			if s == nil {
				continue
			}
			s.mu.Lock()
			most[i] = max(most[i], s.running)
			s.mu.Unlock()
		}
		if _, ok := f.lastFleet("sim"); ok || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	res, ok := f.lastFleet("sim")
	if !ok {
		t.Fatal("no fleet ladder within 45 s")
	}
	for i := range 2 {
		if most[i] != 1 {
			t.Errorf("shard %d: at most %d ladders running at once during the fleet's ladder, want 1", i, most[i])
		}
	}
	time.Sleep(3 * time.Second) // the ladder ends on every shard; baseline arrivals after its settle time
	for i := range 2 {
		ladderRecs := f.sinks[i].where(func(s seen) bool { return s.traffic == ledger.TrafficLadder })
		if len(ladderRecs) == 0 {
			t.Fatalf("shard %d: no ladder records (%+v)", i, res.ShardSteps)
		}
		first, lastEnd := ladderRecs[0].planned, time.Duration(0)
		for _, s := range ladderRecs {
			first, lastEnd = min(first, s.planned), max(lastEnd, s.end)
		}
		_, _, until, running := span(i).snapshot()
		if running || until < lastEnd {
			t.Errorf("shard %d: the ladder still running (%v), or labelled until %v, before its last request ended (%v)", i, running, until, lastEnd)
		}
		inside, after := 0, 0
		for _, s := range f.sinks[i].where(func(s seen) bool { return s.traffic == ledger.TrafficBaseline && s.attempt <= 1 }) {
			switch {
			case s.planned >= first && s.planned <= lastEnd:
				inside++
				if s.during != ledger.DuringLadder {
					t.Errorf("shard %d: baseline planned at %v, during the ladder (%v–%v), labelled %q", i, s.planned, first, lastEnd, s.during)
				}
			case s.planned >= until:
				after++
				if s.during != "" {
					t.Errorf("shard %d: baseline planned at %v, after the ladder and its settle (%v), labelled %q", i, s.planned, until, s.during)
				}
			}
		}
		t.Logf("shard %d: %d baseline arrivals during the ladder, %d after it", i, inside, after)
		if inside == 0 {
			t.Errorf("shard %d: no baseline arrival during the ladder to check", i)
		}
	}
}
