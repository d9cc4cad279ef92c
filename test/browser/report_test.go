package browser

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/llmprobe/llmprobe/internal/ladderresult"
	"github.com/llmprobe/llmprobe/internal/ledger"
	"github.com/llmprobe/llmprobe/internal/report"
	"github.com/llmprobe/llmprobe/internal/stats"
	"github.com/llmprobe/llmprobe/internal/verdict"
)

const ms = time.Millisecond

// reportLadder is a five-step ladder whose TTFT climbs from about 100 ms
// to seconds (the knee), with its third step saturated and its last
// generator-invalid: every mark the chart and its legend can show.
func reportLadder() ladderresult.LadderResult {
	gates := stats.Gates{TTFT: 500 * ms}
	res := ladderresult.LadderResult{Target: "http://10.0.0.1:8000/v1", GoodFractionTarget: 0.9, KneeFactor: 2,
		ClassGates: map[string]stats.Gates{"default": gates}, Started: time.Date(2026, 12, 2, 1, 0, 0, 0, time.UTC)}
	for i, rate := range []float64{2, 4, 8, 12, 16} {
		window := 10 * time.Second
		n := int(rate * window.Seconds())
		var recs []ledger.Record
		for j := range n {
			p := time.Duration(j) * window / time.Duration(n)
			ttft := 90*ms + time.Duration(float64(j)/float64(n)*rate*rate*rate)*ms
			recs = append(recs, ledger.Record{Mode: ledger.ModeOpen, Planned: p, Dispatched: p + ms, FirstContent: p + ttft,
				LastContent: p + ttft + 200*ms, End: p + ttft + 210*ms, Outcome: ledger.OK, Reason: ledger.ReasonStop})
		}
		cfg := stats.Config{RequestedRate: rate, Window: window, Gates: gates}
		if i == 4 {
			cfg.Validity.MaxLagP99 = ms / 2
		}
		st := ladderresult.LadderStep{Index: i + 1, Rate: rate, Summary: stats.Summarize(cfg, recs)}
		if i == 2 {
			st.Summary.Steady = &verdict.Steady{Judged: true, Saturated: true, Reason: "saturated: backlog grew through the step"}
		}
		res.Steps = append(res.Steps, st)
	}
	res.Verdict = ladderresult.Judge(res.Steps, res.GoodFractionTarget, res.KneeFactor)
	return res
}

var reportMeta = report.Meta{Version: "0.9.0", Command: "llmprobe ladder --url http://10.0.0.1:8000/v1 --steps 2,4,8,12,16 --seed 7",
	Target: "http://10.0.0.1:8000/v1", Model: "qwen2.5-7b-instruct", API: "openai-chat", Window: 10 * time.Second,
	Arrival: "poisson", Seed: 7, SeedSet: true}

// servePages serves each page at its path on the loopback address.
func servePages(t *testing.T, pages map[string][]byte) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, ok := pages[r.URL.Path]
		if r.URL.Path == "/favicon.ico" { // the browser asks; a report file has none
			w.WriteHeader(http.StatusNoContent)
			return
		}
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write(b)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// loadPage opens url and returns what the page wrote to the console (errors,
// warnings and uncaught exceptions) while it loaded.
func loadPage(t *testing.T, bctx context.Context, url, waitFor string) []string {
	t.Helper()
	if err := chromedp.Do(bctx); err != nil { // open the tab, so no message is lost
		t.Fatal(err)
	}
	cctx, stop := context.WithCancel(bctx)
	var mu sync.Mutex
	var msgs []string
	done := make(chan struct{})
	go func() {
		defer close(done)
		for m, err := range chromedp.Console(cctx) {
			if err != nil {
				return
			}
			if m.Type == chromedp.ConsoleError || m.Type == chromedp.ConsoleWarning || m.IsException() {
				mu.Lock()
				msgs = append(msgs, m.String())
				mu.Unlock()
			}
		}
	}()
	err := chromedp.Do(bctx, chromedp.EmulateViewport(1280, 1000), chromedp.Navigate(url), chromedp.WaitVisible(chromedp.CSS(waitFor)))
	time.Sleep(300 * ms) // let late console messages arrive
	stop()
	<-done
	if err != nil {
		t.Fatalf("loading %s: %v", url, err)
	}
	mu.Lock()
	defer mu.Unlock()
	return msgs
}

