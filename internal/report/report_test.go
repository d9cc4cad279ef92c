package report

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/durfmt"
	"github.com/llmprobe/llmprobe/internal/ladderresult"
	"github.com/llmprobe/llmprobe/internal/ledger"
	"github.com/llmprobe/llmprobe/internal/stats"
)

var update = flag.Bool("update", false, "rewrite golden files")

const ms = time.Millisecond

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading golden %s (run with -update to create): %v", path, err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from golden (run go test -update to accept):\n--- got ---\n%s", path, got)
	}
}

// cohort builds a deterministic probe cohort: n ok requests with growing
// latencies and a few failures of every kind.
func cohort(mode ledger.Mode, n int, lag time.Duration) []ledger.Record {
	var recs []ledger.Record
	for i := range n {
		p := time.Duration(i) * 100 * ms
		ttft := time.Duration(50+i*5) * ms
		e2e := ttft + time.Duration(500+i*10)*ms
		recs = append(recs, ledger.Record{
			Mode: mode, Planned: p, Dispatched: p + lag, FirstContent: p + ttft,
			LastContent: p + e2e - ms, End: p + e2e, ChunkGaps: []time.Duration{10 * ms, time.Duration(20+i) * ms},
			Usage: ledger.Usage{Known: true, Completion: 21}, Outcome: ledger.OK, Reason: ledger.ReasonStop,
		})
	}
	p := time.Duration(n) * 100 * ms
	recs = append(recs,
		ledger.Record{Mode: mode, Planned: p, Dispatched: p + lag, End: p + 30*ms, Outcome: ledger.Rejected, Reason: ledger.ReasonStatus429},
		ledger.Record{Mode: mode, Planned: p + 10*ms, Dispatched: p + 10*ms + lag, End: p + 40*ms, Outcome: ledger.HTTPError, Reason: ledger.ReasonUnauthorized},
		ledger.Record{Mode: mode, Planned: p + 20*ms, Dispatched: p + 20*ms + lag, End: p + 5*time.Second, Outcome: ledger.Censored, Reason: ledger.ReasonDrainDeadline},
		ledger.Record{Mode: mode, Planned: p + 30*ms, Outcome: ledger.Unsent, Reason: ledger.ReasonBudget},
	)
	return recs
}

func summaries() map[string]stats.Summary {
	gates := stats.Gates{TTFT: 120 * ms, TPOT: 34 * ms, E2E: 2 * time.Second}
	return map[string]stats.Summary{
		"open": stats.Summarize(stats.Config{RequestedRate: 10, Window: 2500 * ms, Gates: gates},
			append(cohort(ledger.ModeOpen, 20, ms), ledger.Record{Mode: ledger.ModeOpen, Planned: 2100 * ms, Dispatched: 2101 * ms,
				End: 2200 * ms, Outcome: ledger.Cancelled, Reason: ledger.ReasonInjected})),
		"closed": stats.Summarize(stats.Config{Mode: ledger.ModeClosed, Window: 2500 * ms}, cohort(ledger.ModeClosed, 5, ms)),
		"invalid": stats.Summarize(stats.Config{RequestedRate: 100, Window: 2500 * ms},
			append(cohort(ledger.ModeOpen, 20, 40*ms), ledger.Record{Mode: ledger.ModeOpen, Planned: 0, Outcome: ledger.Unsent, Reason: ledger.ReasonClientCap})),
		"empty":   stats.Summarize(stats.Config{Mode: ledger.ModeOpen, RequestedRate: 1, Window: time.Second}, nil),
		"retries": stats.Summarize(stats.Config{RequestedRate: 10, Window: 2500 * ms, Gates: gates}, retried(cohort(ledger.ModeOpen, 20, ms))),
	}
}

