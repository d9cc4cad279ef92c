package report

import (
	"encoding/json"
	"fmt"
	"html"
	"io"
	"math"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/llmprobe/llmprobe/internal/ladderresult"
	"github.com/llmprobe/llmprobe/internal/servermetrics"
	"github.com/llmprobe/llmprobe/internal/stats"
)

// GapNote says what the client − server TTFT gap is, wherever it is shown.
const GapNote = "network + queueing gap = client TTFT minus the server's own TTFT, at p50 and at p95: " +
	"a difference of percentiles, not a percentile of differences (requests are not matched one by one); " +
	"the client measures from its planned send, the server from the request's arrival at its engine, so the gap is " +
	"the network both ways plus queueing outside the server's clock (dispatch lag, proxies, the HTTP front end); " +
	"server quantiles are interpolated within its buckets, so each gap is given with the range the server's bucket allows " +
	"(the true gap lies in it); a gap given as a range alone spans 0: the server's bucket is too coarse to tell its sign, so no point in it is shown; \"≤\" marks a gap whose server quantile is a lower bound, and the server's window counts every client of the server, not only this ladder"

// ServerStep is one step's server view as reports show it.
type ServerStep struct {
	Index       int
	Rate        float64
	View        *servermetrics.View
	Gap         *servermetrics.TTFTGap
	Explanation string // the view's one line, or why there is none
}

// ServerSteps returns the steps' server views (nil when no step has one:
// server_metrics not configured).
func ServerSteps(res ladderresult.LadderResult) []ServerStep {
	var out []ServerStep
	some := false
	for _, st := range res.Steps {
		s := ServerStep{Index: st.Index, Rate: st.Rate, View: st.Server, Explanation: "no server view"}
		if st.Server != nil {
			some = true
			s.Gap = servermetrics.Gap(*st.Server, st.Summary.TTFT.Count, st.Summary.TTFT.P50, st.Summary.TTFT.P95)
			s.Explanation = st.Server.Explanation
		}
		out = append(out, s)
	}
	if !some {
		return nil
	}
	return out
}

// ServerSource names the endpoint and flavour of the steps' views.
func ServerSource(steps []ServerStep) string {
	for _, s := range steps {
		if s.View != nil && s.View.URL != "" {
			if s.View.Flavour != "" && !s.View.Unavailable {
				return s.View.URL + ", " + string(s.View.Flavour)
			}
			return s.View.URL
		}
	}
	return "the target's metrics endpoint"
}

// serverTTFT formats a view's server TTFT p50 / p95 and count, "-" without.
func serverTTFT(v *servermetrics.View) (p50, p95, n string) {
	p50, p95, n = "-", "-", "-"
	if v == nil {
		return
	}
	s := v.Get(servermetrics.TTFT)
	if s == nil || s.Histogram == nil {
		return
	}
	h := s.Histogram
	n = servermetrics.Num(h.Count)
	q := func(x *servermetrics.Quantile) string {
		if x == nil {
			return "-"
		}
		if x.LowerBound {
			return "≥ " + servermetrics.Seconds(x.Value)
		}
		return servermetrics.Seconds(x.Value)
	}
	return q(h.P50), q(h.P95), n
}

// gapCells formats a gap's p50 and p95 ("-" without a gap).
func gapCells(g *servermetrics.TTFTGap) (p50, p95 string) {
	if g == nil {
		return "-", "-"
	}
	return GapText(g.P50, g.P50AtMost, g.P50Range), GapText(g.P95, g.P95AtMost, g.P95Range)
}

// GapText formats one gap: "≤ X" when the server's quantile was a lower
// bound; the range alone when the server's bucket allows both signs
// ("−127ms to 22.5ms": the interpolated point inside it says nothing, and
// a negative one reads as impossible); else the interpolated figure and,
// when known, the range ("12ms (3ms to 40ms)"). The one format of a gap in
// the text, HTML and status page.
func GapText(v float64, atMost bool, r *servermetrics.GapRange) string {
	switch {
	case atMost:
		return "≤ " + servermetrics.Seconds(v)
	case r != nil && r.Low < 0 && r.High > 0:
		return servermetrics.Seconds(r.Low) + " to " + servermetrics.Seconds(r.High)
	case r != nil:
		return fmt.Sprintf("%s (%s to %s)", servermetrics.Seconds(v), servermetrics.Seconds(r.Low), servermetrics.Seconds(r.High))
	}
	return servermetrics.Seconds(v)
}

