package daemon

import (
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/ladder"
	"github.com/llmprobe/llmprobe/internal/telemetry"
	"github.com/llmprobe/llmprobe/internal/workload"
)

// TestLadderDoneNoCapacityIsAbsent: a ladder where no step qualified and no
// knee was found leaves the capacity and knee series absent (a 0 req/s
// figure would read as a measured capacity of zero); a later ladder that
// found them publishes them, and one that lost them removes them again.
func TestLadderDoneNoCapacityIsAbsent(t *testing.T) {
	rec, err := telemetry.New(telemetry.Options{})
	if err != nil {
		t.Fatal(err)
	}
	d, err := New(Options{Config: loadConfig(t, configYAML("1s", targetYAML("t1", "http://127.0.0.1:1", 1, ""))), Recorder: rec})
	if err != nil {
		t.Fatal(err)
	}
	r := &targetRun{name: "t1", classes: []workload.Class{{Name: "chat", Weight: 1}}}
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
		{name: "both found", res: ladder.Result{Target: "t1", Finished: time.Unix(200, 0), Capacity: 4, CapacityStep: 2, Knee: 8, KneeStep: 3},
			capOK: true, kneeOK: true, wantCap: 4, wantK: 8},
		{name: "knee lost", res: ladder.Result{Target: "t1", Finished: time.Unix(300, 0), Capacity: 2, CapacityStep: 1},
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