// retried gives the first three ok records of recs two failed attempts
// before them (a refused connection, then a 429), and adds one arrival whose
// retry, planned after the window, is still refused.
func retried(recs []ledger.Record) []ledger.Record {
	out := make([]ledger.Record, 0, len(recs)+8)
	id := uint64(0)
	next := func(r ledger.Record) ledger.Record {
		id++
		r.ID, r.Attempt = id, max(r.Attempt, 1)
		out = append(out, r)
		return r
	}
	for i, r := range recs {
		if i >= 3 {
			next(r)
			continue
		}
		p := r.Planned
		a := next(ledger.Record{Mode: r.Mode, Planned: p, Dispatched: p + ms, End: p + 2*ms, Outcome: ledger.TransportError, Reason: ledger.ReasonConnectionRefused})
		b := next(ledger.Record{Mode: r.Mode, Attempt: 2, RetryOf: a.ID, FirstPlanned: p, Planned: p + 50*ms, Dispatched: p + 51*ms, Headers: p + 60*ms,
			End: p + 60*ms, Status: 429, Outcome: ledger.Rejected, Reason: ledger.ReasonStatus429})
		shift := 200 * ms
		r.Attempt, r.RetryOf, r.FirstPlanned = 3, b.ID, p
		r.Planned, r.Dispatched, r.FirstContent, r.LastContent, r.End = p+shift, r.Dispatched+shift, r.FirstContent+shift, r.LastContent+shift, r.End+shift
		next(r)
	}
	p := 2400 * ms
	a := next(ledger.Record{Mode: ledger.ModeOpen, Planned: p, Dispatched: p + ms, End: p + 2*ms, Outcome: ledger.TransportError, Reason: ledger.ReasonConnectionRefused})
	next(ledger.Record{Mode: ledger.ModeOpen, Attempt: 2, RetryOf: a.ID, FirstPlanned: p, Planned: p + 200*ms, Dispatched: p + 201*ms, End: p + 202*ms,
		Outcome: ledger.TransportError, Reason: ledger.ReasonConnectionRefused})
	return out
}

// With retries the report shows them, the identities hold on its face, the
// achieved rate is the offered load and refused connections are not admitted.
func TestProbeShowsRetries(t *testing.T) {
	s := summaries()["retries"]
	var js, txt bytes.Buffer
	if err := JSON(&js, s); err != nil {
		t.Fatal(err)
	}
	if err := Text(&txt, s); err != nil {
		t.Fatal(err)
	}
	var p Probe
	if err := json.Unmarshal(js.Bytes(), &p); err != nil {
		t.Fatal(err)
	}
	if p.Retries != 7 || p.Attempts != p.Planned+p.Retries || p.Attempts != p.Dispatched+p.Unsent || p.Planned != p.FirstDispatched+p.FirstUnsent {
		t.Errorf("planned %d retries %d attempts %d dispatched %d unsent %d first dispatched %d first unsent %d: identities broken",
			p.Planned, p.Retries, p.Attempts, p.Dispatched, p.Unsent, p.FirstDispatched, p.FirstUnsent)
	}
	if p.OutsideWindow != 0 {
		t.Errorf("outside window %d: a retry follows its arrival's window", p.OutsideWindow)
	}
	if want := float64(p.FirstDispatched) / p.WindowSeconds; p.AchievedRate != want {
		t.Errorf("achieved rate %v, want first attempts dispatched / window = %v", p.AchievedRate, want)
	}
	refused := p.Reasons[string(ledger.TransportError)][string(ledger.ReasonConnectionRefused)]
	if refused != 5 || p.Admitted != p.Dispatched-refused-p.Rejected {
		t.Errorf("admitted %d of %d dispatched with %d refused and %d rejected", p.Admitted, p.Dispatched, refused, p.Rejected)
	}
	if p.ArrivalE2E.Count != p.E2E.Count || p.ArrivalTTFT.Count != p.TTFT.Count || p.ArrivalTTFT.Max <= p.TTFT.Max || p.ArrivalE2E.P50 <= p.E2E.P50 {
		t.Errorf("arrival ttft %+v vs ttft %+v, arrival e2e %+v vs e2e %+v: want the same counts and larger figures",
			p.ArrivalTTFT, p.TTFT, p.ArrivalE2E, p.E2E)
	}
	out := txt.String()
	for _, want := range []string{"  retries   ", "  attempts  ", Boundaries[FigArrivalE2E], Boundaries[FigArrivalTTFT], "first attempts dispatched / window"} {
		if !strings.Contains(out, want) {
			t.Errorf("text report lacks %q:\n%s", want, out)
		}
	}
	var plain bytes.Buffer
	if err := Text(&plain, summaries()["open"]); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(plain.String(), Boundaries[FigArrivalE2E]) {
		t.Error("arrival figures shown without retries")
	}
}

