package report

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/ladderresult"
	"github.com/llmprobe/llmprobe/internal/ledger"
	"github.com/llmprobe/llmprobe/internal/stats"
)

// TestMatchedGaps: the per-request client − server gaps appear in the probe
// text and JSON and the ladder's step view when requests carried the
// server's timings, with the figures of the records, and nowhere without;
// a replayed request is counted in the text and JSON.
func TestMatchedGaps(t *testing.T) {
	ms := time.Millisecond
	summary := func(timings bool) stats.Summary {
		a := stats.NewAccumulator(stats.Config{Mode: ledger.ModeOpen, RequestedRate: 10, Window: 2 * time.Second})
		for j := range 10 {
			p := time.Duration(j) * 100 * ms
			r := ledger.Record{Mode: ledger.ModeOpen, Planned: p, Dispatched: p + ms, FirstContent: p + 11*ms,
				LastContent: p + 20*ms, End: p + 21*ms, Usage: ledger.Usage{Known: true, Completion: 10},
				Outcome: ledger.OK, Reason: ledger.ReasonStop}
			if timings && j == 0 {
				r.Replays, r.ReplayReason = 1, ledger.ReasonStaleConnection
			}
			if timings {
				// TTFT from dispatch 10ms, TPOT 1ms: gaps 10 − (4+j/10) ms and 1 − 0.5 ms.
				r.ServerTimings = &ledger.ServerTimings{PromptN: 8, PromptMS: 4 + float64(j)/10, PredictedN: 10, PredictedPerTokenMS: 0.5}
			}
			a.Add(&r)
		}
		return a.Summary()
	}
	for _, timings := range []bool{true, false} {
		s := summary(timings)
		var txt, js, lad bytes.Buffer
		if err := Text(&txt, s); err != nil {
			t.Fatal(err)
		}
		if err := JSON(&js, s); err != nil {
			t.Fatal(err)
		}
		res := ladderresult.LadderResult{Target: "t", GoodFractionTarget: 0.9, KneeFactor: 2, Steps: []ladderresult.LadderStep{{Index: 1, Rate: 10, Summary: s}}}
		res.Verdict = ladderresult.Judge(res.Steps, res.GoodFractionTarget, res.KneeFactor)
		if err := LadderText(&lad, res); err != nil {
			t.Fatal(err)
		}
		var p struct {
			MatchedGaps *MatchedGaps `json:"matched_gaps"`
			Replayed    int          `json:"replayed"`
		}
		if err := json.Unmarshal(js.Bytes(), &p); err != nil {
			t.Fatal(err)
		}
		var probePage, ladderPage bytes.Buffer
		if err := ProbeHTML(&probePage, s, Meta{}); err != nil {
			t.Fatal(err)
		}
		if err := LadderHTML(&ladderPage, res, Meta{}); err != nil {
			t.Fatal(err)
		}
		probeRow := regexp.MustCompile(`<tr><td>prefill gap</td><td>10</td><td>5.5ms</td>`).MatchString(probePage.String())
		ladderRow := regexp.MustCompile(`<table class="matched">\s*<tr><th>step</th>.*\s*<tr><td>1</td><td>10</td><td>10</td><td>5.5ms</td>`).MatchString(ladderPage.String())
		if probeRow != timings || ladderRow != timings {
			t.Errorf("timings %v: per-request gap table in the probe HTML %v, the ladder HTML %v", timings, probeRow, ladderRow)
		}
		shown := strings.Contains(txt.String(), "client − server per request") && strings.Contains(lad.String(), "client − server per request")
		if !timings {
			if shown || p.MatchedGaps != nil || p.Replayed != 0 || strings.Contains(txt.String(), "replayed") {
				t.Errorf("gaps shown without server timings:\n%s\n%s", txt.String(), js.String())
			}
			continue
		}
		if p.Replayed != 1 || !strings.Contains(txt.String(), "  replayed  ") {
			t.Errorf("replayed %d, want 1 in the JSON and the text:\n%s", p.Replayed, txt.String())
		}
		if !shown || p.MatchedGaps == nil {
			t.Fatalf("gaps not shown:\n%s\n%s", txt.String(), lad.String())
		}
		g := p.MatchedGaps
		// Nearest rank over 5.1..6.0 ms: p50 = 5.5ms; every TPOT gap 0.5ms.
		if g.Prefill.Count != 10 || !near(g.Prefill.P50, 0.0055) || !near(g.Prefill.Max, 0.006) || g.TPOT.Count != 10 || !near(g.TPOT.P95, 0.0005) {
			t.Errorf("matched gaps %+v, want prefill p50 5.5ms, max 6ms and TPOT 0.5ms over 10", *g)
		}
		rows := map[string]string{}
		for _, l := range strings.Split(txt.String(), "\n") {
			if f := strings.Fields(l); len(f) > 4 && f[1] == "gap" {
				rows[f[0]] = strings.Join(f[2:5], " ")
			}
		}
		if rows["prefill"] != "10 5.5ms 5.9ms" || rows["TPOT"] != "10 500µs 500µs" {
			t.Errorf("text rows %q:\n%s", rows, txt.String())
		}
	}
}

func near(a, b float64) bool { return a-b < 1e-9 && b-a < 1e-9 }