type box struct {
	L, T, R, B float64
	Text       string
}

func (a box) intersects(b box) bool { return a.L < b.R && b.L < a.R && a.T < b.B && b.T < a.B }
func (a box) inside(b box) bool     { return a.L >= b.L && a.R <= b.R && a.T >= b.T && a.B <= b.B }

// TestLadderReportInBrowser: the ladder's HTML report loads without a
// console error; its chart's legend items (each <g class="legend-item">,
// swatch and text, as the browser lays them out) overlap neither each other
// nor the plot, and all lie inside the SVG; the header names the run; the
// TTFT axis is logarithmic with the gate drawn.
func TestLadderReportInBrowser(t *testing.T) {
	path, _ := chromiumPath(t)
	var page bytes.Buffer
	if err := report.LadderHTML(&page, reportLadder(), reportMeta); err != nil {
		t.Fatal(err)
	}
	base := servePages(t, map[string][]byte{"/ladder.html": page.Bytes()})
	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	defer cancel()
	bctx := browser(t, ctx, path)
	if msgs := loadPage(t, bctx, base+"/ladder.html", "svg g.legend"); len(msgs) > 0 {
		t.Errorf("console errors: %q", msgs)
	}

	type layout struct {
		SVG, Plot box
		Items     []box
	}
	l, err := chromedp.Run(bctx, chromedp.Evaluate[layout](`(() => {
		const b = (el, text) => { const r = el.getBoundingClientRect(); return {L: r.left, T: r.top, R: r.right, B: r.bottom, Text: text || ""}; };
		const svg = document.querySelector("svg");
		return {SVG: b(svg), Plot: b(svg.querySelector('rect[stroke="#333333"]')),
			Items: Array.from(svg.querySelectorAll("g.legend-item")).map(g => b(g, g.textContent))};
	})()`))
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Items) < 7 {
		t.Fatalf("%d legend items, want at least 7: %+v", len(l.Items), l.Items)
	}
	for i, a := range l.Items {
		if a.R-a.L < 10 || a.B-a.T < 5 {
			t.Errorf("legend item %q has no size: %+v", a.Text, a)
		}
		if !a.inside(l.SVG) {
			t.Errorf("legend item %q %+v lies outside the SVG %+v", a.Text, a, l.SVG)
		}
		if a.intersects(l.Plot) {
			t.Errorf("legend item %q %+v overlaps the plot %+v", a.Text, a, l.Plot)
		}
		for _, b := range l.Items[:i] {
			if a.intersects(b) {
				t.Errorf("legend items %q %+v and %q %+v overlap", b.Text, b, a.Text, a)
			}
		}
	}

	text := func(js string) string {
		s, err := chromedp.Run(bctx, chromedp.Evaluate[string](js))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	header := text(`document.querySelector("table.header").innerText`)
	for _, want := range []string{"0.9.0", "--seed 7", "qwen2.5-7b-instruct", "openai-chat", "step duration\t10s", "poisson", "TTFT ≤ 500ms"} {
		if !strings.Contains(header, want) {
			t.Errorf("header lacks %q:\n%s", want, header)
		}
	}
	if g := text(`document.querySelector("svg g.gate text").textContent`); g != "TTFT gate 500ms" {
		t.Errorf("gate label %q", g)
	}
	ticks := text(`Array.from(document.querySelectorAll("svg text[text-anchor=end][fill='#1f77b4']")).map(e => e.textContent).join(" ")`)
	if !strings.HasPrefix(ticks, "10ms 20ms 50ms 100ms 200ms 500ms 1s") && !strings.HasPrefix(ticks, "100ms 200ms 500ms 1s") {
		t.Errorf("TTFT axis ticks %q, want 1-2-5 decades", ticks)
	}
	rows := text(`Array.from(document.querySelectorAll("tr.saturated, tr.invalid")).map(r => r.className + ":" + r.cells[0].innerText).join(" ")`)
	if rows != "saturated:3 invalid:5" {
		t.Errorf("marked rows %q, want step 3 saturated and step 5 invalid", rows)
	}
}

