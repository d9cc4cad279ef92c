package report

import (
	"fmt"
	"html"
	"io"
	"math"
	"strings"
	"time"

	"github.com/llmprobe/llmprobe/internal/durfmt"
	"github.com/llmprobe/llmprobe/internal/ladderresult"
)

// Chart geometry (SVG user units). The height grows with the legend's rows.
const (
	svgW                               = 760
	padL, padR, padT                   = 80, 80, 56
	plotW, plotH                       = svgW - padL - padR, 320
	colTTFT, colGood, colIdeal, colCap = "#1f77b4", "#2ca02c", "#999999", "#2ca02c"
	colKnee                            = "#d62728"
	colInvalid                         = "#c00000"
	colPlanned                         = "#777777"
	colGate                            = "#8c564b"
)

// LadderSVG writes a self-contained SVG chart of a ladder: TTFT p95 (left
// axis, logarithmic, with the TTFT gate drawn) and goodput (right axis,
// req/s, on the same scale as offered rate, with the ideal goodput =
// offered diagonal) against offered rate, with the capacity (≥ for a lower
// bound) and the knee marked. Each step's planned rate (planned arrivals /
// step duration, goodput's ceiling) is a grey ×. Invalid steps are drawn
// hollow and red and labelled: they are never used for capacity or knee;
// saturated steps are ringed in orange. The legend sits below the plot.
func LadderSVG(w io.Writer, res ladderresult.LadderResult) error {
	return LadderSVGMeta(w, res, Meta{})
}

// LadderSVGMeta is LadderSVG with the run's description (version, model,
// API, step duration, arrival process, seed) under the title.
func LadderSVGMeta(w io.Writer, res ladderresult.LadderResult, m Meta) error {
	if _, err := io.WriteString(w, ladderSVG(res, m)); err != nil {
		return fmt.Errorf("report: writing ladder SVG: %w", err)
	}
	return nil
}

// ttftGates are the distinct TTFT gates of a ladder (ms), named by class
// when classes have their own.
func ttftGates(res ladderresult.LadderResult) (ms []float64, names []string) {
	if g, ok := res.CommonGates(); ok {
		if g.TTFT > 0 {
			return []float64{millis(g.TTFT)}, []string{"TTFT gate " + dur(g.TTFT)}
		}
		return nil, nil
	}
	for _, c := range sortedClasses(res.ClassGates) {
		if g := res.ClassGates[c].TTFT; g > 0 {
			ms, names = append(ms, millis(g)), append(names, c+" TTFT gate "+dur(g))
		}
	}
	return ms, names
}

