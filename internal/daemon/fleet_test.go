package daemon

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/cause"
	"github.com/llmprobe/llmprobe/internal/durfmt"
	"github.com/llmprobe/llmprobe/internal/fleet"
	"github.com/llmprobe/llmprobe/internal/ladder"
	"github.com/llmprobe/llmprobe/internal/ladderresult"
	"github.com/llmprobe/llmprobe/internal/ledger"
	"github.com/llmprobe/llmprobe/internal/sim"
	"github.com/llmprobe/llmprobe/internal/statuspage"
	"github.com/llmprobe/llmprobe/internal/testutil"
	"github.com/llmprobe/llmprobe/internal/verdict"
)

// fleetTarget is the target "sim" at url with one class gated at 500 ms
// TTFT and 1.5 s request timeouts; extra (indented by 4) adds its baseline
// and ladder.
func fleetTarget(url, extra string) string {
	return fmt.Sprintf(`
  - name: sim
    url: %s
    model: m
    max_in_flight: 256
    timeouts: {connect: 1s, headers: 1500ms, first_content: 1500ms, idle: 1500ms, total: 1500ms}
    classes:
      - name: chat
        input: {dist: fixed, value: 16}
        output: {dist: fixed, value: 16}
        gates: {ttft: 500ms}
%s`, url, extra)
}

// ladderYAML is a ladder block (indented by 4): run at start, 3 s steps,
// 2 s gaps, stop at capacity, lenient on dispatch lag (the machine is
// shared; these tests judge the fleet, not the pacer); abort overrides the
// abort rules when not empty.
func ladderYAML(steps, abort string) string {
	s := "    baseline: {enabled: false}\n    ladder:\n      enabled: true\n      run_on_start: true\n      steps: " + steps +
		"\n      step_duration: 3s\n      gap: 2s\n      max_lag_p99: 100ms\n      good_fraction_target: 0.9\n      stop_at: capacity\n"
	if abort != "" {
		s += "      abort: " + abort + "\n"
	}
	return s
}

// TestFleetBaselineSplit (issue 12, 5a): three shards each run the
// baseline at λ/3 with their own seed; the target sees one Poisson stream
// of rate λ: its arrival count over a window is within the Poisson band
// of λ·window, each shard's within that of λ·window/3, and the merged
// arrivals' gaps have the coefficient of variation of a Poisson stream
// (1; shards sharing one seed would send in bursts of three).
func TestFleetBaselineSplit(t *testing.T) {
	if testing.Short() {
		t.Skip("full tier: a 3-shard fleet's Poisson baseline measured at the simulator for 10 s over loopback HTTP")
	}
	const lambda, n = 30.0, 3
	srv, url := startFleetSim(t, func(c *sim.Config) { c.Slots, c.AdmissionLimit = 64, 256 })
	f := startTestFleet(t, n, func(shard int, addrs []string) string {
		return fleetYAML(shard, addrs, "", fleetTarget(url, "    baseline: {rate: 30, arrival: poisson}\n"))
	})
	time.Sleep(time.Second) // every shard's stream is running
	t0, s0 := time.Now(), srv.Stats()
	time.Sleep(10 * time.Second)
	t1, s1 := time.Now(), srv.Stats()
	window := t1.Sub(t0).Seconds()
	seenByTarget := (s1.Admitted + s1.Rejected) - (s0.Admitted + s0.Rejected)
	lo, hi := verdict.RateBounds(lambda*window, 0, 3.29)
	t.Logf("target saw %d arrivals in %.2fs: %.2f req/s for λ = %g (accepted %.0f–%.0f)", seenByTarget, window, float64(seenByTarget)/window, lambda, lo, hi)
	if float64(seenByTarget) < lo || float64(seenByTarget) > hi {
		t.Errorf("the target saw %d arrivals; a Poisson stream of %g req/s over %.2fs gives %.0f–%.0f (99.9%%)", seenByTarget, lambda, window, lo, hi)
	}
	time.Sleep(2 * time.Second) // the window's requests finish
	var walls []time.Time
	slo, shi := verdict.RateBounds(lambda/n*window, 0, 3.29)
	for i := range n {
		recs := f.sinks[i].where(func(s seen) bool {
			w := f.wall(i, s.planned)
			return s.traffic == ledger.TrafficBaseline && s.attempt <= 1 && !w.Before(t0) && w.Before(t1)
		})
		t.Logf("shard %d planned %d baseline arrivals in the window: %.2f req/s (λ/%d = %g; accepted %.0f–%.0f)", i, len(recs), float64(len(recs))/window, n, lambda/n, slo, shi)
		if float64(len(recs)) < slo || float64(len(recs)) > shi {
			t.Errorf("shard %d planned %d arrivals, want %.0f–%.0f", i, len(recs), slo, shi)
		}
		for _, r := range recs {
			walls = append(walls, f.wall(i, r.planned))
		}
		fams := f.shards[i].metrics(t)
		if v, ok := sum(fams, "llmprobe_arrival_rate_requests_per_second", "target", "sim", "traffic", "baseline"); !ok || math.Abs(v-lambda/n) > 1e-9 {
			t.Errorf("shard %d: scheduled baseline rate %v (present %v), want λ/%d = %g", i, v, ok, n, lambda/n)
		}
		if _, ok := sum(fams, "llmprobe_fleet_info", "shard", fmt.Sprint(i), "shards", fmt.Sprint(n)); !ok {
			t.Errorf("shard %d: no llmprobe_fleet_info{shard=%q,shards=%q}", i, fmt.Sprint(i), fmt.Sprint(n))
		}
	}
	slices.SortFunc(walls, func(a, b time.Time) int { return a.Compare(b) })
	var gaps []float64
	for i := 1; i < len(walls); i++ {
		gaps = append(gaps, walls[i].Sub(walls[i-1]).Seconds())
	}
	mean, sq := 0.0, 0.0
	for _, g := range gaps {
		mean += g
	}
	mean /= float64(len(gaps))
	for _, g := range gaps {
		sq += (g - mean) * (g - mean)
	}
	cv := math.Sqrt(sq/float64(len(gaps)-1)) / mean
	t.Logf("merged arrivals: %d gaps, mean %.1f ms, coefficient of variation %.3f (Poisson: 1)", len(gaps), 1000*mean, cv)
	if cv < 0.8 || cv > 1.2 {
		t.Errorf("merged gaps' coefficient of variation %.3f: not a Poisson stream (want 1 ± 0.2)", cv)
	}
}

