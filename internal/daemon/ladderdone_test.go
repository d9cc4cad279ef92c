package daemon

import (
	"io"
	"strings"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/cause"
	"github.com/llmprobe/llmprobe/internal/ladder"
	"github.com/llmprobe/llmprobe/internal/ladderresult"
	"github.com/llmprobe/llmprobe/internal/ledger"
	"github.com/llmprobe/llmprobe/internal/quantile"
	"github.com/llmprobe/llmprobe/internal/stats"
	"github.com/llmprobe/llmprobe/internal/telemetry"
	"github.com/llmprobe/llmprobe/internal/verdict"
	"github.com/llmprobe/llmprobe/internal/workload"
)

// ladderDoneDaemon is a daemon of one target t1, not running, whose
// ladderDone is called by hand, with the recorder it publishes to.
func ladderDoneDaemon(t *testing.T) (*Daemon, *telemetry.Recorder) {
	t.Helper()
	rec, err := telemetry.New(telemetry.Options{})
	if err != nil {
		t.Fatal(err)
	}
	d, err := New(Options{Config: loadConfig(t, configYAML("1s", targetYAML("t1", "http://127.0.0.1:1", 1, ""))), Recorder: rec})
	if err != nil {
		t.Fatal(err)
	}
	return d, rec
}

// TestLadderDoneNoCapacityIsAbsent: a ladder where no step qualified and no
// knee was found leaves the capacity and knee series absent (a 0 req/s
// figure would read as a measured capacity of zero); a later ladder that
// found them publishes them, and one that lost them removes them again.
func TestLadderDoneNoCapacityIsAbsent(t *testing.T) {
	d, rec := ladderDoneDaemon(t)
	r := &targetRun{name: "t1", classes: []workload.Class{{Name: "chat", Weight: 1}}, state: newTargetState()}
	gather := func() map[string]*familyView {
		t.Helper()
		fams, err := rec.Registry().Gather()
		if err != nil {
			t.Fatal(err)
		}
		return viewOf(fams)
	}
	const capName, kneeName = "llmprobe_capacity_requests_per_second", "llmprobe_ladder_knee_requests_per_second"
	tests := []struct {
		name           string
		res            ladder.Result
		capOK, kneeOK  bool
		wantCap, wantK float64
	}{
		{name: "none found", res: ladder.Result{Target: "t1", Finished: time.Unix(100, 0)}},
		{name: "both found", res: ladder.Result{Target: "t1", Finished: time.Unix(200, 0), Verdict: ladderresult.Verdict{Capacity: 4, CapacityStep: 2, Knee: 8, KneeStep: 3}},
			capOK: true, kneeOK: true, wantCap: 4, wantK: 8},
		{name: "knee lost", res: ladder.Result{Target: "t1", Finished: time.Unix(300, 0), Verdict: ladderresult.Verdict{Capacity: 2, CapacityStep: 1}},
			capOK: true, wantCap: 2},
	}
	for _, tc := range tests {
		d.ladderDone(r, tc.res)
		fams := gather()
		if v, ok := sum(fams, capName, "target", "t1", "class", "chat"); ok != tc.capOK || v != tc.wantCap {
			t.Errorf("%s: capacity = %v (present %v), want %v (present %v)", tc.name, v, ok, tc.wantCap, tc.capOK)
		}
		if v, ok := sum(fams, kneeName, "target", "t1", "class", "chat"); ok != tc.kneeOK || v != tc.wantK {
			t.Errorf("%s: knee = %v (present %v), want %v (present %v)", tc.name, v, ok, tc.wantK, tc.kneeOK)
		}
	}
}

