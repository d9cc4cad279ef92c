package statuspage

import (
	"encoding/xml"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// fullStatus is a status with every section filled, hostile text where the
// daemon passes server-made text on.
func fullStatus() Status {
	now := time.Date(2026, 11, 29, 19, 0, 0, 0, time.UTC)
	return Status{
		Version: "1.2.3", Started: now.Add(-time.Hour), Now: now, Refresh: 7 * time.Second, Objectives: "objectives: availability 99.5 %",
		Targets: []TargetStatus{{
			Name: "gpu-a", State: "probing", API: "openai-chat", Model: "m", InFlight: 2,
			Identity:     Identity{Model: "m<b>", Version: "v7", Since: now.Add(-10 * time.Minute), Changes: 1},
			Latency:      []LatencyRow{{Figure: "TTFT", Window: "5 min", P50: "120ms", P99: "480ms", Count: 58}},
			Availability: []AvailabilityRow{{Window: "5 min", Failed: 1, Sent: 58, Ratio: "98.28 %", DuringSent: 4, DuringFailed: 3, DuringRatio: "25.00 %"}},
			Target:       TargetState{State: "SLOW", Figures: "class chat, last 60 min: 58 sent", Next: "First tokens are over the class's gate <b>"},
			Prober:       ProberBadge{Causes: "host, lag", Evidence: "#prober-host"},
			SLO:          []SLORow{{SLI: "availability", Objective: "objective 99.5 %", Short: "1.72 % bad, burn 3.4×", Long: "0.5 % bad, burn 1.0×", State: "within budget"}},
			Generator:    "valid: the prober keeps its schedule", GeneratorValid: true,
			Capacity: "≥ 23.00 req/s (lower bound: no valid step above it failed)", CapacityLowerBound: true, Knee: "20.00 req/s",
			CapacityHistory: []CapacityPoint{{When: now.Add(-2 * time.Hour), Capacity: 20}, {When: now.Add(-time.Hour), Capacity: 23, LowerBound: true}, {When: now, None: true}},
			LastLadder:      now.Add(-time.Minute),
			LadderServer: []ServerStep{{Step: 1, Rate: "5", Explanation: "no deferred requests", Gap: "p50 2ms, p95 5ms", Running: "3/1", Waiting: "0→0", KV: "n/a"},
				{Step: 2, Rate: "40", Explanation: "server metrics unavailable: <script>x</script>", Unavailable: true}},
			LadderServerRunning: "slots busy/idle", LadderServerWaiting: "deferred start→max",
			Failures:     []Failure{{When: now.Add(-30 * time.Second), Traffic: "baseline", Class: "chat", Outcome: "rejected", Reason: "status_503", Status: 503, Error: `overloaded <img src=x onerror="alert(1)">`}},
			DuringLadder: "4 of 62 baseline requests",
		}},
		LadderSVG: `<svg xmlns="http://www.w3.org/2000/svg"><polyline points="0,0 1,1"/></svg>`,
		Host:      "over the last 1m0s: host CPU 98% busy of 2 CPUs, host CPU pressure 92%",
	}
}

// TestStatusPageSections: every section the daemon hands over is on the
// page, escaped, with the refresh and viewport a phone needs, and the page
// is well-formed enough to parse as XML (no unclosed element).
func TestStatusPageSections(t *testing.T) {
	st := fullStatus()
	h := Handler(func() Status { return st }, nil)
	body := get(t, h).Body.String()
	for _, want := range []string{
		`<meta http-equiv="refresh" content="7">`, `<meta name="viewport" content="width=device-width, initial-scale=1">`,
		`class="capacity lower-bound">≥ 23.00 req/s`, `<td class="n p50">120ms</td>`, `<td class="n p99">480ms</td>`, `<td class="n count">58</td>`,
		"98.28 %", "1 failed of 58", "3 failed of 4", "25.00 %",
		`<div class="state state-slow" data-state="SLOW"><span class="word">SLOW</span><span class="next">First tokens are over the class&#39;s gate &lt;b&gt;</span>`,
		`<a class="badge invalid prober" href="#prober-host"`, "prober invalid: host, lag", `id="prober-host"`, "within budget", "objectives: availability 99.5 %",
		"m&lt;b&gt; · version v7", "last changed 600s ago (1 changes seen)",
		"20 · ≥ 23 · none", `<svg class="spark"`, "no deferred requests", "p50 2ms, p95 5ms",
		`<th class="n">slots busy/idle</th><th class="n">deferred start→max</th><th class="n">KV cache max</th>`,
		`<td class="n">3/1</td><td class="n">0→0</td><td class="n">n/a</td>`, `<td class="n">-</td><td class="n">-</td><td class="n">-</td>`,
		"rejected/status_503</strong> (HTTP 503)", "overloaded &lt;img", "4 of 62 baseline requests", "<polyline points=\"0,0 1,1\"/>",
		"Prober host over the last 1m0s: host CPU 98% busy of 2 CPUs, host CPU pressure 92%.",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	for _, bad := range []string{"<script>x", "<img src=x", "<b>"} {
		if strings.Contains(body, bad) {
			t.Errorf("server-made text %q reached the page unescaped", bad)
		}
	}
	for _, ext := range []string{`src="http`, `href="http`, `href="//`, `src="//`, "url(", "@import"} {
		if strings.Contains(body, ext) {
			t.Errorf("the page loads or links an external asset (%s)", ext)
		}
	}
	// The target's state opens the card: before the prober's generator
	// text and every fact.
	if st, gen := strings.Index(body, `class="state state-`), strings.Index(body, `class="generator`); st < 0 || gen < 0 || st > gen {
		t.Errorf("the target's state (at %d) does not come before the generator verdict (at %d)", st, gen)
	}
	dec := xml.NewDecoder(strings.NewReader(strings.Replace(body, "<!DOCTYPE html>", "", 1)))
	dec.Strict, dec.AutoClose, dec.Entity = false, xml.HTMLAutoClose, xml.HTMLEntity
	for {
		if _, err := dec.Token(); err != nil {
			if !errors.Is(err, io.EOF) {
				t.Errorf("page does not parse: %v", err)
			}
			break
		}
	}
}

// TestStatusPageEscapes: a target name is escaped, the curve inserted
// only when it is an SVG document.
func TestStatusPageEscapes(t *testing.T) {
	st := Status{Version: "1.0", Targets: []TargetStatus{{Name: "sim<script>", State: "probing", Capacity: "4.0 req/s"}},
		LadderSVG: `<svg xmlns="http://www.w3.org/2000/svg"><polyline points="0,0 1,1"/></svg>`}
	h := Handler(func() Status { return st }, nil)
	body := get(t, h).Body.String()
	if strings.Contains(body, "sim<script>") || !strings.Contains(body, "sim&lt;script&gt;") {
		t.Error("target name not escaped")
	}
	if !strings.Contains(body, "<polyline") || !strings.Contains(body, "4.0 req/s") {
		t.Errorf("page lacks the SVG or capacity:\n%s", body)
	}
	st.LadderSVG = "<script>alert(1)</script>"
	if body := get(t, h).Body.String(); strings.Contains(body, "<script>alert") {
		t.Error("a non-SVG curve was inserted unescaped")
	}
}

// TestStatusPageEmpty: no targets, no ladder, no clock: the page still
// renders, says so, and refreshes at the default.
func TestStatusPageEmpty(t *testing.T) {
	h := Handler(func() Status { return Status{Targets: []TargetStatus{{Name: "t"}}} }, nil)
	body := get(t, h).Body.String()
	for _, want := range []string{`content="10"`, `data-state=""`, `class="state state-nodata"`, "no ladder yet", "none kept", "model not seen yet", "No ladder has run yet."} {
		if !strings.Contains(body, want) {
			t.Errorf("page lacks %q", want)
		}
	}
}

// TestSparkline: numbers only; a lower bound is hollow, a ladder without a
// capacity a cross; the highest point is at the top.
func TestSparkline(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 0, 0, time.UTC)
	svg := string(sparkline([]CapacityPoint{{When: now, Capacity: 10}, {When: now, Capacity: 20, LowerBound: true}, {When: now, None: true}}))
	for _, want := range []string{`points="3.0,14.0 70.0,3.0"`, `fill="#fff" stroke="#1f77b4"><title>2026-01-02 03:04 UTC: ≥ 20 req/s`, `stroke="#b00020"><title>2026-01-02 03:04 UTC: none req/s`} {
		if !strings.Contains(svg, want) {
			t.Errorf("sparkline lacks %q:\n%s", want, svg)
		}
	}
	if err := xml.Unmarshal([]byte(svg), new(struct{})); err != nil {
		t.Errorf("sparkline is not well-formed: %v", err)
	}
}

// get serves GET / on h.
func get(t *testing.T, h http.Handler) *httptest.ResponseRecorder {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil))
	if rec.Code != http.StatusOK || !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/html") {
		t.Fatalf("GET /: status %d, type %q", rec.Code, rec.Header().Get("Content-Type"))
	}
	return rec
}
