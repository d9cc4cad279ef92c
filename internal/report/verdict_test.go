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
	"github.com/llmprobe/llmprobe/internal/quantile"
	"github.com/llmprobe/llmprobe/internal/servermetrics"
	"github.com/llmprobe/llmprobe/internal/stats"
)

var verdicts = map[string]RunVerdict{
	"pass":    {Result: ResultPass, Exit: 0, Why: "gates met: good fraction 100.0% ≥ --good-fraction 90.0%"},
	"fail":    {Result: ResultFail, Exit: 5, Cause: CauseTarget, Why: "gates failed: good fraction 0.0% below --good-fraction 90.0%"},
	"invalid": {Result: ResultInvalid, Exit: 4, Cause: CauseProber, Why: "generator invalid (host_starved): the figures cannot be trusted"},
	"wrong":   {Result: ResultFail, Exit: 8, Cause: CauseTarget, Wrong: "add failed 1 of 2 (mismatch 1)"},
}

// leadRE finds an HTML report's verdict: its result and exit status.
var leadRE = regexp.MustCompile(`<div class="lead (\w+)">\s*<p class="verdict"><strong class="result">([A-Z ]+)</strong> <span class="exit">exit status (\d+)</span>`)

// checkHTMLLead: the page leads with v (before the header table), says its
// cause and why.
func checkHTMLLead(t *testing.T, name, page string, v RunVerdict) {
	t.Helper()
	m := leadRE.FindStringSubmatch(page)
	if m == nil || m[1] != strings.ToLower(v.Result) || m[2] != v.Result || m[3] != itoa(v.Exit) {
		t.Fatalf("%s: HTML lead %q, want %s exit %d", name, m, v.Result, v.Exit)
	}
	if lead, header := strings.Index(page, `<div class="lead`), strings.Index(page, `<table class="header">`); lead > header {
		t.Errorf("%s: the verdict comes after the header", name)
	}
	if !strings.Contains(page, v.Why) || (v.Cause != "" && !strings.Contains(page, "cause: the "+v.Cause)) {
		t.Errorf("%s: HTML lead lacks why %q or cause %q", name, v.Why, v.Cause)
	}
}

// TestProbeVerdictEverywhere: the text, HTML and JSON of a probe tell the
// one verdict they were given: its result, exit status, cause and why.
func TestProbeVerdictEverywhere(t *testing.T) {
	s := summaries()["open"]
	for name, v := range verdicts {
		m := testMeta()
		m.Verdict = &v
		var txt, page, js bytes.Buffer
		if err := ProbeText(&txt, s, nil, m); err != nil {
			t.Fatal(err)
		}
		if err := ProbeHTMLWith(&page, s, nil, m); err != nil {
			t.Fatal(err)
		}
		p := ProbeOf(s)
		p.AddMeta(m)
		if err := ProbeJSON(&js, p); err != nil {
			t.Fatal(err)
		}
		if first, _, _ := strings.Cut(txt.String(), "\n"); first != "verdict: "+v.Line() {
			t.Errorf("%s: text starts %q, want the verdict %q", name, first, v.Line())
		}
		checkHTMLLead(t, name, page.String(), v)
		var back Probe
		if err := json.Unmarshal(js.Bytes(), &back); err != nil {
			t.Fatal(err)
		}
		if back.Verdict == nil || *back.Verdict != *v.JSON() {
			t.Errorf("%s: JSON verdict %+v, want %+v", name, back.Verdict, v.JSON())
		}
	}
}