func TestProbeGolden(t *testing.T) {
	for name, s := range summaries() {
		t.Run(name, func(t *testing.T) {
			var txt, js bytes.Buffer
			if err := Text(&txt, s); err != nil {
				t.Fatal(err)
			}
			if err := JSON(&js, s); err != nil {
				t.Fatal(err)
			}
			golden(t, "probe_"+name+".txt", txt.Bytes())
			golden(t, "probe_"+name+".json", js.Bytes())
		})
	}
}

func TestTextNamesEverything(t *testing.T) {
	for name, s := range summaries() {
		var b bytes.Buffer
		if err := Text(&b, s); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		for _, o := range ledger.Outcomes {
			if !strings.Contains(out, "  "+string(o)+" ") {
				t.Errorf("%s: outcome %s missing from the report", name, o)
			}
		}
		for _, want := range []string{"planned", "dispatched", "unsent", "admitted", "completed", "censored",
			"accepted/offered", "completed/accepted", "achieved rate", "goodput", "verdict",
			Boundaries[FigTTFT], Boundaries[FigE2E], Boundaries[FigDispatchLag], Boundaries[FigInterChunk], Boundaries[FigTPOT]} {
			if !strings.Contains(out, want) {
				t.Errorf("%s: report lacks %q", name, want)
			}
		}
		closed := strings.Contains(out, "CLOSED LOOP") && strings.Contains(out, "coordinated omission")
		if closed != (s.Mode == ledger.ModeClosed) {
			t.Errorf("%s: closed-loop warning present=%v for mode %s", name, closed, s.Mode)
		}
		if valid := strings.Contains(out, "generator verdict: VALID — the prober kept its schedule"); valid != s.Validity.Valid {
			t.Errorf("%s: verdict line does not match validity %v", name, s.Validity.Valid)
		}
		for _, r := range s.Validity.Reasons() {
			if !strings.Contains(out, r) {
				t.Errorf("%s: invalid reason %q not printed", name, r)
			}
		}
	}
}

func TestJSONContract(t *testing.T) {
	s := summaries()["open"]
	var b bytes.Buffer
	if err := JSON(&b, s); err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b.Bytes(), &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"mode", "planned", "dispatched", "unsent", "outcomes", "requested_rate", "achieved_rate",
		"window_seconds", "ttft", "ttft_from_dispatch", "e2e", "inter_chunk", "tpot", "dispatch_lag", "goodput", "valid", "invalid_reasons"} {
		if _, ok := m[k]; !ok {
			t.Errorf("JSON lacks required key %q", k)
		}
	}
	for _, k := range []string{"ttft", "ttft_from_dispatch", "e2e", "inter_chunk", "tpot", "dispatch_lag"} {
		d := m[k].(map[string]any)
		for _, f := range []string{"count", "p50", "p90", "p95", "p99", "max"} {
			if _, ok := d[f]; !ok {
				t.Errorf("%s lacks %s", k, f)
			}
		}
	}
	if got, want := m["ttft"].(map[string]any)["p50"].(float64), s.TTFT.P50.Seconds(); got != want {
		t.Errorf("ttft p50 = %v s, want %v s", got, want)
	}
	if m["mode"] != "open" || m["invalid_reasons"] == nil {
		t.Errorf("mode %v, invalid_reasons %v", m["mode"], m["invalid_reasons"])
	}
	gp := m["goodput"].(map[string]any)
	if gp["count"].(float64) != float64(s.Good) || gp["per_second"].(float64) != s.GoodputPerSecond {
		t.Errorf("goodput %v does not match summary %d %v", gp, s.Good, s.GoodputPerSecond)
	}
	if len(m["outcomes"].(map[string]any)) != len(ledger.Outcomes) {
		t.Errorf("outcomes must list the whole closed set: %v", m["outcomes"])
	}
}

