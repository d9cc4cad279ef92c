package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/llmprobe/llmprobe/internal/ladderresult"
	"github.com/llmprobe/llmprobe/internal/verdict"
)

// TestLadderSaturatedStep: a step judged saturated is named in the text
// (its steady column and its evidence), the HTML (an orange row), the SVG
// (its ring and label) and the JSON (saturated, saturation, steady,
// saturated_steps), and the capacity text says the step above it was
// saturated, not failed.
func TestLadderSaturatedStep(t *testing.T) {
	res := ladderResult("t")
	why := "saturated: completions 13.1 req/s behind arrivals 14.5 req/s, backlog +16, TTFT rising 95 ms/s"
	for i := range res.Steps {
		res.Steps[i].Summary.Steady = &verdict.Steady{Judged: true, Arrivals: 50}
	}
	res.Steps[1].Summary.Steady = &verdict.Steady{Judged: true, Saturated: true, Arrivals: 97, Backlog: 16, Reason: why}
	res.Verdict = ladderresult.Judge(res.Steps, res.GoodFractionTarget, res.KneeFactor)
	if res.Capacity != 2 || res.Knee != 4 || res.CapacityBound != ladderresult.BoundMeasured {
		t.Fatalf("verdict %+v: want capacity 2 (measured) below the saturated 4 req/s step, knee 4", res.Verdict)
	}
	var txt, svg, page bytes.Buffer
	if err := LadderText(&txt, res); err != nil {
		t.Fatal(err)
	}
	if err := LadderSVG(&svg, res); err != nil {
		t.Fatal(err)
	}
	if err := LadderHTML(&page, res, Meta{}); err != nil {
		t.Fatal(err)
	}
	js, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ where, got, want string }{
		{"text column", txt.String(), "SATURATED"},
		{"text note", txt.String(), "step 2 " + why + ": not steady, never the capacity"},
		{"text capacity", txt.String(), "the valid 4 req/s step was saturated"},
		{"HTML row", page.String(), `class="saturated"`},
		{"HTML note", page.String(), "TTFT rising 95 ms/s"},
		{"SVG label", svg.String(), "step 2 saturated"},
		{"SVG title", svg.String(), "backlog +16"},
		{"JSON step", string(js), `"saturated":true,"saturation":"` + why + `"`},
		{"JSON list", string(js), `"saturated_steps":[2]`},
	} {
		if !strings.Contains(c.got, c.want) {
			t.Errorf("%s lacks %q", c.where, c.want)
		}
	}
}