// TestFleetAbortPropagates (issue 12, 5e): shard 1's own abort rule trips
// inside a step (its error fraction limit is the strictest); the
// coordinator aborts the fleet's ladder, and every shard stops offering
// within one second of that abort: no arrival is planned by any shard,
// by its own ledger, after the abort time + 1 s. The other shards' rules
// did not trip: their steps end with the fleet's abort.
func TestFleetAbortPropagates(t *testing.T) {
	if testing.Short() {
		t.Skip("full tier: a fleet of in-process daemons over loopback HTTP on the fleet ladder's real timetable (synctest cannot hold real sockets)")
	}
	// How late this process ran its goroutines (every shard is in it):
	// the bounds below are on schedule plus what the host took.
	canary := testutil.StartWakeCanary(t, 5*time.Millisecond)
	_, url := startFleetSim(t, func(c *sim.Config) { c.Slots, c.ErrorFraction = 64, 0.3 })
	f := startTestFleet(t, 3, func(shard int, addrs []string) string {
		limit := 0.6
		if shard == 1 {
			limit = 0.1
		}
		abort := fmt.Sprintf("{error_fraction: %g, rejection_fraction: 0, ttft_gate_multiple: 0, on_unsent: false, on_generator_invalid: false}", limit)
		return fleetYAML(shard, addrs, "", fleetTarget(url, strings.Replace(ladderYAML("[60]", abort), "step_duration: 3s", "step_duration: 8s", 1)))
	})
	res := f.waitFleetLadder("sim", time.Time{}, 40*time.Second)
	if !res.Aborted || !strings.Contains(res.AbortReason, "shard 1: mid-step: error fraction") || res.AbortedAt == nil {
		t.Fatalf("aborted %v (%q at %v): want shard 1's own rule to abort the fleet", res.Aborted, res.AbortReason, res.AbortedAt)
	}
	abortAt := *res.AbortedAt
	stepStart := res.Started
	last := make([]time.Time, 3)
	for i := range 3 {
		for _, r := range f.sinks[i].where(func(s seen) bool { return s.traffic == ledger.TrafficLadder }) {
			if w := f.wall(i, r.planned); w.After(last[i]) {
				last[i] = w
			}
		}
		// A shard reads the abort within a poll (fleet.PollEvery, 500 ms)
		// and stops at once: 1 s on schedule, plus the time this process
		// kept runnable goroutines waiting over that second (the poll,
		// the coordinator's handler, the reply and the stop are goroutine
		// hops a starved host delays). A shard that went on offering
		// past that still fails.
		_, held := canary.Lateness(abortAt, last[i])
		t.Logf("shard %d: last ladder arrival planned %v after the step's start, %v after the fleet's abort (the host held this process %v of it)", i,
			last[i].Sub(stepStart).Round(time.Millisecond), last[i].Sub(abortAt).Round(time.Millisecond), held.Round(time.Millisecond))
		if allowed := time.Second + held; last[i].After(abortAt.Add(allowed)) {
			t.Errorf("shard %d planned an arrival %v after the fleet's abort (at most 1s + %v the host held this process)", i, last[i].Sub(abortAt), held.Round(time.Millisecond))
		}
	}
	t.Logf("the fleet aborted %v into the 8s step: %q", abortAt.Sub(stepStart).Round(time.Millisecond), res.AbortReason)
	// Shard 1's rule trips about 2 s in on schedule; 6 s leaves 4 s for a
	// busy host, and more by the time it measurably held this process.
	if worst, held := canary.Lateness(stepStart, abortAt); abortAt.Sub(stepStart) > 6*time.Second+held {
		t.Errorf("abort %v into an 8s step (the host held this process %v, worst wake-up %v late): too late to show it stops offering", abortAt.Sub(stepStart), held, worst)
	}
	for _, s := range []int{0, 2} {
		for _, row := range res.ShardSteps {
			if row.Shard == s && !strings.HasPrefix(row.AbortReason, "fleet: ") {
				t.Errorf("shard %d's step ended %q: want the fleet's abort", s, row.AbortReason)
			}
		}
	}
	// The abort is on the coordinator's state endpoint, as shards read it.
	var v fleet.View
	resp, err := f.shards[0].client.Get(f.shards[0].admin + fleet.PathLadders)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(&v); err != nil {
		t.Fatal(err)
	}
	if len(v.Ladders) != 1 || v.Ladders[0].State != fleet.StateAborted || v.Ladders[0].AbortedAt == nil {
		t.Fatalf("coordinator state %+v", v)
	}
}