func ladderSVG(res ladderresult.LadderResult, m Meta) string {
	items := legendItems(res)
	xs, ys, rows := layoutLegend(items, padL, padT+plotH+62, svgW-padL-20)
	svgH := padT + plotH + 62 + rows*legendRowH
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n", svgW, svgH, svgW, svgH)
	title := "Rate ladder: TTFT p95 and goodput vs offered rate"
	if res.Target != "" {
		title += " — " + res.Target
	}
	fmt.Fprintf(&b, `<title>%s</title>`+"\n", html.EscapeString(title))
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="#ffffff"/>`+"\n", svgW, svgH)
	fmt.Fprintf(&b, `<text x="%d" y="22" font-size="15" font-weight="bold">%s</text>`+"\n", 20, html.EscapeString(clip(title, (svgW-40)/8)))
	if sub := m.svgLine(); sub != "" {
		fmt.Fprintf(&b, `<text x="%d" y="40" font-size="11" fill="#555555">%s</text>`+"\n", 20, html.EscapeString(clip(sub, (svgW-40)/6)))
	}
	if len(res.Steps) == 0 {
		fmt.Fprintf(&b, `<text x="%d" y="%d">no steps were run</text>`+"\n</svg>\n", padL, padT+plotH/2)
		return b.String()
	}

	gateMS, gateNames := ttftGates(res)
	xMax := 0.0
	tVals := append([]float64{serverTTFTMax(res)}, gateMS...)
	for _, st := range res.Steps {
		xMax = math.Max(xMax, st.Rate)
		xMax = math.Max(xMax, st.Summary.GoodputPerSecond)
		xMax = math.Max(xMax, st.Summary.PlannedRate())
		if st.Summary.TTFT.Count > 0 {
			tVals = append(tVals, millis(st.Summary.TTFT.P95))
		}
		if v, _, ok := serverP95(st); ok {
			tVals = append(tVals, v)
		}
	}
	xStep, xTop := niceAxis(xMax)
	ta := newLogAxis(tVals...)
	x := func(v float64) float64 { return padL + v/xTop*plotW }
	yT := func(v float64) float64 { return padT + plotH - ta.frac(v)*plotH }
	yG := func(v float64) float64 { return padT + plotH - v/xTop*plotH }

	// grid, ticks and axes
	tTicks, decade := ta.ticks()
	b.WriteString(`<g stroke="#e5e5e5">` + "\n")
	for v := 0.0; v <= xTop+xStep/2; v += xStep {
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d"/>`+"\n", x(v), padT, x(v), padT+plotH)
	}
	for i, v := range tTicks {
		stroke := ""
		if decade[i] {
			stroke = ` stroke="#c8c8c8"`
		}
		fmt.Fprintf(&b, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f"%s/>`+"\n", padL, yT(v), padL+plotW, yT(v), stroke)
	}
	b.WriteString("</g>\n")
	fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#333333"/>`+"\n", padL, padT, plotW, plotH)
	for v := 0.0; v <= xTop+xStep/2; v += xStep {
		fmt.Fprintf(&b, `<text x="%.1f" y="%d" text-anchor="middle">%s</text>`+"\n", x(v), padT+plotH+18, num(v))
	}
	for i, v := range tTicks {
		weight := ""
		if decade[i] {
			weight = ` font-weight="bold"`
		}
		fmt.Fprintf(&b, `<text x="%d" y="%.1f" text-anchor="end" fill="%s"%s>%s</text>`+"\n", padL-8, yT(v)+4, colTTFT, weight, msLabel(v))
	}
	for v := 0.0; v <= xTop+xStep/2; v += xStep {
		fmt.Fprintf(&b, `<text x="%d" y="%.1f" fill="%s">%s</text>`+"\n", padL+plotW+8, yG(v)+4, colGood, num(v))
	}
	fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="middle">offered rate (req/s)</text>`+"\n", padL+plotW/2, padT+plotH+38)
	fmt.Fprintf(&b, `<text transform="translate(18 %d) rotate(-90)" text-anchor="middle" fill="%s">TTFT p95 (log scale, from planned send)</text>`+"\n", padT+plotH/2, colTTFT)
	fmt.Fprintf(&b, `<text transform="translate(%d %d) rotate(90)" text-anchor="middle" fill="%s">goodput (req/s)</text>`+"\n", svgW-20, padT+plotH/2, colGood)

	// ideal goodput = offered
	fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-dasharray="2 4"/>`+"\n", x(0), yG(0), x(xTop), yG(xTop), colIdeal)

	// the TTFT gate(s): a labelled horizontal line on the TTFT axis
	for i, g := range gateMS {
		fmt.Fprintf(&b, `<g class="gate"><line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="%s" stroke-width="1.5" stroke-dasharray="8 3"/><text x="%d" y="%.1f" fill="%s" text-anchor="end" font-size="11">%s</text></g>`+"\n",
			padL, yT(g), padL+plotW, yT(g), colGate, padL+plotW-4, yT(g)-4, colGate, html.EscapeString(gateNames[i]))
	}

	// capacity and knee markers
	if res.CapacityStep > 0 {
		label := fmt.Sprintf("capacity %s req/s", num(res.Capacity))
		if res.CapacityBound == ladderresult.BoundLower {
			label = fmt.Sprintf("capacity ≥ %s req/s (lower bound)", num(res.Capacity))
		}
		marker(&b, x(res.Capacity), colCap, label, padT+14)
	}
	if res.KneeStep > 0 {
		marker(&b, x(res.Knee), colKnee, fmt.Sprintf("knee %s req/s", num(res.Knee)), padT+30)
	}
	stepsSVG(&b, res, x, yT, yG)
	writeLegend(&b, items, xs, ys)
	b.WriteString("</svg>\n")
	return b.String()
}

