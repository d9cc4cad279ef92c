package daemon

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/ledger"
)

// TestFleetStepEndsEarly: a fleet's next step does not wait out the
// whole settle (timeouts.total, 20 s here) when every shard's requests of
// the step before have finished: the coordinator announces it ladder.gap
// after the results are in (at least fleet.AnnounceLead ahead), every
// shard offers it from that announced start, and its merged figures are
// as valid as on the fixed timetable.
func TestFleetStepEndsEarly(t *testing.T) {
	if testing.Short() {
		t.Skip("full tier: a fleet of in-process daemons over loopback HTTP on the fleet ladder's real timetable (synctest cannot hold real sockets)")
	}
	_, url := startFleetSim(t, nil)
	const stepDur, gap, total = 3 * time.Second, 2 * time.Second, 20 * time.Second
	f := startTestFleet(t, 2, func(shard int, addrs []string) string {
		target := strings.Replace(fleetTarget(url, ladderYAML("[6, 12]", "")),
			"total: 1500ms", "total: "+total.String(), 1)
		return fleetYAML(shard, addrs, "", target)
	})
	res := f.waitFleetLadder("sim", time.Time{}, 45*time.Second)
	if validOrHost(t, "fleet timetable", res.Result) && len(res.Steps) < 2 {
		t.Skip("step 1 was invalid for the prober host and stopped the ladder: no second step to time")
	}
	a, ok := f.announced(t)
	if !ok {
		t.Fatal("no announcement")
	}
	if len(a.StepStarts) != 2 || len(res.Steps) != 2 {
		t.Fatalf("announced starts %v, %d steps: want both steps run", a.StepStarts, len(res.Steps))
	}
	early := a.StepStarts[1].Sub(a.StepStarts[0])
	timetable := time.Duration(a.PeriodSeconds * float64(time.Second))
	t.Logf("step 2 started %v after step 1 (the fixed timetable: %v)", early.Round(time.Millisecond), timetable)
	if timetable != stepDur+total+gap {
		t.Fatalf("period %v, want step + total + gap = %v", timetable, stepDur+total+gap)
	}
	if early < stepDur+gap || early > stepDur+gap+5*time.Second {
		t.Errorf("step 2 started %v after step 1: want the step (%v) and the gap (%v) plus the few hundred ms its requests took, far below the timetable's %v",
			early, stepDur, gap, timetable)
	}
	for _, s := range res.ShardSteps {
		if s.Missing != "" || !shareValidOrHost(s) || s.Planned == 0 {
			t.Errorf("step %d, shard %d: missing %q, valid %v %v, planned %d", s.Step, s.Shard, s.Missing, s.Valid, s.InvalidCauses, s.Planned)
		}
	}
	// Every shard offered step 2 from the announced start, inside its window.
	for i := range 2 {
		var first, last time.Time
		n := 0
		for _, r := range f.sinks[i].where(func(s seen) bool { return s.traffic == ledger.TrafficLadder && s.step == 2 }) {
			w := f.wall(i, r.planned)
			if first.IsZero() || w.Before(first) {
				first = w
			}
			if w.After(last) {
				last = w
			}
			n++
		}
		desc := fmt.Sprintf("shard %d: %d arrivals of step 2, planned %v to %v after its announced start", i, n,
			first.Sub(a.StepStarts[1]).Round(time.Millisecond), last.Sub(a.StepStarts[1]).Round(time.Millisecond))
		t.Log(desc)
		if n == 0 || first.Before(a.StepStarts[1].Add(-50*time.Millisecond)) || last.After(a.StepStarts[1].Add(stepDur+50*time.Millisecond)) {
			t.Errorf("%s: want them all within [start, start + %v]", desc, stepDur)
		}
	}
}