// capacityIndex is the position of rate among steps (−1: absent).
func capacityIndex(steps []float64, rate float64) int { return slices.Index(steps, rate) }

// TestFleetLadderCapacity (issue 12, 5b and 5c): on three simulators of
// the same capacity (about 19 req/s), a fleet of three finds the capacity
// one prober finds (within one step), and, with a per-shard rate cap
// (limits.max_rate 8) below the capacity, one prober can only report a
// lower bound (it cannot offer above its cap) while the fleet of three so
// capped measures it.
func TestFleetLadderCapacity(t *testing.T) {
	if testing.Short() {
		t.Skip("full tier: a fleet of in-process daemons over loopback HTTP on the fleet ladder's real timetable (synctest cannot hold real sockets)")
	}
	steps := []float64{6, 12, 18, 24}
	const stepsYAML = "[6, 12, 18, 24]"
	_, fleetURL := startFleetSim(t, nil)
	srvOne, oneURL := startFleetSim(t, nil)
	_, cappedURL := startFleetSim(t, nil)
	t.Logf("simulated capacity %.1f req/s", srvOne.State().Capacity)

	// One prober capped at 8 req/s cannot offer the fleet's steps at all.
	if _, err := loadConfigErr(fmt.Sprintf("admin: {listen: \"127.0.0.1:0\"}\nlimits: {max_rate: 8}\ntargets:%s", fleetTarget(cappedURL, ladderYAML(stepsYAML, "")))); err == nil ||
		!strings.Contains(err.Error(), "hard maximum") {
		t.Fatalf("one prober capped at 8 req/s took steps up to 24: %v", err)
	}
	f := startTestFleet(t, 3, func(shard int, addrs []string) string {
		return fleetYAML(shard, addrs, "limits: {max_rate: 8}", fleetTarget(fleetURL, ladderYAML(stepsYAML, "")))
	})
	one := startDaemon(t, loadChecked(t, configYAML("2s", fleetTarget(oneURL, ladderYAML(stepsYAML, "")))), nil)
	capped := startDaemon(t, loadChecked(t, "limits: {max_rate: 8}\n"+configYAML("2s", fleetTarget(cappedURL, ladderYAML("[2, 4, 6, 8]", "")))), nil)

	last := func(r *running) func() (ladder.Result, bool) {
		return func() (ladder.Result, bool) {
			r.d.mu.Lock()
			defer r.d.mu.Unlock()
			res, ok := r.d.last["sim"]
			return res, ok
		}
	}
	var oneRes, cappedRes ladder.Result
	waitFor(t, 60*time.Second, "one prober's ladders", func() bool {
		var ok1, ok2 bool
		oneRes, ok1 = last(one)()
		cappedRes, ok2 = last(capped)()
		return ok1 && ok2
	})
	fleetRes := f.waitFleetLadder("sim", time.Time{}, 60*time.Second)
	for _, x := range []struct {
		name string
		res  ladder.Result
	}{{"one prober", oneRes}, {"one prober capped at 8 req/s", cappedRes}, {"fleet of 3 capped at 8 req/s each", fleetRes.Result}} {
		var rows []string
		for _, s := range x.res.Steps {
			rows = append(rows, fmt.Sprintf("%g req/s: planned %d, good %.2f, TTFT p95 %.3fs, valid %v", s.Rate, s.Summary.Planned, s.Summary.GoodFraction, s.Summary.TTFT.P95.Seconds(), s.Summary.Validity.Valid))
		}
		t.Logf("%s: capacity %g (%s), stopped %q, aborted %q\n  %s", x.name, x.res.Capacity, x.res.CapacityBound, x.res.Stopped, x.res.AbortReason, strings.Join(rows, "\n  "))
	}
	busy := false
	for _, x := range []struct {
		name string
		res  ladder.Result
	}{{"one prober", oneRes}, {"one prober capped", cappedRes}, {"the fleet", fleetRes.Result}} {
		busy = validOrHost(t, x.name, x.res) || busy
	}
	if busy {
		t.Skip("capacities not compared: a ladder had steps invalid for the prober host")
	}
	// 5b: the fleet measures what one prober measures, within one step.
	if oneRes.CapacityBound != ladderresult.BoundMeasured || fleetRes.CapacityBound != ladderresult.BoundMeasured {
		t.Fatalf("capacities %g (%s) and %g (%s): want both measured", oneRes.Capacity, oneRes.CapacityBound, fleetRes.Capacity, fleetRes.CapacityBound)
	}
	if d := capacityIndex(steps, oneRes.Capacity) - capacityIndex(steps, fleetRes.Capacity); d < -1 || d > 1 {
		t.Errorf("fleet capacity %g vs one prober's %g: more than one step apart", fleetRes.Capacity, oneRes.Capacity)
	}
	// 5c: capped, one prober only bounds it; the fleet so capped measures it.
	if cappedRes.CapacityBound != ladderresult.BoundLower || cappedRes.Capacity != 8 {
		t.Errorf("one capped prober: capacity %g (%s), want ≥ 8 (a lower bound)", cappedRes.Capacity, cappedRes.CapacityBound)
	}
	if fleetRes.Capacity <= cappedRes.Capacity {
		t.Errorf("fleet capacity %g is not above the capped prober's bound %g", fleetRes.Capacity, cappedRes.Capacity)
	}
	// Shard 0 publishes the fleet's figures; the other shards none.
	for i, r := range f.shards {
		fams := r.metrics(t)
		v, ok := sum(fams, "llmprobe_capacity_requests_per_second", "target", "sim", "class", "chat", "scope", "fleet")
		if i == 0 && (!ok || v != fleetRes.Capacity) {
			t.Errorf("shard 0: fleet capacity series %v (present %v), want %g", v, ok, fleetRes.Capacity)
		}
		if _, any := sum(fams, "llmprobe_capacity_requests_per_second"); i > 0 && any {
			t.Errorf("shard %d publishes a capacity: only the coordinator does", i)
		}
	}
	if _, ok := sum(one.metrics(t), "llmprobe_capacity_requests_per_second", "target", "sim", "scope", "local"); !ok {
		t.Error("one prober: no capacity with scope=\"local\"")
	}
	// The status pages say who is who, and whose capacity it is.
	for i, want := range []string{"Fleet: shard 0 of 3: this prober coordinates", "Fleet: shard 1 of 3; coordinator (shard 0): http://" + f.addrs[0]} {
		resp, err := f.shards[i].client.Get(f.shards[i].admin + "/")
		if err != nil {
			t.Fatal(err)
		}
		page, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if !strings.Contains(string(page), want) {
			t.Errorf("shard %d's status page lacks %q", i, want)
		}
		if i == 0 && !strings.Contains(string(page), "fleet of 3: "+durfmt.Rate(fleetRes.Capacity)+" req/s") {
			t.Errorf("shard 0's status page does not show the fleet's capacity")
		}
	}
}