// stepsSVG draws the series and each step's points, hollow red when
// invalid, ringed orange when saturated.
func stepsSVG(b *strings.Builder, res ladderresult.LadderResult, x, yT, yG func(float64) float64) {
	var tPts, gPts []string
	for _, st := range res.Steps {
		if st.Summary.TTFT.Count > 0 {
			tPts = append(tPts, fmt.Sprintf("%.1f,%.1f", x(st.Rate), yT(millis(st.Summary.TTFT.P95))))
		}
		gPts = append(gPts, fmt.Sprintf("%.1f,%.1f", x(st.Rate), yG(st.Summary.GoodputPerSecond)))
	}
	if len(tPts) > 0 {
		fmt.Fprintf(b, `<polyline fill="none" stroke="%s" stroke-width="2" points="%s"/>`+"\n", colTTFT, strings.Join(tPts, " "))
	}
	fmt.Fprintf(b, `<polyline fill="none" stroke="%s" stroke-width="2" points="%s"/>`+"\n", colGood, strings.Join(gPts, " "))
	serverSVG(b, res, x, yT)
	for _, st := range res.Steps {
		valid := st.Summary.Validity.Valid
		fill := func(c string) string {
			if valid {
				return c
			}
			return "#ffffff"
		}
		stroke := func(c string) string {
			if valid {
				return c
			}
			return colInvalid
		}
		note := ""
		saturated := valid && st.Summary.Saturated()
		if !valid {
			note = ", generator invalid (" + validCell(st.Summary.Validity) + "): not used for capacity or knee"
		} else if saturated {
			note = ", " + st.Summary.Steady.Reason + ": never the capacity"
		}
		if pr := st.Summary.PlannedRate(); pr > 0 {
			px, py := x(st.Rate), yG(pr)
			fmt.Fprintf(b, `<path d="M%.1f %.1fl6 6m0 -6l-6 6" stroke="%s" stroke-width="1.5"><title>step %d: planned %s req/s (goodput's ceiling)</title></path>`+"\n",
				px-3, py-3, colPlanned, st.Index, num(pr))
		}
		if st.Summary.TTFT.Count > 0 {
			fmt.Fprintf(b, `<circle cx="%.1f" cy="%.1f" r="4" fill="%s" stroke="%s"><title>step %d: %s req/s, TTFT p95 %s%s</title></circle>`+"\n",
				x(st.Rate), yT(millis(st.Summary.TTFT.P95)), fill(colTTFT), stroke(colTTFT), st.Index, num(st.Rate), dur(st.Summary.TTFT.P95), html.EscapeString(note))
		}
		fmt.Fprintf(b, `<rect x="%.1f" y="%.1f" width="8" height="8" fill="%s" stroke="%s"><title>step %d: %s req/s, goodput %s req/s%s</title></rect>`+"\n",
			x(st.Rate)-4, yG(st.Summary.GoodputPerSecond)-4, fill(colGood), stroke(colGood), st.Index, num(st.Rate), num(st.Summary.GoodputPerSecond), html.EscapeString(note))
		if !valid {
			ly := yG(st.Summary.GoodputPerSecond) - 10
			if st.Summary.TTFT.Count > 0 {
				ly = math.Min(ly, yT(millis(st.Summary.TTFT.P95))-10)
			}
			fmt.Fprintf(b, `<text x="%.1f" y="%.1f" fill="%s" font-size="10" text-anchor="middle">step %d invalid</text>`+"\n",
				x(st.Rate), math.Max(ly, padT+10), colInvalid, st.Index)
		}
		if saturated {
			saturatedSVG(b, st, x(st.Rate), yG(st.Summary.GoodputPerSecond))
		}
	}
}