// TestLadderVerdictEverywhere: a ladder's text (its verdict line), HTML and
// --json carry the one verdict; the JSON stays the result's schema.
func TestLadderVerdictEverywhere(t *testing.T) {
	res := ladderResult("sim-local")
	for name, v := range verdicts {
		m := testMeta()
		m.Verdict = &v
		var txt, page, js bytes.Buffer
		if err := VerdictText(&txt, &v); err != nil {
			t.Fatal(err)
		}
		if err := LadderHTML(&page, res, m); err != nil {
			t.Fatal(err)
		}
		if err := LadderJSON(&js, res, &v); err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(txt.String(), "verdict: "+v.Result+" (exit status "+itoa(v.Exit)) {
			t.Errorf("%s: text verdict %q", name, txt.String())
		}
		checkHTMLLead(t, name, page.String(), v)
		var back struct {
			Verdict *VerdictJSON `json:"verdict"`
		}
		var lr ladderresult.LadderResult
		if err := json.Unmarshal(js.Bytes(), &back); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(js.Bytes(), &lr); err != nil {
			t.Fatalf("%s: ladder JSON with its verdict no longer decodes as a result: %v", name, err)
		}
		if back.Verdict == nil || *back.Verdict != *v.JSON() || len(lr.Steps) != len(res.Steps) || lr.Capacity != res.Capacity {
			t.Errorf("%s: JSON verdict %+v (want %+v), %d steps, capacity %v", name, back.Verdict, v.JSON(), len(lr.Steps), lr.Capacity)
		}
	}
	var plain bytes.Buffer
	if err := LadderJSON(&plain, res, nil); err != nil || strings.Contains(plain.String(), `"verdict"`) {
		t.Errorf("no verdict given, yet one printed (%v)", err)
	}
}

// TestLadderLeadStop: the ladder's HTML lead says why it stopped — its
// stop_at rule, the step that aborted it, or its last step — and which
// steps' generator was invalid, by cause.
func TestLadderLeadStop(t *testing.T) {
	base := ladderResult("sim")
	stopped := base
	stopped.Steps, stopped.Aborted, stopped.AbortReason = base.Steps[:3:3], false, ""
	stopped.Steps[2].Aborted, stopped.Steps[2].AbortReason = false, ""
	stopped.StopAt, stopped.Stopped = "capacity", "stop_at capacity: step 3 failed its gates (good fraction 40.0% < 95.0%)"
	full := base
	full.Steps, full.Aborted, full.AbortReason = base.Steps[:4:4], false, ""
	for _, tc := range []struct {
		name      string
		res       ladderresult.LadderResult
		stop, gen string
	}{
		{"stop_at", stopped, "stop_at capacity: step 3 failed its gates (good fraction 40.0% &lt; 95.0%)", "VALID on every step (3)"},
		{"aborted", base, "aborted at step 5: rejection fraction 0.44 above 0.2", "INVALID on 1 of 5 steps: step 5 (dispatch_lag)"},
		{"ran all", full, "ran every step (4), up to 12 req/s", "VALID on every step (4)"},
	} {
		var page bytes.Buffer
		if err := LadderHTML(&page, tc.res, Meta{}); err != nil {
			t.Fatal(err)
		}
		got := page.String()
		for _, want := range []string{"<tr><th>stopped</th><td>" + tc.stop + "</td></tr>", "<tr><th>generator</th><td>" + tc.gen,
			`<strong class="result">NOT JUDGED</strong>`} {
			if !strings.Contains(got, want) {
				t.Errorf("%s: lead lacks %q", tc.name, want)
			}
		}
	}
}

