package report

import (
	"fmt"
	"math"
	"strings"
	"time"
	"unicode/utf8"
)

// logAxis is the chart's TTFT axis: logarithmic over whole decades (ms),
// so a knee where TTFT leaps from 100 ms to 10 s stays visible instead of
// the low steps being flattened against zero.
type logAxis struct{ lo, hi float64 } // decades: 10^lo .. 10^hi ms

// newLogAxis spans the decades holding every positive value in vs (ms);
// at least one decade; 1 ms to 1 s when there is none.
func newLogAxis(vs ...float64) logAxis {
	mn, mx := math.Inf(1), math.Inf(-1)
	for _, v := range vs {
		if v > 0 && !math.IsInf(v, 0) && !math.IsNaN(v) {
			mn, mx = math.Min(mn, v), math.Max(mx, v)
		}
	}
	if math.IsInf(mn, 1) {
		return logAxis{0, 3}
	}
	a := logAxis{math.Floor(math.Log10(mn)), math.Ceil(math.Log10(mx))}
	if a.hi <= a.lo {
		a.hi = a.lo + 1
	}
	return a
}

// frac is v's height on the axis, 0 (bottom) to 1 (top); values at or
// below the bottom (0 included) sit on it.
func (a logAxis) frac(v float64) float64 {
	if v <= 0 {
		return 0
	}
	return math.Min(math.Max((math.Log10(v)-a.lo)/(a.hi-a.lo), 0), 1)
}

// ticks are the 1-2-5 values of every decade of the axis, in ms, and
// whether each is a decade (drawn stronger).
func (a logAxis) ticks() (vs []float64, decade []bool) {
	for e := a.lo; e <= a.hi; e++ {
		for _, m := range []float64{1, 2, 5} {
			if e == a.hi && m > 1 {
				break
			}
			vs, decade = append(vs, m*math.Pow(10, e)), append(decade, m == 1)
		}
	}
	return vs, decade
}

// msLabel is a tick's label in the one duration format ("200ms", "1s").
func msLabel(ms float64) string { return dur(time.Duration(ms * float64(time.Millisecond))) }

// legendItem is one entry of the chart's legend: a swatch drawn at
// (x, y) (the swatch's centre line) and its text.
type legendItem struct {
	swatch func(x, y float64) string
	text   string
	color  string
}

// Legend geometry: the legend is laid out in rows below the plot, each
// item as wide as its estimated text, wrapping before the right edge, so
// no two items can overlap whatever their texts.
const (
	legendSwatch = 22  // swatch width plus gap to the text
	legendGap    = 18  // between items
	legendRowH   = 20  // row height
	charW        = 7.2 // upper estimate of a 12px sans-serif character's width
)

// textWidth over-estimates the rendered width of s at 12px.
func textWidth(s string) float64 { return float64(utf8.RuneCountInString(s)) * charW }

// layoutLegend places items in rows from (left, top) within width; it
// returns each item's x, y (text baseline) and the rows used.
func layoutLegend(items []legendItem, left, top, width float64) (xs, ys []float64, rows int) {
	x, row := left, 0
	for _, it := range items {
		w := legendSwatch + textWidth(it.text)
		if x > left && x+w > left+width {
			x, row = left, row+1
		}
		xs, ys = append(xs, x), append(ys, top+float64(row)*legendRowH)
		x += w + legendGap
	}
	if len(items) > 0 {
		rows = row + 1
	}
	return xs, ys, rows
}

// writeLegend draws the laid-out items, each a <g class="legend-item">.
func writeLegend(b *strings.Builder, items []legendItem, xs, ys []float64) {
	b.WriteString(`<g class="legend">` + "\n")
	for i, it := range items {
		fill := ""
		if it.color != "" {
			fill = fmt.Sprintf(` fill="%s"`, it.color)
		}
		fmt.Fprintf(b, `<g class="legend-item">%s<text x="%.1f" y="%.1f"%s>%s</text></g>`+"\n",
			it.swatch(xs[i], ys[i]-4), xs[i]+legendSwatch, ys[i], fill, svgText.Replace(it.text))
	}
	b.WriteString("</g>\n")
}

// svgText escapes text for an SVG text node (quotes need no escaping there).
var svgText = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")
