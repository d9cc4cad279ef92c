package report

import (
	"bytes"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/verdict"
)

func testMeta() Meta {
	return Meta{Version: "1.2.3", Command: "llmprobe ladder --url http://[redacted]@10.0.0.1:8000/v1 --seed 7",
		Target: "http://10.0.0.1:8000/v1", Model: "qwen-7b", API: "openai-chat", Window: 30 * time.Second,
		Arrival: "gamma (k = 0.5)", Seed: 7, SeedSet: true}
}

// The ladder's HTML names every header field, and its SVG the run's
// description under the title.
func TestLadderHeader(t *testing.T) {
	res := ladderResult("sim-local")
	var page, svg bytes.Buffer
	if err := LadderHTML(&page, res, testMeta()); err != nil {
		t.Fatal(err)
	}
	if err := LadderSVGMeta(&svg, res, testMeta()); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"<th>llmprobe version</th><td>1.2.3</td>", "<th>command</th><td>llmprobe ladder --url http://[redacted]@10.0.0.1:8000/v1 --seed 7</td>",
		"<th>target</th><td>http://10.0.0.1:8000/v1</td>", "<th>model</th><td>qwen-7b</td>", "<th>API</th><td>openai-chat</td>",
		"<th>step duration</th><td>30s</td>", "<th>arrival process</th><td>gamma (k = 0.5)</td>", "<th>seed</th><td>7</td>",
		"<th>gates</th><td>TTFT ≤ 300ms</td>", "<th>started</th><td>2026-01-02 03:04:05 UTC</td>",
		"<th>prober host</th><td>not measured</td>",
	} {
		if !strings.Contains(page.String(), want) {
			t.Errorf("HTML header lacks %q", want)
		}
	}
	if want := "llmprobe 1.2.3 · model qwen-7b · API openai-chat · step duration 30s · arrivals gamma (k = 0.5) · seed 7"; !strings.Contains(svg.String(), want) {
		t.Errorf("SVG lacks %q", want)
	}
	wellFormed(t, svg.Bytes())
}

// Host evidence is listed per step when the steps measured it.
func TestLadderHeaderHosts(t *testing.T) {
	res := ladderResult("sim")
	res.Steps[1].Summary.Validity.Host = verdict.HostHealth{Known: true, BusyKnown: true, Busy: 0.97, HostCPUs: 2}
	res.Steps[3].Summary.Validity.Host = verdict.HostHealth{Known: true, BusyKnown: true, Busy: 0.5, HostCPUs: 2}
	var page bytes.Buffer
	if err := LadderHTML(&page, res, Meta{}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"<div>step 2: host CPU 97% busy of 2 CPUs</div>", "<div>step 4: host CPU 50% busy of 2 CPUs</div>"} {
		if !strings.Contains(page.String(), want) {
			t.Errorf("HTML lacks %q", want)
		}
	}
}

func TestLogAxis(t *testing.T) {
	for _, c := range []struct {
		vs    []float64
		ticks string
	}{
		{[]float64{128, 1188, 300}, "100ms 200ms 500ms 1s 2s 5s 10s"},
		{[]float64{0, 45}, "10ms 20ms 50ms 100ms"},
		{[]float64{100}, "100ms 200ms 500ms 1s"},
		{nil, "1ms 2ms 5ms 10ms 20ms 50ms 100ms 200ms 500ms 1s"},
	} {
		a := newLogAxis(c.vs...)
		vs, _ := a.ticks()
		var got []string
		for _, v := range vs {
			got = append(got, msLabel(v))
		}
		if strings.Join(got, " ") != c.ticks {
			t.Errorf("ticks of %v = %v, want %s", c.vs, got, c.ticks)
		}
		for _, v := range c.vs {
			if f := a.frac(v); v > 0 && (f < 0 || f > 1) {
				t.Errorf("%v: frac(%g) = %g outside the axis", c.vs, v, f)
			}
		}
	}
	// Log scale: each decade takes the same height.
	a := newLogAxis(10, 10000)
	if d1, d2 := a.frac(100)-a.frac(10), a.frac(10000)-a.frac(1000); math.Abs(d1-d2) > 1e-9 {
		t.Errorf("decades differ in height: %g vs %g", d1, d2)
	}
}

