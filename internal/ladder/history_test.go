package ladder_test

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/llmprobe/llmprobe/internal/ladder"
	"github.com/llmprobe/llmprobe/internal/report"
	"github.com/llmprobe/llmprobe/internal/stats"
)

// TestHistoryCausesShapedLikeReport: a history line's invalid_causes has
// the shape of the JSON report's (cause, reason, what_to_do), so one jq
// filter reads both, and an invalid step's causes survive the round trip.
func TestHistoryCausesShapedLikeReport(t *testing.T) {
	path := filepath.Join(t.TempDir(), "history.jsonl")
	cause := stats.InvalidCause{Cause: stats.CauseHostStarved, Reason: "Go scheduler latency p99 14 ms", Action: "give the prober more CPU"}
	res := ladder.Result{Kind: "ladder", Target: "t", Steps: []ladder.StepRow{
		{Step: 1, Valid: true},
		{Step: 2, Valid: false, Invalid: []string{cause.Reason}, InvalidCauses: []stats.InvalidCause{cause}},
	}}
	if err := ladder.AppendHistory(path, res); err != nil {
		t.Fatal(err)
	}
	back, skipped, err := ladder.ReadHistory(path, 0)
	if err != nil || skipped != 0 || len(back) != 1 {
		t.Fatalf("read back %d results, %d skipped, err %v", len(back), skipped, err)
	}
	if got := back[0].Steps[1].InvalidCauses; len(got) != 1 || got[0] != cause {
		t.Errorf("history causes %+v, want %+v", got, cause)
	}
	line, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	var asReport report.Ladder
	if err := json.Unmarshal(line, &asReport); err != nil {
		t.Fatalf("a history line does not decode as the JSON report's ladder: %v", err)
	}
	want := report.CauseJSON{Cause: string(cause.Cause), Reason: cause.Reason, WhatToDo: cause.Action}
	if got := asReport.Steps[1].Causes; len(got) != 1 || got[0] != want {
		t.Errorf("report-shaped causes %+v, want %+v", got, want)
	}
	if n := back[0].Steps[1].CauseNames(); len(n) != 1 || n[0] != "host_starved" {
		t.Errorf("CauseNames %v", n)
	}
}
