package daemon

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/ladder"
)

// TestIdentityModelsFieldTriggersLadder: a deploy seen as a change of the
// configured /v1/models field is counted in
// llmprobe_target_identity_changes_total, updates llmprobe_target_info and,
// with run_on_identity_change, starts a ladder at once (this ladder has no
// timetable, so nothing else could start it).
func TestIdentityModelsFieldTriggersLadder(t *testing.T) {
	fake := newFakeTarget(t)
	history := filepath.Join(t.TempDir(), "ladders.jsonl")
	extra := `    identity: {models_field: root}
    ladder:
      enabled: true
      run_on_identity_change: true
      steps: [4]
      step_duration: 1s
      gap: 0s
      max_rate: 10
      history_file: ` + history + "\n"
	r := startDaemon(t, loadConfig(t, configYAML("1s", targetYAML("t1", fake.url, 5, extra))), nil)

	waitFor(t, 5*time.Second, "first identity", func() bool {
		_, ok := sum(r.metrics(t), "llmprobe_target_info", "target", "t1", "model", "fake-model", "version", "build-1")
		return ok
	})
	// Stable identity: polls and responses repeat it; nothing is counted.
	time.Sleep(300 * time.Millisecond)
	fams := r.metrics(t)
	if v, ok := sum(fams, "llmprobe_target_identity_changes_total", "target", "t1"); !ok || v != 0 {
		t.Fatalf("identity changes = %v (%v) before any deploy, want 0", v, ok)
	}
	if v, _ := sum(fams, "llmprobe_requests_planned_total", "target", "t1", "traffic", "ladder"); v != 0 {
		t.Fatalf("a ladder ran (%v arrivals) before any identity change", v)
	}

	fake.root.Store("build-2") // the deploy
	waitFor(t, 5*time.Second, "the change counted", func() bool {
		v, _ := sum(r.metrics(t), "llmprobe_target_identity_changes_total", "target", "t1")
		return v == 1
	})
	fams = r.metrics(t)
	if _, ok := sum(fams, "llmprobe_target_info", "target", "t1", "version", "build-2"); !ok {
		t.Error("llmprobe_target_info does not show version build-2")
	}
	if _, ok := sum(fams, "llmprobe_target_info", "target", "t1", "version", "build-1"); ok {
		t.Error("llmprobe_target_info still shows the old version")
	}
	waitFor(t, 10*time.Second, "the ladder triggered by the identity change", func() bool {
		b, err := os.ReadFile(history)
		return err == nil && strings.Contains(string(b), `"trigger":"identity_change"`)
	})
	if v, _ := sum(r.metrics(t), "llmprobe_requests_planned_total", "target", "t1", "traffic", "ladder"); v < 1 {
		t.Errorf("ladder planned %v arrivals", v)
	}
	var res ladder.Result
	waitFor(t, 5*time.Second, "the ladder published", func() bool {
		r.d.mu.Lock()
		defer r.d.mu.Unlock()
		var ok bool
		res, ok = r.d.last["t1"]
		return ok
	})
	if res.Trigger != "identity_change" {
		t.Errorf("last ladder trigger %q, want identity_change", res.Trigger)
	}
	// The runner received its records: the step counts ok requests.
	if len(res.Steps) != 1 || res.Steps[0].Summary.Completed < 1 || res.Steps[0].Summary.Completed+res.Steps[0].Summary.Pending < res.Steps[0].Summary.Planned-res.Steps[0].Summary.Unsent {
		t.Errorf("ladder steps %+v: want one step whose requests were all seen ok", res.Steps)
	}
	if err := r.stop(t); err != nil {
		t.Fatal(err)
	}
	if err := r.d.led.Verify(); err != nil {
		t.Fatal(err)
	}
}

// TestIdentityResponseModel: with no version source configured, the model
// named in responses is the identity; a change is counted once.
func TestIdentityResponseModel(t *testing.T) {
	fake := newFakeTarget(t)
	r := startDaemon(t, loadConfig(t, configYAML("1s", targetYAML("t1", fake.url, 20, ""))), nil)
	waitFor(t, 5*time.Second, "first identity", func() bool {
		_, ok := sum(r.metrics(t), "llmprobe_target_info", "target", "t1", "model", "fake-model")
		return ok
	})
	fake.model.Store("fake-model-2025-01")
	waitFor(t, 5*time.Second, "the new model", func() bool {
		_, ok := sum(r.metrics(t), "llmprobe_target_info", "target", "t1", "model", "fake-model-2025-01")
		return ok
	})
	time.Sleep(300 * time.Millisecond)
	if v, _ := sum(r.metrics(t), "llmprobe_target_identity_changes_total", "target", "t1"); v != 1 {
		t.Errorf("identity changes = %v, want 1", v)
	}
}
