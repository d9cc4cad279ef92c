package ladder_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/llmprobe/llmprobe/internal/cause"
	"github.com/llmprobe/llmprobe/internal/ladder"
	"github.com/llmprobe/llmprobe/internal/ladderresult"
	"github.com/llmprobe/llmprobe/internal/stats"
	"github.com/llmprobe/llmprobe/internal/verdict"
)

// TestHistoryAndJSONOneSchema: the history line and `ladder --json` (an
// indented encoding of the same result, as cmd/llmprobe prints it) decode
// into the same type with the same figures; an invalid step's causes
// (cause, reason, what_to_do: the probe report's shape) survive, and its
// reasons are derived from them.
func TestHistoryAndJSONOneSchema(t *testing.T) {
	path := filepath.Join(t.TempDir(), "history.jsonl")
	cause := verdict.InvalidCause{Cause: cause.HostStarved, Reason: "Go scheduler latency p99 14 ms", Action: "give the prober more CPU"}
	ok := stats.Summary{Planned: 10, Dispatched: 10, Completed: 10, Good: 10, GoodFraction: 1, Validity: verdict.Validity{Valid: true}}
	bad := stats.Summary{Planned: 20, Dispatched: 20, Completed: 12, Good: 3, GoodFraction: 0.15, Validity: verdict.Validity{Causes: []verdict.InvalidCause{cause}}}
	res := ladder.Result{Target: "t", Trigger: "manual", GoodFractionTarget: 0.9, KneeFactor: 2, Steps: []ladderresult.LadderStep{
		{Index: 1, Rate: 5, Summary: ok}, {Index: 2, Rate: 10, Summary: bad},
	}}
	res.Verdict, _ = ladderresult.JudgeLadder(res.Steps, nil, 0.9, 2)
	if err := ladder.AppendHistory(path, res); err != nil {
		t.Fatal(err)
	}
	hist, skipped, err := ladder.ReadHistory(path, 0)
	if err != nil || skipped != 0 || len(hist) != 1 {
		t.Fatalf("read back %d results, %d skipped, err %v", len(hist), skipped, err)
	}
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetIndent("", "  ")
	if err := enc.Encode(res); err != nil {
		t.Fatal(err)
	}
	var printed ladder.Result
	if err := json.Unmarshal(out.Bytes(), &printed); err != nil {
		t.Fatalf("--json output does not decode as a ladder result: %v", err)
	}
	if !reflect.DeepEqual(hist[0], printed) {
		t.Errorf("history line and --json differ:\n%+v\n%+v", hist[0], printed)
	}
	got := hist[0].Steps[1].Summary.Validity
	if len(got.Causes) != 1 || got.Causes[0] != cause || len(got.Reasons()) != 1 || got.Reasons()[0] != cause.Reason {
		t.Errorf("history causes %+v, want %+v", got.Causes, cause)
	}
	if hist[0].Capacity != 5 || hist[0].CapacityStep != 1 || hist[0].Steps[1].Summary.Good != 3 {
		t.Errorf("history figures %+v", hist[0])
	}
}

// TestReadHistoryOldLines: a history file whose first lines were written
// before schema_version (the flat format) and whose last is current reads
// as one history, oldest first, nothing skipped.
func TestReadHistoryOldLines(t *testing.T) {
	old, err := os.ReadFile("../ladderresult/testdata/history-v1.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "history.jsonl")
	if err := os.WriteFile(path, append(old, []byte("not json\n")...), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := ladder.AppendHistory(path, ladder.Result{Target: "new", Trigger: "schedule"}); err != nil {
		t.Fatal(err)
	}
	hist, skipped, err := ladder.ReadHistory(path, 0)
	if err != nil || skipped != 1 || len(hist) != 3 {
		t.Fatalf("read %d results, %d skipped (want 3, 1), err %v", len(hist), skipped, err)
	}
	if hist[0].Capacity != 10 || hist[1].Capacity != 5 || !hist[1].Aborted || hist[2].Target != "new" || len(hist[0].Steps) != 2 {
		t.Errorf("history %+v", hist)
	}
}