func ladderResult(target string) ladderresult.LadderResult {
	res := ladderresult.LadderResult{Target: target, Gates: stats.Gates{TTFT: 300 * ms}, GoodFractionTarget: 0.95, KneeFactor: 2,
		Started: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	// A target with a true capacity near 8 req/s: TTFT grows past it and
	// goodput flattens.
	for i, rate := range []float64{2, 4, 8, 12, 16} {
		window := 10 * time.Second
		n := int(rate * window.Seconds())
		served := min(n, 90)
		var recs []ledger.Record
		for j := range n {
			p := time.Duration(j) * window / time.Duration(n)
			ttft := 100*ms + time.Duration(float64(j)/float64(n)*rate*rate*8)*ms
			r := ledger.Record{Mode: ledger.ModeOpen, Planned: p, Dispatched: p + ms, FirstContent: p + ttft,
				LastContent: p + ttft + 200*ms, End: p + ttft + 210*ms, Outcome: ledger.OK, Reason: ledger.ReasonStop}
			if j >= served {
				r = ledger.Record{Mode: ledger.ModeOpen, Planned: p, Dispatched: p + ms, End: p + 20*ms, Outcome: ledger.Rejected, Reason: ledger.ReasonStatus503}
			}
			recs = append(recs, r)
		}
		cfg := stats.Config{RequestedRate: rate, Window: window, Gates: res.Gates}
		if i == 4 {
			cfg.Validity.MaxLagP99 = ms / 2 // make the last step invalid
		}
		st := ladderresult.LadderStep{Index: i + 1, Rate: rate, Summary: stats.Summarize(cfg, recs)}
		if i == 4 {
			st.Aborted, st.AbortReason = true, "rejection fraction 0.44 above 0.2"
		}
		res.Steps = append(res.Steps, st)
	}
	res.Verdict = ladderresult.Judge(res.Steps, res.GoodFractionTarget, res.KneeFactor)
	res.Aborted, res.AbortReason = true, "rejection fraction 0.44 above 0.2"
	return res
}

func TestLadderGolden(t *testing.T) {
	res := ladderResult("sim-local")
	if res.CapacityStep == 0 || res.KneeStep == 0 {
		t.Fatalf("fixture should have a capacity and a knee: %+v %+v", res.CapacityStep, res.KneeStep)
	}
	var txt, svg, page, js bytes.Buffer
	if err := LadderText(&txt, res); err != nil {
		t.Fatal(err)
	}
	if err := LadderSVG(&svg, res); err != nil {
		t.Fatal(err)
	}
	if err := LadderHTML(&page, res, Meta{}); err != nil {
		t.Fatal(err)
	}
	enc := json.NewEncoder(&js)
	enc.SetIndent("", "  ")
	if err := enc.Encode(res); err != nil {
		t.Fatal(err)
	}
	golden(t, "ladder.txt", txt.Bytes())
	golden(t, "ladder.svg", svg.Bytes())
	golden(t, "ladder.html", page.Bytes())
	golden(t, "ladder.json", js.Bytes())
	for _, want := range []string{"capacity", "knee"} {
		if !strings.Contains(svg.String(), want) {
			t.Errorf("SVG lacks the %s marker", want)
		}
	}
}

func TestSVGIsWellFormedAndEscaped(t *testing.T) {
	for _, res := range []ladderresult.LadderResult{ladderResult(`<evil & "target">`), {Target: "empty"}} {
		var svg, page bytes.Buffer
		if err := LadderSVG(&svg, res); err != nil {
			t.Fatal(err)
		}
		wellFormed(t, svg.Bytes())
		if err := LadderHTML(&page, res, Meta{}); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(svg.String()+page.String(), "<evil") {
			t.Error("target name must be escaped")
		}
	}
}

func wellFormed(t *testing.T, b []byte) {
	t.Helper()
	d := xml.NewDecoder(bytes.NewReader(b))
	for {
		_, err := d.Token()
		if errors.Is(err, io.EOF) {
			return
		}
		if err != nil {
			t.Fatalf("SVG is not well-formed XML: %v", err)
		}
	}
}

func TestNiceAxis(t *testing.T) {
	tests := []struct{ max, step, top float64 }{
		{0, 1, 1}, {16, 5, 20}, {10, 2, 12}, {0.7, 0.2, 0.8}, {1234, 500, 1500},
	}
	for _, tt := range tests {
		step, top := niceAxis(tt.max)
		if step != tt.step || top != tt.top {
			t.Errorf("niceAxis(%v) = %v,%v want %v,%v", tt.max, step, top, tt.step, tt.top)
		}
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestWriteErrorsAreWrapped(t *testing.T) {
	s := summaries()["open"]
	res := ladderResult("x")
	for name, err := range map[string]error{
		"text": Text(failWriter{}, s), "json": JSON(failWriter{}, s), "ladder": LadderText(failWriter{}, res),
		"svg": LadderSVG(failWriter{}, res), "html": LadderHTML(failWriter{}, res, Meta{}),
	} {
		if err == nil || !strings.Contains(err.Error(), "disk full") || !strings.HasPrefix(err.Error(), "report:") {
			t.Errorf("%s: error %v should wrap the write failure", name, err)
		}
	}
}

func TestMarkerLabelStaysInsidePlot(t *testing.T) {
	res := ladderResult("t")
	res.Capacity, res.CapacityStep = res.Steps[4].Rate, 5 // the right-most step
	var b bytes.Buffer
	if err := LadderSVG(&b, res); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), `text-anchor="end">capacity 16 req/s<`) {
		t.Error("a marker at the right edge should anchor its label at its end")
	}
	if strings.Contains(b.String(), `text-anchor="end">knee`) {
		t.Error("a marker on the left should not be end-anchored")
	}
}

// TestLadderInvalidStepNamedNeverUsed: the fixture's top step is invalid
// (its dispatch lag) and has the slowest TTFT: every report names it,
// draws it hollow and red, and uses it for neither knee nor capacity.
func TestLadderInvalidStepNamedNeverUsed(t *testing.T) {
	res := ladderResult("sim-local")
	if res.Steps[4].Summary.Validity.Valid || res.KneeStep == 5 || res.CapacityStep == 5 {
		t.Fatalf("fixture: step 5 must be invalid and unused: %+v", res.Verdict)
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
	for _, want := range []string{"step 5 invalid (dispatch_lag), not used for capacity or knee", "what to do:", "NO (dispatch_lag)"} {
		if !strings.Contains(txt.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, txt.String())
		}
		if !strings.Contains(page.String(), want) {
			t.Errorf("HTML lacks %q", want)
		}
	}
	if !strings.Contains(svg.String(), `fill="#ffffff" stroke="`+colInvalid+`"`) || !strings.Contains(svg.String(), ">step 5 invalid</text>") {
		t.Error("SVG: the invalid step is not hollow, red and labelled")
	}
	if strings.Count(svg.String(), `stroke="`+colInvalid+`"><title>`) != 2 {
		t.Errorf("SVG: want exactly the invalid step's two markers red")
	}
	l := ladderOf(t, res)
	if len(l.InvalidSteps) != 1 || l.InvalidSteps[0] != 5 || len(l.Steps[4].Causes) != 1 || l.Steps[4].Causes[0].Cause != "dispatch_lag" || l.Steps[4].Met {
		t.Errorf("JSON: invalid_steps %v, step 5 causes %+v", l.InvalidSteps, l.Steps[4].Causes)
	}
}

// TestCapacityLowerBound: when no valid step above the capacity failed
// (the top step passed, or those above were invalid), the capacity is a
// lower bound: "≥ X" in text, HTML and SVG, capacity_bound "lower" in JSON;
// with a valid failing step above it, it is measured.
func TestCapacityLowerBound(t *testing.T) {
	res := ladderResult("t")
	res.Steps = res.Steps[:2] // 2 and 4 req/s: both pass
	res.Verdict = ladderresult.Judge(res.Steps, res.GoodFractionTarget, res.KneeFactor)
	if res.CapacityBound != ladderresult.BoundLower || res.Capacity != 4 {
		t.Fatalf("fixture: %+v", res.Verdict)
	}
	var txt, svg, page bytes.Buffer
	_ = LadderText(&txt, res)
	_ = LadderSVG(&svg, res)
	_ = LadderHTML(&page, res, Meta{})
	if !strings.Contains(txt.String(), "capacity: ≥ 4 req/s (step 2), a LOWER BOUND") {
		t.Errorf("text:\n%s", txt.String())
	}
	if !strings.Contains(page.String(), "≥ 4 req/s (step 2), a LOWER BOUND") {
		t.Error("HTML lacks the lower bound")
	}
	if !strings.Contains(svg.String(), "capacity ≥ 4 req/s (lower bound)") {
		t.Error("SVG lacks the lower bound")
	}
	js, _ := json.Marshal(res)
	if !strings.Contains(string(js), `"capacity_bound":"lower"`) {
		t.Errorf("JSON lacks capacity_bound lower: %s", js)
	}
	full := ladderResult("t") // steps 3 and 4 are valid and fail: measured
	var t2 bytes.Buffer
	_ = LadderText(&t2, full)
	js, _ = json.Marshal(full)
	if full.CapacityBound != ladderresult.BoundMeasured || !strings.Contains(t2.String(), "capacity: 4 req/s (step 2): the highest valid step with good fraction ≥ 95.0% and not saturated") ||
		!strings.Contains(t2.String(), "the valid 8 req/s step failed") || !strings.Contains(string(js), `"capacity_bound":"measured"`) {
		t.Errorf("measured capacity: %+v\n%s\n%s", full.Verdict, t2.String(), js)
	}
}

// TestLadderPendingAndCutWindow: a step whose arrivals were stopped early
// and whose settle ended with requests in flight says both, in the text,
// the HTML and the JSON: the window its rates are over, and its pending
// requests counted in its good fraction as planned and not good.
func TestLadderPendingAndCutWindow(t *testing.T) {
	cfg := stats.Config{Mode: ledger.ModeOpen, RequestedRate: 10, Window: 20 * time.Second, Gates: stats.Gates{TTFT: 300 * ms}}
	a := stats.NewAccumulator(cfg)
	for j := range 16 {
		p := time.Duration(j) * 100 * ms
		r := ledger.Record{Mode: ledger.ModeOpen, Planned: p, Dispatched: p + ms, FirstContent: p + 100*ms,
			LastContent: p + 200*ms, End: p + 210*ms, Outcome: ledger.OK, Reason: ledger.ReasonStop}
		a.Add(&r)
	}
	a.SetWindow(2 * time.Second)
	a.SetPending(4)
	st := ladderresult.LadderStep{Index: 1, Rate: 10, Summary: a.Summary(), Aborted: true, AbortReason: "mid-step: TTFT p95 above 5 × gate 300ms"}
	res := ladderresult.LadderResult{Target: "t", Gates: cfg.Gates, GoodFractionTarget: 0.9, KneeFactor: 2, Steps: []ladderresult.LadderStep{st},
		Aborted: true, AbortReason: "step 1: " + st.AbortReason}
	res.Verdict = ladderresult.Judge(res.Steps, res.GoodFractionTarget, res.KneeFactor)
	if !st.Summary.Validity.Valid || st.Summary.GoodFraction != 0.8 || res.CapacityStep != 0 {
		t.Fatalf("valid %v, good fraction %g, capacity step %d: want valid, 16/(16+4) = 0.8, no capacity at 0.9",
			st.Summary.Validity.Valid, st.Summary.GoodFraction, res.CapacityStep)
	}
	var txt, page bytes.Buffer
	if err := LadderText(&txt, res); err != nil {
		t.Fatal(err)
	}
	if err := LadderHTML(&page, res, Meta{}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"step 1: its arrivals stopped after 2s of its 20s",
		"step 1: 4 request(s) still in flight when it was summarised",
		"(good 16 / (planned 16 + pending 4))",
	} {
		if !strings.Contains(txt.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, txt.String())
		}
		// html/template escapes "+" as &#43;.
		if want = strings.ReplaceAll(want, "+", "&#43;"); !strings.Contains(page.String(), want) {
			t.Errorf("HTML lacks %q", want)
		}
	}
	if !strings.Contains(txt.String(), "80.0%") {
		t.Errorf("text good%% is not 80.0%% (16 good of 16 planned + 4 pending):\n%s", txt.String())
	}
	js := ladderOf(t, res).Steps[0]
	if js.Pending != 4 || js.WindowS != 2 || js.PlannedRate != 10 || js.GoodFraction != 0.8 || js.Goodput != 8 || js.Met {
		t.Errorf("JSON step: pending %d window %gs planned rate %g good fraction %g goodput %g met %v; want 4, 2, 10, 0.8, 8, false",
			js.Pending, js.WindowS, js.PlannedRate, js.GoodFraction, js.Goodput, js.Met)
	}
}