// TestProbeReportInBrowser: probe --html's page loads without a console
// error and shows the header, outcomes and latency.
func TestProbeReportInBrowser(t *testing.T) {
	path, _ := chromiumPath(t)
	var recs []ledger.Record
	for j := range 20 {
		p := time.Duration(j) * 100 * ms
		recs = append(recs, ledger.Record{Mode: ledger.ModeOpen, Planned: p, Dispatched: p + ms, FirstContent: p + 80*ms,
			LastContent: p + 300*ms, End: p + 310*ms, Outcome: ledger.OK, Reason: ledger.ReasonStop})
	}
	recs[19].Outcome, recs[19].Reason, recs[19].FirstContent, recs[19].LastContent = ledger.Rejected, ledger.ReasonStatus503, 0, 0
	s := stats.Summarize(stats.Config{RequestedRate: 10, Window: 2 * time.Second, Gates: stats.Gates{TTFT: 500 * ms}}, recs)
	m := reportMeta
	m.Window, m.WindowName, m.Command = 2*time.Second, "window", "llmprobe probe --rate 10 --duration 2s"
	m.Verdict = &report.RunVerdict{Result: report.ResultFail, Exit: 5, Cause: report.CauseTarget, Why: "gates failed: good fraction 0.0% below --good-fraction 90.0%"}
	var page bytes.Buffer
	if err := report.ProbeHTML(&page, s, m); err != nil {
		t.Fatal(err)
	}
	base := servePages(t, map[string][]byte{"/probe.html": page.Bytes()})
	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	defer cancel()
	bctx := browser(t, ctx, path)
	if msgs := loadPage(t, bctx, base+"/probe.html", "table.outcomes"); len(msgs) > 0 {
		t.Errorf("console errors: %q", msgs)
	}
	got, err := chromedp.Run(bctx, chromedp.Evaluate[string](`Array.from(document.querySelectorAll("table.outcomes tr")).slice(1).map(r => r.cells[0].innerText + "=" + r.cells[1].innerText).join(" ")`))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"ok=19", "rejected=1"} {
		if !strings.Contains(got, want) {
			t.Errorf("outcomes %q lack %s", got, want)
		}
	}
	lat, err := chromedp.Run(bctx, chromedp.Evaluate[string](`document.querySelector("table.latency").innerText`))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(lat, "TTFT\t19\t80ms") {
		t.Errorf("latency table lacks the TTFT row:\n%s", lat)
	}
	// The page leads with its verdict: the first thing under the title,
	// above the header, in larger type than the body.
	type lead struct {
		Result, Text       string
		ResultPx, BodyPx   float64
		LeadTop, HeaderTop float64
	}
	l, err := chromedp.Run(bctx, chromedp.Evaluate[lead](`(() => {
		const r = document.querySelector("div.lead strong.result"), d = document.querySelector("div.lead");
		return {Result: r.innerText, Text: d.innerText, ResultPx: parseFloat(getComputedStyle(r).fontSize),
			BodyPx: parseFloat(getComputedStyle(document.body).fontSize),
			LeadTop: d.getBoundingClientRect().top, HeaderTop: document.querySelector("table.header").getBoundingClientRect().top};
	})()`))
	if err != nil {
		t.Fatal(err)
	}
	if l.Result != "FAIL" || !strings.Contains(l.Text, "exit status 5") || !strings.Contains(l.Text, "gates failed") || l.ResultPx <= l.BodyPx || l.LeadTop >= l.HeaderTop {
		t.Errorf("verdict %+v: want FAIL, exit status 5, its cause, larger than the body and above the header", l)
	}
}
