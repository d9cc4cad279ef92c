package report

import (
	"fmt"
	"html"
	"io"
	"math"
	"strings"
	"time"

	"github.com/llmprobe/llmprobe/internal/stats"
)

// Chart geometry (SVG user units).
const (
	svgW, svgH                         = 760, 440
	padL, padR, padT, padB             = 80, 80, 50, 70
	plotW, plotH                       = svgW - padL - padR, svgH - padT - padB
	colTTFT, colGood, colIdeal, colCap = "#1f77b4", "#2ca02c", "#999999", "#2ca02c"
	colKnee                            = "#d62728"
	colInvalid                         = "#c00000"
	colPlanned                         = "#777777"
)

// LadderSVG writes a self-contained SVG chart of a ladder: TTFT p95 (left
// axis, ms) and goodput (right axis, req/s, on the same scale as offered
// rate, with the ideal goodput = offered diagonal) against offered rate, with
// the capacity (≥ for a lower bound) and the knee marked. Each step's
// planned rate (planned arrivals / step duration, goodput's ceiling) is a
// grey ×. Invalid steps are drawn hollow and red and labelled: they are
// never used for capacity or knee.
func LadderSVG(w io.Writer, res stats.LadderResult) error {
	if _, err := io.WriteString(w, ladderSVG(res)); err != nil {
		return fmt.Errorf("report: writing ladder SVG: %w", err)
	}
	return nil
}

