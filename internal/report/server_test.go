package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/ladderresult"
	"github.com/llmprobe/llmprobe/internal/servermetrics"
	"github.com/llmprobe/llmprobe/internal/stats"
)

// vllmView folds servermetrics' recorded vLLM fixtures (the start and end
// of a 60 s window) into a view, as a ladder step would.
func vllmView(t *testing.T) *servermetrics.View {
	t.Helper()
	acc := servermetrics.NewAccumulator(servermetrics.Auto, nil)
	t0 := time.Date(2026, 11, 29, 19, 0, 0, 0, time.UTC)
	for i, name := range []string{"vllm_start.prom", "vllm_end.prom"} {
		b, err := os.ReadFile(filepath.Join("..", "servermetrics", "testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		e, err := servermetrics.Parse(b, "text/plain; version=0.0.4")
		if err != nil {
			t.Fatal(err)
		}
		e.At = t0.Add(time.Duration(i) * time.Minute)
		acc.Add(e)
	}
	v := acc.View()
	v.URL = "http://127.0.0.1:8000/metrics"
	v.Explanation = servermetrics.Explain(v)
	return &v
}

// serverLadder is the golden ladder with a server view on its knee step
// and an endpoint that failed on its last step.
func serverLadder(t *testing.T) ladderresult.LadderResult {
	res := ladderResult("sim-local")
	res.Steps[res.KneeStep-1].Server = vllmView(t)
	down := servermetrics.Unavailable("http://127.0.0.1:8000/metrics", errors.New(`scrape http://127.0.0.1:8000/metrics: <script>alert(1)</script>`))
	res.Steps[len(res.Steps)-1].Server = &down
	return res
}

// TestLadderServerView: every rendering of a ladder shows each step's
// server view with its explanation, the server's TTFT beside the client's
// and the gap labelled as a difference of percentiles; a step whose
// endpoint failed says why; nothing server-made reaches the page
// unescaped.
func TestLadderServerView(t *testing.T) {
	res := serverLadder(t)
	knee := res.Steps[res.KneeStep-1]
	explanation := knee.Server.Explanation
	if !strings.HasPrefix(explanation, "waiting queue grew from 0 to 37; running up to 64; KV cache up to 98 %") {
		t.Fatalf("fixture explanation %q", explanation)
	}
	wantGap := servermetrics.Gap(*knee.Server, knee.Summary.TTFT.Count, knee.Summary.TTFT.P50, knee.Summary.TTFT.P95)
	if wantGap == nil {
		t.Fatal("no gap on the knee step")
	}
	g50, g95 := gapCells(wantGap)

	var txt bytes.Buffer
	if err := LadderText(&txt, res); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"server view (http://127.0.0.1:8000/metrics, vllm)",
		"server TTFT p50", "gap p95",
		"step " + strconv.Itoa(knee.Index) + " server: " + explanation,
		"step 1 server: no server view",
		"server metrics unavailable: scrape http://127.0.0.1:8000/metrics",
		"a difference of percentiles, not a percentile of differences",
		"60ms", "80ms", "0→37", "98 %", // server TTFT p50 and p95, the waiting queue, KV cache
	} {
		if !strings.Contains(txt.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, txt.String())
		}
	}
	if !strings.Contains(txt.String(), g50) || !strings.Contains(txt.String(), g95) {
		t.Errorf("text lacks the gap %s / %s", g50, g95)
	}

	back := ladderOf(t, res)
	js := back.Steps[res.KneeStep-1]
	if js.Server == nil || js.Server.Explanation != explanation || js.TTFTGap == nil || !reflect.DeepEqual(*js.TTFTGap, *wantGap) {
		t.Errorf("JSON knee step: server %+v gap %+v", js.Server, js.TTFTGap)
	}
	if back.Steps[0].Server != nil || !back.Steps[len(back.Steps)-1].Server.Unavailable {
		t.Errorf("JSON: first step %+v, last %+v", back.Steps[0].Server, back.Steps[len(back.Steps)-1].Server)
	}

	var page, svg bytes.Buffer
	if err := LadderHTML(&page, res, Meta{}); err != nil {
		t.Fatal(err)
	}
	if err := LadderSVG(&svg, res); err != nil {
		t.Fatal(err)
	}
	wellFormed(t, svg.Bytes())
	for _, want := range []string{"<h2>Server view (http://127.0.0.1:8000/metrics, vllm)</h2>", "network + queueing gap p50",
		"waiting queue grew from 0 to 37", "not a percentile of differences", "&lt;script&gt;"} {
		if !strings.Contains(page.String(), want) {
			t.Errorf("HTML lacks %q", want)
		}
	}
	if !strings.Contains(svg.String(), "server's own TTFT p95") || !strings.Contains(svg.String(), "server TTFT p95 80ms; waiting queue grew") {
		t.Errorf("SVG lacks the server series:\n%s", svg.String())
	}
	if strings.Contains(page.String()+svg.String(), "<script>") {
		t.Error("server text reached a page unescaped")
	}
}

// TestLadderWithoutServerView: a ladder with no server_metrics renders as
// before: no server section anywhere.
func TestLadderWithoutServerView(t *testing.T) {
	res := ladderResult("sim-local")
	var txt, page, svg bytes.Buffer
	if err := LadderText(&txt, res); err != nil {
		t.Fatal(err)
	}
	if err := LadderHTML(&page, res, Meta{}); err != nil {
		t.Fatal(err)
	}
	if err := LadderSVG(&svg, res); err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(res)
	for name, s := range map[string]string{"text": txt.String(), "HTML": page.String(), "SVG": svg.String(), "JSON": string(b)} {
		if strings.Contains(strings.ToLower(s), "server view") || strings.Contains(s, `"server"`) || strings.Contains(s, "own TTFT") {
			t.Errorf("%s has a server section without server views", name)
		}
	}
}

// TestProbeServerView: a probe's report carries the server's view of the
// run: a line in the text, server and ttft_gap in the JSON.
func TestProbeServerView(t *testing.T) {
	s := stats.Summarize(stats.Config{RequestedRate: 5, Window: 10 * time.Second}, cohort("open", 50, ms))
	v := vllmView(t)
	var txt bytes.Buffer
	if err := ServerText(&txt, v, s); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"server view (http://127.0.0.1:8000/metrics, vllm) over the run: waiting queue grew from 0 to 37",
		"server TTFT p50 60ms, p95 80ms (n=100)", "network + queueing gap p50 ", "not a percentile of differences"} {
		if !strings.Contains(txt.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, txt.String())
		}
	}
	p := ProbeOf(s)
	p.AddServer(v, s)
	var js bytes.Buffer
	if err := ProbeJSON(&js, p); err != nil {
		t.Fatal(err)
	}
	var back Probe
	if err := json.Unmarshal(js.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	if back.Server == nil || back.Server.Explanation != v.Explanation || back.TTFTGap == nil || back.TTFTGap.ClientCount != s.TTFT.Count {
		t.Errorf("JSON: server %+v gap %+v", back.Server, back.TTFTGap)
	}
	var none bytes.Buffer
	if err := ServerText(&none, nil, s); err != nil || none.Len() != 0 {
		t.Errorf("no view: %q, %v", none.String(), err)
	}
	p = ProbeOf(s)
	p.AddServer(nil, s)
	if p.Server != nil || p.TTFTGap != nil {
		t.Error("AddServer(nil) added a view")
	}
}