// TestLadderDonePerClass: each class's gauges carry the class's own figures
// (its capacity, knee and per-step values in its own offered rate), never
// one target-wide value repeated under every class label; the capacity
// says whether it is a lower bound.
func TestLadderDonePerClass(t *testing.T) {
	d, rec := ladderDoneDaemon(t)
	r := &targetRun{name: "t1", classes: []workload.Class{{Name: "chat", Weight: 3}, {Name: "long", Weight: 1}}, state: newTargetState()}
	step := func(i int, rate float64, chatP95, longP95 time.Duration, chatGoodput, longGoodput float64) ladderresult.LadderStep {
		return ladderresult.LadderStep{Index: i, Rate: rate, Summary: stats.Summary{Validity: verdict.Validity{Valid: true}}, Classes: []ladderresult.ClassStep{
			{Class: "chat", Rate: rate * 0.75, Summary: stats.Summary{TTFT: quantile.Percentiles{Count: 1, P95: chatP95}, GoodputPerSecond: chatGoodput}},
			{Class: "long", Rate: rate * 0.25, Summary: stats.Summary{TTFT: quantile.Percentiles{Count: 1, P95: longP95}, GoodputPerSecond: longGoodput}},
		}}
	}
	res := ladder.Result{Target: "t1", Finished: time.Unix(100, 0), Verdict: ladderresult.Verdict{Capacity: 4, CapacityStep: 1, CapacityBound: ladderresult.BoundMeasured},
		Classes: []ladderresult.ClassVerdict{
			{Class: "chat", Verdict: ladderresult.Verdict{Capacity: 6, CapacityStep: 2, CapacityBound: ladderresult.BoundLower}},
			{Class: "long", Verdict: ladderresult.Verdict{Capacity: 1, CapacityStep: 1, CapacityBound: ladderresult.BoundMeasured, Knee: 2, KneeStep: 2}},
		},
		Steps: []ladderresult.LadderStep{step(1, 4, 50*time.Millisecond, 300*time.Millisecond, 3, 1), step(2, 8, 60*time.Millisecond, 900*time.Millisecond, 6, 0.5)},
	}
	d.ladderDone(r, res)
	fams, err := rec.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	m := viewOf(fams)
	for _, tc := range []struct {
		name   string
		labels []string
		want   float64
		absent bool
	}{
		{"llmprobe_capacity_requests_per_second", []string{"class", "chat", "bound", "lower"}, 6, false},
		{"llmprobe_capacity_requests_per_second", []string{"class", "chat", "bound", "measured"}, 0, true},
		{"llmprobe_capacity_requests_per_second", []string{"class", "long", "bound", "measured"}, 1, false},
		{"llmprobe_ladder_knee_requests_per_second", []string{"class", "chat"}, 0, true},
		{"llmprobe_ladder_knee_requests_per_second", []string{"class", "long"}, 2, false},
		{"llmprobe_ladder_step_offered_rate_requests_per_second", []string{"class", "chat", "step", "2"}, 6, false},
		{"llmprobe_ladder_step_offered_rate_requests_per_second", []string{"class", "long", "step", "2"}, 2, false},
		{"llmprobe_ladder_step_ttft_p95_seconds", []string{"class", "long", "step", "2"}, 0.9, false},
		{"llmprobe_ladder_step_goodput_requests_per_second", []string{"class", "chat", "step", "1"}, 3, false},
	} {
		v, ok := sum(m, tc.name, append([]string{"target", "t1"}, tc.labels...)...)
		if ok == tc.absent || (!tc.absent && v != tc.want) {
			t.Errorf("%s%v = %v (present %v), want %v (absent %v)", tc.name, tc.labels, v, ok, tc.want, tc.absent)
		}
	}
}