// TestLadderRatesPrintedAsConfigured: step rates, capacity, knee and
// goodput above 1000 req/s print as numbers, in the text, the SVG and the
// HTML (%.3g once printed a 1500 req/s capacity as 1.5e+03 and a 1234
// req/s step as 1.23e+03).
func TestLadderRatesPrintedAsConfigured(t *testing.T) {
	res := ladderResult("big")
	for i := range res.Steps {
		res.Steps[i].Rate = []float64{1234, 1500, 3000, 4500, 6000}[i]
	}
	res.Verdict = ladderresult.Judge(res.Steps, res.GoodFractionTarget, res.KneeFactor)
	if res.CapacityStep == 0 {
		t.Fatal("fixture: no capacity")
	}
	var txt, svg, page bytes.Buffer
	for _, f := range []func() error{
		func() error { return LadderText(&txt, res) }, func() error { return LadderSVG(&svg, res) }, func() error { return LadderHTML(&page, res, Meta{}) },
	} {
		if err := f(); err != nil {
			t.Fatal(err)
		}
	}
	want := durfmt.Rate(res.Capacity) + " req/s"
	for name, out := range map[string]string{"text": txt.String(), "svg": svg.String(), "html": page.String()} {
		if strings.Contains(out, "e+0") {
			i := strings.Index(out, "e+0")
			t.Errorf("%s prints a rate in exponent form: …%s…", name, out[max(i-30, 0):min(i+10, len(out))])
		}
		if !strings.Contains(out, want) {
			t.Errorf("%s lacks the capacity %q", name, want)
		}
	}
	if !strings.Contains(txt.String(), "1234") {
		t.Error("the text report does not print the 1234 req/s step as configured")
	}
}