// The gate is drawn at its height on the TTFT axis, labelled.
func TestSVGDrawsGate(t *testing.T) {
	var svg bytes.Buffer
	if err := LadderSVG(&svg, ladderResult("sim")); err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`<g class="gate"><line x1="80" y1="([0-9.]+)"[^>]*/><text[^>]*>TTFT gate 300ms</text></g>`).FindStringSubmatch(svg.String())
	if m == nil {
		t.Fatalf("no labelled gate line:\n%s", svg.String())
	}
	// axis 100ms..10s over plotH: 300ms sits log10(3)/2 of the way up.
	want := padT + plotH - math.Log10(3)/2*plotH
	if got, err := strconv.ParseFloat(m[1], 64); err != nil || math.Abs(got-want) > 0.06 {
		t.Errorf("gate at y=%s, want %.1f", m[1], want)
	}
}

// Legend items laid out for any texts never overlap and stay in width.
func TestLegendLayoutNeverOverlaps(t *testing.T) {
	texts := []string{"TTFT p95", "goodput (ok within gates)", "goodput = offered", "planned rate (goodput's ceiling)",
		"TTFT gate", "hollow red: generator invalid, unused", "orange ring: saturated, never the capacity",
		"server's own TTFT p95 (its metrics)", strings.Repeat("w", 120)}
	var items []legendItem
	for _, s := range texts {
		items = append(items, legendItem{text: s, swatch: func(float64, float64) string { return "" }})
	}
	const left, width = 80.0, 660.0
	xs, ys, rows := layoutLegend(items, left, 0, width)
	if rows < 2 {
		t.Fatalf("rows = %d: these texts cannot fit one row", rows)
	}
	for i := range items {
		wi := legendSwatch + textWidth(items[i].text)
		if xs[i] < left || (xs[i]+wi > left+width && xs[i] != left) {
			t.Errorf("item %d (%q) at x=%g width %g leaves [%g, %g]", i, items[i].text, xs[i], wi, left, left+width)
		}
		for j := range i {
			wj := legendSwatch + textWidth(items[j].text)
			if ys[i] == ys[j] && xs[i] < xs[j]+wj && xs[j] < xs[i]+wi {
				t.Errorf("items %q and %q overlap", items[j].text, items[i].text)
			}
		}
	}
}

// No rendered report prints a duration with more than 4 significant
// digits (14.575143039s, 14575.1ms): every figure goes through
// durfmt.Format.
func TestNoLongDurations(t *testing.T) {
	res := ladderResult("sim")
	var all bytes.Buffer
	if err := LadderText(&all, res); err != nil {
		t.Fatal(err)
	}
	if err := LadderHTML(&all, res, testMeta()); err != nil {
		t.Fatal(err)
	}
	if err := LadderSVG(&all, res); err != nil {
		t.Fatal(err)
	}
	for name, s := range summaries() {
		if err := Text(&all, s); err != nil {
			t.Fatal(name, err)
		}
		if err := ProbeHTML(&all, s, testMeta()); err != nil {
			t.Fatal(name, err)
		}
	}
	if bad := longDurations(all.String()); len(bad) > 0 {
		t.Errorf("durations with more than 4 significant digits: %q", bad)
	}
	if bad := longDurations("TTFT p95 14.575143039s, 14575.1ms, 18.5s, 1126.0ms"); len(bad) != 3 {
		t.Errorf("the scanner misses long durations: %q", bad)
	}
}

var durRE = regexp.MustCompile(`(?:^|[^0-9.\w])([0-9]+(?:\.[0-9]+)?)(ns|µs|us|ms|s|min|h)\b`)

// longDurations are the durations in s with more than 4 significant
// digits, or with a trailing zero after the point (1126.0ms).
func longDurations(s string) []string {
	var out []string
	for _, m := range durRE.FindAllStringSubmatch(s, -1) {
		digits := strings.TrimLeft(strings.ReplaceAll(m[1], ".", ""), "0")
		if !strings.Contains(m[1], ".") {
			digits = strings.TrimRight(digits, "0")
		}
		if len(digits) > 4 || (strings.Contains(m[1], ".") && strings.HasSuffix(m[1], "0")) {
			out = append(out, m[1]+m[2])
		}
	}
	return out
}