// gauge formats a role's gauge as "start→max" (waiting) or its max;
// llama.cpp's busy slots as "busy/idle" (the most busy and so the fewest
// idle; "?" idle when its number of slots is unknown); "n/a" for a role
// the server does not export.
func gaugeCell(v *servermetrics.View, r servermetrics.Role, pct bool) string {
	if v == nil {
		return "-"
	}
	s := v.Get(r)
	if s == nil || s.Gauge == nil {
		if !v.Unavailable && missingRole(v, r) {
			return "n/a"
		}
		return "-"
	}
	if r == servermetrics.Running && v.Flavour == servermetrics.LlamaCPP {
		idle := "?"
		if v.Slots > 0 {
			idle = servermetrics.Num(max(float64(v.Slots)-s.Gauge.Max, 0))
		}
		return servermetrics.Num(s.Gauge.Max) + "/" + idle
	}
	if pct {
		return fmt.Sprintf("%s %%", servermetrics.Num(float64(int(s.Gauge.Max*100+0.5))))
	}
	if r == servermetrics.Waiting {
		return servermetrics.Num(s.Gauge.Start) + "→" + servermetrics.Num(s.Gauge.Max)
	}
	return servermetrics.Num(s.Gauge.Max)
}

// writeServerText writes the ladder's server section: a table of the
// server's figures per step, the one-line explanation of each, and what
// the gap is. Nothing without server views.
func writeServerText(b *strings.Builder, res ladderresult.LadderResult) error {
	steps := ServerSteps(res)
	if steps == nil {
		return nil
	}
	fmt.Fprintf(b, "\nserver view (%s): the target's own metrics over each step's window\n", ServerSource(steps))
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', tabwriter.AlignRight)
	running, waiting := ServerHeads(steps)
	fmt.Fprintf(tw, "step\trate\t%s\t%s\tKV cache max\tserver TTFT p50\tserver TTFT p95\tn\tgap p50\tgap p95\t\n", running, waiting)
	for _, s := range steps {
		p50, p95, n := serverTTFT(s.View)
		g50, g95 := gapCells(s.Gap)
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", s.Index, num(s.Rate),
			gaugeCell(s.View, servermetrics.Running, false), gaugeCell(s.View, servermetrics.Waiting, false),
			gaugeCell(s.View, servermetrics.KVCache, true), p50, p95, n, g50, g95)
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("report: server table: %w", err)
	}
	for _, s := range steps {
		fmt.Fprintf(b, "step %d server: %s\n", s.Index, s.Explanation)
	}
	fmt.Fprintf(b, "(%s)\n", GapNote)
	return nil
}

// colServer draws the server's own TTFT p95 in the ladder chart.
const colServer = "#9467bd"

// serverP95 is a step's server TTFT p95 in milliseconds, and whether the
// step has one.
func serverP95(st ladderresult.LadderStep) (ms float64, lower, ok bool) {
	if st.Server == nil {
		return 0, false, false
	}
	s := st.Server.Get(servermetrics.TTFT)
	if s == nil || s.Histogram == nil || s.Histogram.P95 == nil {
		return 0, false, false
	}
	return s.Histogram.P95.Value * 1000, s.Histogram.P95.LowerBound, true
}

// serverTTFTMax is the largest server TTFT p95 of the steps, in ms.
func serverTTFTMax(res ladderresult.LadderResult) float64 {
	m := 0.0
	for _, st := range res.Steps {
		if v, _, ok := serverP95(st); ok {
			m = math.Max(m, v)
		}
	}
	return m
}