// TestStatusPageNamesBoundAndCauses: the status page says "≥" for a lower
// bound, names the last ladder's invalid steps with their causes, and gives
// the live generator verdict's causes with what to do.
func TestStatusPageNamesBoundAndCauses(t *testing.T) {
	r := startDaemon(t, loadConfig(t, configYAML("1s", targetYAML("t1", "http://127.0.0.1:1", 0.01, ""))), nil)
	r.d.mu.Lock()
	run := r.d.targets["t1"]
	r.d.mu.Unlock()
	valid := stats.Summary{Validity: verdict.Validity{Valid: true}}
	r.d.ladderDone(run, ladder.Result{Target: "t1", Finished: time.Now(), Verdict: ladderresult.Verdict{Capacity: 4, CapacityStep: 2, CapacityBound: ladderresult.BoundLower},
		Steps: []ladderresult.LadderStep{{Index: 1, Summary: valid}, {Index: 2, Summary: valid},
			{Index: 3, Summary: stats.Summary{Validity: verdict.Validity{Causes: []verdict.InvalidCause{{Cause: cause.HostStarved}}}}}}})
	for i := range 100 {
		planned := time.Duration(i+1) * time.Millisecond
		r.d.route.Record(&ledger.Record{Target: "t1", Class: "chat", Traffic: ledger.TrafficBaseline,
			Planned: planned, Dispatched: planned + 30*time.Millisecond, End: planned + 40*time.Millisecond, Outcome: ledger.HTTPError, Reason: ledger.ReasonServerError})
	}
	st := r.d.status()
	if len(st.Targets) != 1 {
		t.Fatalf("targets %+v", st.Targets)
	}
	ts := st.Targets[0]
	if !strings.HasPrefix(ts.Capacity, "≥ 4 req/s (lower bound") {
		t.Errorf("capacity %q", ts.Capacity)
	}
	if !strings.Contains(ts.Notes, "invalid step(s) 3 (host_starved)") {
		t.Errorf("notes %q", ts.Notes)
	}
	if !strings.HasPrefix(ts.Generator, "INVALID: ") || !strings.Contains(ts.Generator, "100 of 100 dispatches later than 10ms") || !strings.Contains(ts.GeneratorAdvice, "max_lag_p99") {
		t.Errorf("generator %q, advice %q", ts.Generator, ts.GeneratorAdvice)
	}
	resp, err := r.client.Get(r.admin + "/")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	for _, want := range []string{"≥ 4 req/s", "INVALID: ", "<summary>what to do</summary>", `class="badge invalid prober"`, "prober invalid: "} {
		if !strings.Contains(string(body), want) {
			t.Errorf("status page lacks %q", want)
		}
	}
}

// TestLadderDoneCompleteOnlyWhenJudged: llmprobe_ladder_identity_info
// says complete="true" only for a ladder that judged the target (a valid
// step with arrivals) and that no deploy cut: one whose steps were all
// invalid (its host starved) or drew no arrival measured nothing, and
// LLMProbeCapacityLost, which skips complete="false", must not read its
// absent capacity as a capacity lost.
func TestLadderDoneCompleteOnlyWhenJudged(t *testing.T) {
	d, rec := ladderDoneDaemon(t)
	r := &targetRun{name: "t1", classes: []workload.Class{{Name: "chat", Weight: 1}}, state: newTargetState()}
	step := func(valid bool, planned int) ladderresult.LadderStep {
		return ladderresult.LadderStep{Index: 1, Rate: 2, Summary: stats.Summary{Validity: verdict.Validity{Valid: valid}, Planned: planned}}
	}
	for i, tc := range []struct {
		name     string
		steps    []ladderresult.LadderStep
		partial  cause.Cause
		complete string
	}{
		{"a valid step that failed its gates", []ladderresult.LadderStep{step(true, 10)}, "", "true"},
		{"every step invalid", []ladderresult.LadderStep{step(false, 10), step(false, 20)}, "", "false"},
		{"the only valid step drew no arrival", []ladderresult.LadderStep{step(true, 0)}, "", "false"},
		{"cut by a deploy", []ladderresult.LadderStep{step(true, 10)}, cause.IdentityChanged, "false"},
	} {
		d.ladderDone(r, ladder.Result{Target: "t1", Finished: time.Unix(int64(100+i), 0), Steps: tc.steps, Partial: tc.partial,
			Identity: ladderresult.Identity{Model: "m"}})
		fams, err := rec.Registry().Gather()
		if err != nil {
			t.Fatal(err)
		}
		m := viewOf(fams)
		other := map[string]string{"true": "false", "false": "true"}[tc.complete]
		_, want := sum(m, "llmprobe_ladder_identity_info", "target", "t1", "complete", tc.complete)
		_, stale := sum(m, "llmprobe_ladder_identity_info", "target", "t1", "complete", other)
		if !want || stale {
			t.Errorf("%s: identity info complete=%q present %v, complete=%q present %v", tc.name, tc.complete, want, other, stale)
		}
	}
}