func ladderSVG(res stats.LadderResult) string {
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n", svgW, svgH, svgW, svgH)
	title := "Rate ladder: TTFT p95 and goodput vs offered rate"
	if res.Target != "" {
		title += " — " + res.Target
	}
	fmt.Fprintf(&b, `<title>%s</title>`+"\n", html.EscapeString(title))
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="#ffffff"/>`+"\n", svgW, svgH)
	fmt.Fprintf(&b, `<text x="%d" y="24" font-size="15" font-weight="bold">%s</text>`+"\n", padL, html.EscapeString(title))
	if len(res.Steps) == 0 {
		fmt.Fprintf(&b, `<text x="%d" y="%d">no steps were run</text>`+"\n</svg>\n", padL, padT+plotH/2)
		return b.String()
	}

	xMax, tMax := 0.0, 0.0
	for _, st := range res.Steps {
		xMax = math.Max(xMax, st.Rate)
		xMax = math.Max(xMax, st.Summary.GoodputPerSecond)
		xMax = math.Max(xMax, plannedRate(st.Summary))
		if st.Summary.TTFT.Count > 0 {
			tMax = math.Max(tMax, millis(st.Summary.TTFT.P95))
		}
	}
	tMax = math.Max(tMax, serverTTFTMax(res))
	xStep, xTop := niceAxis(xMax)
	tStep, tTop := niceAxis(tMax)
	x := func(v float64) float64 { return padL + v/xTop*plotW }
	yT := func(v float64) float64 { return padT + plotH - v/tTop*plotH }
	yG := func(v float64) float64 { return padT + plotH - v/xTop*plotH }

	// grid, ticks and axes
	b.WriteString(`<g stroke="#e5e5e5">` + "\n")
	for v := 0.0; v <= xTop+xStep/2; v += xStep {
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d"/>`+"\n", x(v), padT, x(v), padT+plotH)
	}
	for v := 0.0; v <= tTop+tStep/2; v += tStep {
		fmt.Fprintf(&b, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f"/>`+"\n", padL, yT(v), padL+plotW, yT(v))
	}
	b.WriteString("</g>\n")
	fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#333333"/>`+"\n", padL, padT, plotW, plotH)
	for v := 0.0; v <= xTop+xStep/2; v += xStep {
		fmt.Fprintf(&b, `<text x="%.1f" y="%d" text-anchor="middle">%s</text>`+"\n", x(v), padT+plotH+18, num(v))
	}
	for v := 0.0; v <= tTop+tStep/2; v += tStep {
		fmt.Fprintf(&b, `<text x="%d" y="%.1f" text-anchor="end" fill="%s">%s</text>`+"\n", padL-8, yT(v)+4, colTTFT, num(v))
	}
	for v := 0.0; v <= xTop+xStep/2; v += xStep {
		fmt.Fprintf(&b, `<text x="%d" y="%.1f" fill="%s">%s</text>`+"\n", padL+plotW+8, yG(v)+4, colGood, num(v))
	}
	fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="middle">offered rate (req/s)</text>`+"\n", padL+plotW/2, svgH-28)
	fmt.Fprintf(&b, `<text transform="translate(20 %d) rotate(-90)" text-anchor="middle" fill="%s">TTFT p95 (ms, from planned send)</text>`+"\n", padT+plotH/2, colTTFT)
	fmt.Fprintf(&b, `<text transform="translate(%d %d) rotate(90)" text-anchor="middle" fill="%s">goodput (req/s)</text>`+"\n", svgW-20, padT+plotH/2, colGood)

	// ideal goodput = offered
	fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-dasharray="2 4"/>`+"\n", x(0), yG(0), x(xTop), yG(xTop), colIdeal)

	// capacity and knee markers
	if res.CapacityStep > 0 {
		label := fmt.Sprintf("capacity %s req/s", num(res.Capacity))
		if res.CapacityBound == stats.BoundLower {
			label = fmt.Sprintf("capacity ≥ %s req/s (lower bound)", num(res.Capacity))
		}
		marker(&b, x(res.Capacity), colCap, label, padT+14)
	}
	if res.KneeStep > 0 {
		marker(&b, x(res.Knee), colKnee, fmt.Sprintf("knee %s req/s", num(res.Knee)), padT+30)
	}

	// series
	var tPts, gPts []string
	for _, st := range res.Steps {
		if st.Summary.TTFT.Count > 0 {
			tPts = append(tPts, fmt.Sprintf("%.1f,%.1f", x(st.Rate), yT(millis(st.Summary.TTFT.P95))))
		}
		gPts = append(gPts, fmt.Sprintf("%.1f,%.1f", x(st.Rate), yG(st.Summary.GoodputPerSecond)))
	}
	if len(tPts) > 0 {
		fmt.Fprintf(&b, `<polyline fill="none" stroke="%s" stroke-width="2" points="%s"/>`+"\n", colTTFT, strings.Join(tPts, " "))
	}
	fmt.Fprintf(&b, `<polyline fill="none" stroke="%s" stroke-width="2" points="%s"/>`+"\n", colGood, strings.Join(gPts, " "))
	serverSVG(&b, res, x, yT)
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
		if pr := plannedRate(st.Summary); pr > 0 {
			px, py := x(st.Rate), yG(pr)
			fmt.Fprintf(&b, `<path d="M%.1f %.1fl6 6m0 -6l-6 6" stroke="%s" stroke-width="1.5"><title>step %d: planned %s req/s (goodput's ceiling)</title></path>`+"\n",
				px-3, py-3, colPlanned, st.Index, num(pr))
		}
		if st.Summary.TTFT.Count > 0 {
			fmt.Fprintf(&b, `<circle cx="%.1f" cy="%.1f" r="4" fill="%s" stroke="%s"><title>step %d: %s req/s, TTFT p95 %s%s</title></circle>`+"\n",
				x(st.Rate), yT(millis(st.Summary.TTFT.P95)), fill(colTTFT), stroke(colTTFT), st.Index, num(st.Rate), dur(st.Summary.TTFT.P95), html.EscapeString(note))
		}
		fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="8" height="8" fill="%s" stroke="%s"><title>step %d: %s req/s, goodput %s req/s%s</title></rect>`+"\n",
			x(st.Rate)-4, yG(st.Summary.GoodputPerSecond)-4, fill(colGood), stroke(colGood), st.Index, num(st.Rate), num(st.Summary.GoodputPerSecond), html.EscapeString(note))
		if !valid {
			ly := yG(st.Summary.GoodputPerSecond) - 10
			if st.Summary.TTFT.Count > 0 {
				ly = math.Min(ly, yT(millis(st.Summary.TTFT.P95))-10)
			}
			fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" fill="%s" font-size="10" text-anchor="middle">step %d invalid</text>`+"\n",
				x(st.Rate), math.Max(ly, padT+10), colInvalid, st.Index)
		}
		if saturated {
			saturatedSVG(&b, st, x(st.Rate), yG(st.Summary.GoodputPerSecond))
		}
	}

	// legend
	ly := svgH - 10
	fmt.Fprintf(&b, `<circle cx="%d" cy="%d" r="4" fill="%s"/><text x="%d" y="%d">TTFT p95</text>`+"\n", padL, ly-4, colTTFT, padL+8, ly)
	fmt.Fprintf(&b, `<rect x="%d" y="%d" width="8" height="8" fill="%s"/><text x="%d" y="%d">goodput (ok within gates)</text>`+"\n", padL+90, ly-8, colGood, padL+102, ly)
	fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-dasharray="2 4"/><text x="%d" y="%d">goodput = offered</text>`+"\n", padL+280, ly-4, padL+300, ly-4, colIdeal, padL+306, ly)
	fmt.Fprintf(&b, `<path d="M%d %dl6 6m0 -6l-6 6" stroke="%s" stroke-width="1.5"/><text x="%d" y="%d">planned</text>`+"\n", padL+400, ly-7, colPlanned, padL+410, ly)
	fmt.Fprintf(&b, `<circle cx="%d" cy="%d" r="4" fill="#ffffff" stroke="%s"/><text x="%d" y="%d" fill="%s">hollow red: invalid, unused</text>`+"\n", padL+472, ly-4, colInvalid, padL+480, ly, colInvalid)
	b.WriteString("</svg>\n")
	return b.String()
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
func num(v float64) string { return stats.FormatRate(v) }

// colSaturated marks a saturated step in the chart.
const colSaturated = "#d06000"

// saturatedSVG rings a saturated step's goodput point in orange and labels
// it below, with the verdict as its title.
func saturatedSVG(b *strings.Builder, st stats.LadderStep, x, y float64) {
	fmt.Fprintf(b, `<circle cx="%.1f" cy="%.1f" r="9" fill="none" stroke="%s" stroke-width="2"><title>step %d %s</title></circle>`+"\n",
		x, y, colSaturated, st.Index, html.EscapeString(st.Summary.Steady.Reason))
	fmt.Fprintf(b, `<text x="%.1f" y="%.1f" fill="%s" font-size="10" text-anchor="middle">step %d saturated</text>`+"\n",
		x, y+20, colSaturated, st.Index)
}