// TestGapText: a gap whose bucket range spans 0 is given as the range
// alone, never as a point; other gaps as the point and its range.
func TestGapText(t *testing.T) {
	for _, tc := range []struct {
		name   string
		v      float64
		atMost bool
		r      *servermetrics.GapRange
		want   string
	}{
		{"spans zero, negative point", -0.00299, false, &servermetrics.GapRange{Low: -0.127, High: 0.0225}, "-127ms to 22.5ms"},
		{"spans zero, positive point", 0.004, false, &servermetrics.GapRange{Low: -0.001, High: 0.010}, "-1ms to 10ms"},
		{"positive", 0.012, false, &servermetrics.GapRange{Low: 0.003, High: 0.040}, "12ms (3ms to 40ms)"},
		{"all negative", -0.012, false, &servermetrics.GapRange{Low: -0.040, High: -0.003}, "-12ms (-40ms to -3ms)"},
		{"range touches zero", 0.005, false, &servermetrics.GapRange{Low: 0, High: 0.010}, "5ms (0s to 10ms)"},
		{"at most", 0.030, true, nil, "≤ 30ms"},
		{"no range", 0.030, false, nil, "30ms"},
	} {
		if got := GapText(tc.v, tc.atMost, tc.r); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestProbeGapSpanningZero: a probe whose client TTFT lies inside the
// server's bucket shows the gap as the range in text and HTML (no
// negative point), and its JSON keeps both bounds.
func TestProbeGapSpanningZero(t *testing.T) {
	v := vllmView(t)
	h := v.Get(servermetrics.TTFT).Histogram
	// The client's p50 and p95 a little below the server's: each gap's
	// point is negative, its bucket's range spans 0.
	s := stats.Summary{Window: 10 * time.Second, Planned: 100, Completed: 100,
		TTFT: quantile.Percentiles{Count: 100, Exact: true,
			P50: time.Duration((h.P50.Value - 0.0005) * float64(time.Second)), P95: time.Duration((h.P95.Value - 0.0005) * float64(time.Second))}}
	g := servermetrics.Gap(*v, s.TTFT.Count, s.TTFT.P50, s.TTFT.P95)
	if g == nil || g.P50Range == nil || !(g.P50Range.Low < 0 && g.P50Range.High > 0) || g.P50 >= 0 {
		t.Fatalf("fixture: want a negative p50 gap whose range spans 0, got %+v", g)
	}
	var txt, page, js bytes.Buffer
	if err := ServerText(&txt, v, s); err != nil {
		t.Fatal(err)
	}
	if err := ProbeHTMLWith(&page, s, v, Meta{}); err != nil {
		t.Fatal(err)
	}
	p := ProbeOf(s)
	p.AddServer(v, s)
	if err := ProbeJSON(&js, p); err != nil {
		t.Fatal(err)
	}
	point := servermetrics.Seconds(g.P50)
	rng := servermetrics.Seconds(g.P50Range.Low) + " to " + servermetrics.Seconds(g.P50Range.High)
	for name, out := range map[string]string{"text": txt.String(), "HTML": page.String()} {
		if !strings.Contains(out, rng) || strings.Contains(out, point+" (") {
			t.Errorf("%s: want the gap as %q, never the point %q:\n%s", name, rng, point, out)
		}
	}
	if !strings.Contains(page.String(), "<h2>Server view (http://127.0.0.1:8000/metrics, vllm)</h2>") || !strings.Contains(page.String(), v.Explanation) {
		t.Error("probe HTML lacks the server view section")
	}
	var back struct {
		Gap *servermetrics.TTFTGap `json:"ttft_gap"`
	}
	if err := json.Unmarshal(js.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	if back.Gap == nil || back.Gap.P50Range == nil || *back.Gap.P50Range != *g.P50Range {
		t.Errorf("JSON gap %+v lost its bounds %+v", back.Gap, g.P50Range)
	}
}

// TestNotFoundNamesPath: a 404 is reported with the path requested in the
// text, the HTML (outcomes and lead) and the JSON.
func TestNotFoundNamesPath(t *testing.T) {
	recs := cohort(ledger.ModeOpen, 10, time.Millisecond)
	for i := range 3 {
		recs[i].Outcome, recs[i].Reason, recs[i].FirstContent, recs[i].LastContent = ledger.HTTPError, ledger.ReasonNotFound, 0, 0
	}
	s := stats.Summarize(stats.Config{RequestedRate: 10, Window: time.Second}, recs)
	for _, tc := range []struct{ path, want string }{
		{"/v1/chat/completions", "not_found 3 (404 for /v1/chat/completions)"},
		{"", "not_found 3"},
	} {
		m := Meta{Path: tc.path}
		var txt, page, js bytes.Buffer
		if err := ProbeText(&txt, s, nil, m); err != nil {
			t.Fatal(err)
		}
		if err := ProbeHTMLWith(&page, s, nil, m); err != nil {
			t.Fatal(err)
		}
		p := ProbeOf(s)
		p.AddMeta(m)
		if err := ProbeJSON(&js, p); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(txt.String(), tc.want) || strings.Count(page.String(), tc.want) != 2 {
			t.Errorf("path %q: want %q in the text and twice in the HTML (outcomes, lead)", tc.path, tc.want)
		}
		if tc.path == "" && strings.Contains(txt.String()+page.String(), "404 for") {
			t.Errorf("no path known, yet one named")
		}
		if p.RequestPath != tc.path || (tc.path != "" && !strings.Contains(js.String(), `"request_path": "`+tc.path+`"`)) {
			t.Errorf("JSON request_path %q, want %q", p.RequestPath, tc.path)
		}
	}
}