// announced reads shard 0's announcement of its latest fleet ladder.
func (f *testFleet) announced(t *testing.T) (fleet.Announcement, bool) {
	t.Helper()
	var v fleet.View
	resp, err := f.shards[0].client.Get(f.shards[0].admin + fleet.PathLadders)
	if err != nil {
		return fleet.Announcement{}, false
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(&v); err != nil || len(v.Ladders) == 0 {
		return fleet.Announcement{}, false
	}
	return v.Ladders[len(v.Ladders)-1], true
}

// TestFleetShardLostMidLadder (issue 12, 5d): a shard killed inside a
// step makes that step invalid, its cause (shard_missing) naming the
// shard, never a silent partial figure; the ladder aborts on it
// (on_generator_invalid). The shard comes back, and the next ladder (on a
// deploy of the target) has every step valid again.
func TestFleetShardLostMidLadder(t *testing.T) {
	if testing.Short() {
		t.Skip("full tier: a fleet of in-process daemons over loopback HTTP on the fleet ladder's real timetable (synctest cannot hold real sockets)")
	}
	srv, url := startFleetSim(t, func(c *sim.Config) { c.Slots, c.Version = 64, "v1" })
	f := startTestFleet(t, 3, func(shard int, addrs []string) string {
		extra := ladderYAML("[6, 9, 12]", "") + "      run_on_identity_change: true\n    identity: {response_header: " + sim.VersionHeader + "}\n"
		return fleetYAML(shard, addrs, "", fleetTarget(url, extra))
	})
	var a fleet.Announcement
	waitFor(t, 10*time.Second, "the first fleet ladder's announcement", func() bool {
		var ok bool
		a, ok = f.announced(t)
		return ok
	})
	period := time.Duration(a.PeriodSeconds * float64(time.Second))
	kill := a.Start.Add(period + time.Second) // one second into step 2
	time.Sleep(time.Until(kill))
	if err := f.shards[2].stop(t); err != nil {
		t.Fatal(err)
	}
	t.Logf("shard 2 stopped %v into step 2", time.Since(a.Start.Add(period)).Round(time.Millisecond))
	first := f.waitFleetLadder("sim", time.Time{}, 40*time.Second)
	for _, s := range first.Steps {
		t.Logf("ladder 1 step %d (%g req/s): planned %d, valid %v %v", s.Index, s.Rate, s.Summary.Planned, s.Summary.Validity.Valid, s.Summary.Validity.Reasons())
	}
	if len(first.Steps) > 0 && !first.Steps[0].Summary.Validity.Valid && verdict.HostCaused(first.Steps[0].Summary.Validity.Causes) {
		t.Skipf("ladder 1's step 1 was invalid for the prober host (a busy machine), so step 2 never ran: %v", first.Steps[0].Summary.Validity.Reasons())
	}
	if len(first.Steps) != 2 || !first.Steps[0].Summary.Validity.Valid || first.Steps[1].Summary.Validity.Valid {
		t.Fatalf("ladder 1: want step 1 valid and step 2 invalid (then the abort), got %+v", first.Steps)
	}
	causes := first.Steps[1].Summary.Validity.CauseNames()
	if !slices.Contains(causes, string(cause.ShardMissing)) || !strings.Contains(strings.Join(first.Steps[1].Summary.Validity.Reasons(), "; "), "shard 2: no results") {
		t.Fatalf("step 2 causes %v, reasons %q: want shard_missing naming shard 2", causes, first.Steps[1].Summary.Validity.Reasons())
	}
	if !first.Aborted || !strings.Contains(first.AbortReason, "generator invalid: shard 2") {
		t.Fatalf("ladder 1 aborted %v: %q", first.Aborted, first.AbortReason)
	}
	if first.CapacityStep != 1 {
		t.Fatalf("ladder 1 capacity from step %d: only step 1 was valid", first.CapacityStep)
	}

	f.start(2, nil) // the same address
	time.Sleep(2 * fleet.PollEvery)
	restarted := time.Now()
	v2 := "v2"
	if _, err := srv.Update(sim.Update{Version: &v2}); err != nil {
		t.Fatal(err)
	}
	second := f.waitFleetLadder("sim", restarted, 40*time.Second)
	t.Logf("ladder 2 (%s): capacity %g (%s), invalid steps %q", second.Trigger, second.Capacity, second.CapacityBound, statuspage.InvalidSteps(second.Result))
	if second.Trigger != "identity_change" {
		t.Fatalf("ladder 2: trigger %s", second.Trigger)
	}
	if validOrHost(t, "ladder 2", second.Result) {
		return
	}
	if second.Aborted || len(second.Steps) != 3 {
		t.Fatalf("ladder 2: aborted %v %q, %d steps: want every step valid", second.Aborted, second.AbortReason, len(second.Steps))
	}
	for _, row := range second.ShardSteps {
		if row.Missing != "" || !row.Valid || row.Planned == 0 {
			t.Errorf("ladder 2 step %d shard %d: %+v", row.Step, row.Shard, row)
		}
	}
}