// legendItems are the legend's entries: every series and mark the chart
// can hold (the server's TTFT only when it was read).
func legendItems(res ladderresult.LadderResult) []legendItem {
	items := []legendItem{
		{func(x, y float64) string {
			return fmt.Sprintf(`<circle cx="%.1f" cy="%.1f" r="4" fill="%s"/>`, x+8, y, colTTFT)
		}, "TTFT p95", ""},
		{func(x, y float64) string {
			return fmt.Sprintf(`<rect x="%.1f" y="%.1f" width="8" height="8" fill="%s"/>`, x+4, y-4, colGood)
		}, "goodput (ok within gates)", ""},
		{func(x, y float64) string {
			return fmt.Sprintf(`<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-dasharray="2 4"/>`, x, y, x+16, y, colIdeal)
		}, "goodput = offered", ""},
		{func(x, y float64) string {
			return fmt.Sprintf(`<path d="M%.1f %.1fl6 6m0 -6l-6 6" stroke="%s" stroke-width="1.5"/>`, x+5, y-3, colPlanned)
		}, "planned rate (goodput's ceiling)", ""},
		{func(x, y float64) string {
			return fmt.Sprintf(`<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-width="1.5" stroke-dasharray="8 3"/>`, x, y, x+16, y, colGate)
		}, "TTFT gate", colGate},
		{func(x, y float64) string {
			return fmt.Sprintf(`<circle cx="%.1f" cy="%.1f" r="4" fill="#ffffff" stroke="%s"/>`, x+8, y, colInvalid)
		}, "hollow red: generator invalid, unused", colInvalid},
		{func(x, y float64) string {
			return fmt.Sprintf(`<circle cx="%.1f" cy="%.1f" r="6" fill="none" stroke="%s" stroke-width="2"/>`, x+8, y, colSaturated)
		}, "orange ring: saturated, never the capacity", colSaturated},
	}
	if serverTTFTMax(res) > 0 {
		items = append(items, legendItem{func(x, y float64) string {
			return fmt.Sprintf(`<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-dasharray="5 3" stroke-width="1.5"/>`, x, y, x+16, y, colServer)
		}, "server's own TTFT p95 (its metrics)", colServer})
	}
	return items
}

// clip shortens s to n characters, with an ellipsis.
func clip(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

func marker(b *strings.Builder, x float64, color, label string, labelY int) {
	fmt.Fprintf(b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="%s" stroke-dasharray="6 4"/>`+"\n", x, padT, x, padT+plotH, color)
	if x > padL+plotW*0.7 { // keep the label inside the plot
		fmt.Fprintf(b, `<text x="%.1f" y="%d" fill="%s" text-anchor="end">%s</text>`+"\n", x-4, labelY, color, html.EscapeString(label))
		return
	}
	fmt.Fprintf(b, `<text x="%.1f" y="%d" fill="%s">%s</text>`+"\n", x+4, labelY, color, html.EscapeString(label))
}

// niceAxis returns a tick step of 1, 2 or 5 × 10^k giving about five ticks,
// and the axis top (a multiple of the step, at least max).
func niceAxis(max float64) (step, top float64) {
	if max <= 0 || math.IsNaN(max) || math.IsInf(max, 0) {
		return 1, 1
	}
	raw := max / 5
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	switch f := raw / mag; {
	case f <= 1:
		step = mag
	case f <= 2:
		step = 2 * mag
	case f <= 5:
		step = 5 * mag
	default:
		step = 10 * mag
	}
	top = math.Ceil(max/step) * step
	if top < max*1.0001 {
		top += step
	}
	return step, top
}

func millis(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// num formats a number compactly (no trailing zeros).
func num(v float64) string { return durfmt.Rate(v) }

// colSaturated marks a saturated step in the chart.
const colSaturated = "#d06000"

// saturatedSVG rings a saturated step's goodput point in orange and labels
// it below, with the verdict as its title.
func saturatedSVG(b *strings.Builder, st ladderresult.LadderStep, x, y float64) {
	fmt.Fprintf(b, `<circle cx="%.1f" cy="%.1f" r="9" fill="none" stroke="%s" stroke-width="2"><title>step %d %s</title></circle>`+"\n",
		x, y, colSaturated, st.Index, html.EscapeString(st.Summary.Steady.Reason))
	fmt.Fprintf(b, `<text x="%.1f" y="%.1f" fill="%s" font-size="10" text-anchor="middle">step %d saturated</text>`+"\n",
		x, y+20, colSaturated, st.Index)
}
