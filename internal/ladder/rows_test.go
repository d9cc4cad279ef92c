package ladder

import (
	"encoding/json"
	"testing"

	"github.com/llmprobe/llmprobe/internal/ladderresult"
	"github.com/llmprobe/llmprobe/internal/servermetrics"
	"github.com/llmprobe/llmprobe/internal/verdict"
)

// row is a step as a reader of the result's JSON (the history line,
// `ladder --json`) sees it: the tests read results that way, so each
// also checks the schema carries what it asserts on.
type row struct {
	Step          int                    `json:"index"`
	Rate          float64                `json:"rate"`
	AchievedRate  float64                `json:"achieved_rate"`
	Planned       int                    `json:"planned"`
	Pending       int                    `json:"pending"`
	OK            int                    `json:"ok"`
	Good          int                    `json:"good"`
	Outcomes      map[string]int         `json:"outcomes"`
	GoodFraction  float64                `json:"good_fraction"`
	TTFT          ladderresult.DistJSON  `json:"ttft"`
	Valid         bool                   `json:"valid"`
	Invalid       []string               `json:"invalid_reasons"`
	InvalidCauses []verdict.InvalidCause `json:"invalid_causes"`
	Met           bool                   `json:"met"`
	Saturated     bool                   `json:"saturated"`
	Saturation    string                 `json:"saturation"`
	Steady        *verdict.Steady        `json:"steady"`
	AbortReason   string                 `json:"abort_reason"`
	Server        *servermetrics.View    `json:"server"`
	TTFTGap       *servermetrics.TTFTGap `json:"ttft_gap"`
	Classes       []struct {
		Class string  `json:"class"`
		Rate  float64 `json:"rate"`
		Good  int     `json:"good"`
		Met   bool    `json:"met"`
	} `json:"classes"`
}

// CauseNames are the names of the step's invalid causes.
func (r row) CauseNames() []string {
	var out []string
	for _, c := range r.InvalidCauses {
		out = append(out, string(c.Cause))
	}
	return out
}

// rows encodes res and reads its steps back.
func rows(t testing.TB, res Result) []row {
	t.Helper()
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	var v struct {
		Steps []row `json:"steps"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	return v.Steps
}
