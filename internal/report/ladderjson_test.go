package report

import (
	"encoding/json"
	"testing"

	"github.com/llmprobe/llmprobe/internal/ladderresult"
	"github.com/llmprobe/llmprobe/internal/servermetrics"
	"github.com/llmprobe/llmprobe/internal/verdict"
)

// ladderView is what the report tests read back from a ladder result's
// JSON (ladderresult.LadderResult's schema): the figures they assert on.
type ladderView struct {
	TTFTBoundary string               `json:"ttft_boundary"`
	Gates        *GatesJSON           `json:"gates"`
	ClassGates   map[string]GatesJSON `json:"class_gates"`
	InvalidSteps []int                `json:"invalid_steps"`
	Steps        []struct {
		Pending      int                    `json:"pending"`
		WindowS      float64                `json:"window_s"`
		PlannedRate  float64                `json:"planned_rate"`
		GoodFraction float64                `json:"good_fraction"`
		Goodput      float64                `json:"goodput"`
		Met          bool                   `json:"met"`
		Causes       []verdict.InvalidCause `json:"invalid_causes"`
		Server       *servermetrics.View    `json:"server"`
		TTFTGap      *servermetrics.TTFTGap `json:"ttft_gap"`
	} `json:"steps"`
}

// ladderOf encodes res and reads it back as a ladderView.
func ladderOf(t *testing.T, res ladderresult.LadderResult) ladderView {
	t.Helper()
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	var v ladderView
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	return v
}