// serverSVG draws the server's own TTFT p95 per step (dashed, on the TTFT
// axis), each point titled with the step's explanation (its legend item
// is legendItems').
func serverSVG(b *strings.Builder, res ladderresult.LadderResult, x, yT func(float64) float64) {
	var pts []string
	for _, st := range res.Steps {
		if v, _, ok := serverP95(st); ok {
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", x(st.Rate), yT(v)))
		}
	}
	if len(pts) == 0 {
		return
	}
	if len(pts) > 1 {
		fmt.Fprintf(b, `<polyline fill="none" stroke="%s" stroke-width="1.5" stroke-dasharray="5 3" points="%s"/>`+"\n", colServer, strings.Join(pts, " "))
	}
	for _, st := range res.Steps {
		v, lower, ok := serverP95(st)
		if !ok {
			continue
		}
		ge := ""
		if lower {
			ge = "≥ "
		}
		fmt.Fprintf(b, `<circle cx="%.1f" cy="%.1f" r="3" fill="%s"><title>step %d: server TTFT p95 %s%s; %s</title></circle>`+"\n",
			x(st.Rate), yT(v), colServer, st.Index, ge, dur(time.Duration(v*float64(time.Millisecond))), html.EscapeString(st.Server.Explanation))
	}
}

// serverRow is one step of the HTML report's server table.
type serverRow struct {
	Index                          int
	Rate                           string
	Running, Waiting, KV           string
	SrvP50, SrvP95, SrvN           string
	CliP50, CliP95, GapP50, GapP95 string
	Explanation                    string
	Unavailable                    bool
}

func serverRows(res ladderresult.LadderResult) []serverRow {
	steps := ServerSteps(res)
	out := make([]serverRow, 0, len(steps))
	for i, s := range steps {
		sum := res.Steps[i].Summary
		r := serverRow{Index: s.Index, Rate: num(s.Rate), Explanation: s.Explanation,
			Running: gaugeCell(s.View, servermetrics.Running, false), Waiting: gaugeCell(s.View, servermetrics.Waiting, false),
			KV:     gaugeCell(s.View, servermetrics.KVCache, true),
			CliP50: pdur(sum.TTFT, sum.TTFT.P50), CliP95: pdur(sum.TTFT, sum.TTFT.P95),
			Unavailable: s.View == nil || s.View.Unavailable || s.View.Partial}
		r.SrvP50, r.SrvP95, r.SrvN = serverTTFT(s.View)
		r.GapP50, r.GapP95 = gapCells(s.Gap)
		out = append(out, r)
	}
	return out
}

// AddServer adds the server's own view of a probe's run, and the TTFT gap
// against the run's summary, to its JSON shape (nothing when v is nil).
func (p *Probe) AddServer(v *servermetrics.View, s stats.Summary) {
	if v == nil {
		return
	}
	p.Server, p.TTFTGap = v, servermetrics.Gap(*v, s.TTFT.Count, s.TTFT.P50, s.TTFT.P95)
}

// ServerText writes the server's own view of a probe's run: its one-line
// explanation, its TTFT beside the client's and the gap (nothing when v is
// nil).
func ServerText(w io.Writer, v *servermetrics.View, s stats.Summary) error {
	if v == nil {
		return nil
	}
	var b strings.Builder
	src := v.URL
	if v.Flavour != "" && !v.Unavailable {
		src += ", " + string(v.Flavour)
	}
	fmt.Fprintf(&b, "\nserver view (%s) over the run: %s\n", src, v.Explanation)
	if g := servermetrics.Gap(*v, s.TTFT.Count, s.TTFT.P50, s.TTFT.P95); g != nil {
		p50, p95, n := serverTTFT(v)
		g50, g95 := gapCells(g)
		fmt.Fprintf(&b, "server TTFT p50 %s, p95 %s (n=%s); client TTFT p50 %s, p95 %s (n=%d); network + queueing gap p50 %s, p95 %s\n(%s)\n",
			p50, p95, n, dur(s.TTFT.P50), dur(s.TTFT.P95), s.TTFT.Count, g50, g95, GapNote)
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("report: writing server view: %w", err)
	}
	return nil
}

// ProbeJSON writes a probe report's JSON shape as one indented object.
func ProbeJSON(w io.Writer, p Probe) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(p); err != nil {
		return fmt.Errorf("report: writing JSON report: %w", err)
	}
	return nil
}
