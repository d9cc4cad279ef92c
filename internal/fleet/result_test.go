package fleet

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/ladder"
	"github.com/llmprobe/llmprobe/internal/ladderresult"
	"github.com/llmprobe/llmprobe/internal/stats"
	"github.com/llmprobe/llmprobe/internal/verdict"
)

// TestResultJSON: a fleet ladder's history line is the ladder result's
// schema with the fleet's fields beside them: it reads back whole as a
// fleet Result, and as a ladder result by readers of ladder history.
func TestResultJSON(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	res := Result{
		Result: ladder.Result{Target: "t", Trigger: "schedule", GoodFractionTarget: 0.9, KneeFactor: 2, StepDuration: time.Second,
			Steps:   []ladderresult.LadderStep{{Index: 1, Rate: 4, Summary: stats.Summary{Planned: 4, Completed: 4, Good: 4, GoodFraction: 1, Validity: verdict.Validity{Valid: true}}}},
			Verdict: ladderresult.Verdict{Capacity: 4, CapacityStep: 1, CapacityBound: ladderresult.BoundLower}},
		Fleet: Fleet{Scope: ScopeFleet, LadderID: "t-1", Shards: 2, AbortedAt: &at,
			ShardSteps: []ShardStep{{Step: 1, Shard: 1, Rate: 2, Missing: "no answer"}}},
	}
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"schema_version":2`, `"capacity":4`, `"scope":"fleet"`, `"ladder_id":"t-1"`, `"shards":2`, `"missing":"no answer"`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("line lacks %s:\n%s", want, b)
		}
	}
	var back Result
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if back.Capacity != 4 || back.Scope != ScopeFleet || back.Shards != 2 || !back.AbortedAt.Equal(at) || len(back.ShardSteps) != 1 || back.Steps[0].Summary.Good != 4 {
		t.Errorf("read back %+v", back)
	}
	path := filepath.Join(t.TempDir(), "h.jsonl")
	if err := ladder.AppendJSON(path, res); err != nil {
		t.Fatal(err)
	}
	hist, skipped, err := ladder.ReadHistory(path, 0)
	if err != nil || skipped != 0 || len(hist) != 1 || hist[0].Capacity != 4 || hist[0].Target != "t" {
		t.Errorf("as ladder history: %+v, %d skipped, %v", hist, skipped, err)
	}
}
