package servermetrics

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/llmprobe/llmprobe/internal/durfmt"
)

// Explain says in one line what the server's metrics show over a window,
// for a ladder step's report: the waiting queue (how it moved), running
// requests and KV-cache usage at their peak, the server's TTFT, ITL (or,
// without it, TPOT) and queue-time p95 with their counts, preemptions, and
// what makes the figures incomplete (resets, failed scrapes). For example:
//
//	waiting queue grew from 0 to 37; running up to 64; KV cache up to 98 %; server TTFT p95 1.2s (n=412)
func Explain(v View) string {
	if v.Unavailable {
		if v.FailureCause != "" && v.Error == "" {
			return "server metrics unavailable: " + v.FailureCause
		}
		if v.Error == "" {
			return "server metrics unavailable"
		}
		return "server metrics unavailable: " + v.Error
	}
	var parts []string
	queue, running := "waiting queue", "running up to "
	if v.Flavour == LlamaCPP {
		queue, running = "deferred requests", "slots busy up to "
	}
	if s := v.Get(Waiting); s != nil && s.Gauge != nil {
		parts = append(parts, queuePhrase(queue, s.Gauge))
	}
	if s := v.Get(Running); s != nil && s.Gauge != nil {
		p := running + num(s.Gauge.Max)
		if v.Slots > 0 {
			p += " of " + strconv.Itoa(v.Slots)
		}
		if v.Flavour == LlamaCPP && s.Gauge.Max == 0 {
			p = "no slot busy at any scrape" // short requests can finish between scrapes
		}
		parts = append(parts, p)
	}
	if s := v.Get(KVCache); s != nil && s.Gauge != nil {
		parts = append(parts, fmt.Sprintf("KV cache up to %s %%", num(math.Round(s.Gauge.Max*100))))
	}
	for _, r := range []Role{TTFT, ITL, TPOT, QueueTime} {
		s := v.Get(r)
		if s == nil || s.Histogram == nil || s.Histogram.P95 == nil {
			continue
		}
		if r == TPOT && v.Get(ITL) != nil && v.Get(ITL).Histogram != nil && v.Get(ITL).Histogram.P95 != nil {
			continue // the per-token figure says it; the per-request mean would repeat it
		}
		h := s.Histogram
		ge := ""
		if h.P95.LowerBound {
			ge = "≥ "
		}
		parts = append(parts, fmt.Sprintf("%s p95 %s%s (n=%s)", roleLabel(r), ge, seconds(h.P95.Value), num(h.Count)))
	}
	if s := v.Get(Preemptions); s != nil && s.Counter != nil && s.Counter.Increase > 0 {
		parts = append(parts, num(s.Counter.Increase)+" preemptions")
	}
	if frac, hits, queries, ok := v.PrefixCacheHits(); ok {
		parts = append(parts, fmt.Sprintf("prefix cache hit %s %% of %s prompt tokens (%s)", num(math.Round(frac*100)), num(queries), num(hits)))
	}
	if v.Flavour == LlamaCPP {
		parts = append(parts, tokenPhrases(v)...)
	}
	var reset []string
	bounds := false
	for _, s := range v.Stats {
		switch {
		case s.Counter != nil:
			bounds = bounds || s.Counter.LowerBound
			if s.Counter.Resets > 0 {
				reset = append(reset, s.Metric)
			}
		case s.Histogram != nil:
			bounds = bounds || s.Histogram.LowerBound
			if s.Histogram.Resets > 0 {
				reset = append(reset, s.Metric)
			}
		}
	}
	switch {
	case len(reset) > 0:
		parts = append(parts, "server counters reset during the window (a restart?): "+nameList(reset)+" went down; counts are lower bounds")
	case bounds:
		parts = append(parts, "some server series were missing at the start or left out: counts are lower bounds")
	}
	if v.FailedScrapes > 0 {
		p := fmt.Sprintf("%d of %d scrapes failed", v.FailedScrapes, v.FailedScrapes+v.Scrapes)
		if v.FailureCause != "" {
			p += " (last: " + v.FailureCause + ")"
		}
		parts = append(parts, p)
	}
	if v.Partial {
		parts = append(parts, "no end scrape")
	}
	if len(parts) == 0 {
		if v.Flavour == None || v.Flavour == Auto {
			return "no known server metrics"
		}
		return "no server metrics of " + string(v.Flavour) + " exposed"
	}
	return strings.Join(parts, "; ")
}

// queuePhrase says how the waiting queue (named q) moved.
func queuePhrase(q string, g *GaugeStat) string {
	switch {
	case g.Max == 0:
		return "no " + q
	case g.Min == g.Max:
		return q + " steady at " + num(g.Max)
	case g.Max > g.Start && g.Last < g.Max:
		return fmt.Sprintf("%s grew from %s to %s (%s at the end)", q, num(g.Start), num(g.Max), num(g.Last))
	case g.Max > g.Start:
		return fmt.Sprintf("%s grew from %s to %s", q, num(g.Start), num(g.Max))
	case g.Last < g.Start:
		return fmt.Sprintf("%s fell from %s to %s", q, num(g.Start), num(g.Last))
	default:
		return fmt.Sprintf("%s between %s and %s", q, num(g.Min), num(g.Max))
	}
}

// nameList names at most three metrics, and how many more.
func nameList(names []string) string {
	if len(names) <= 3 {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:3], ", "), len(names)-3)
}

// num prints a whole number without decimals, anything else with three
// significant digits, and from 1000 on rounded to a whole number (never in
// exponent form: 1040, not 1.04e+03).
func num(x float64) string {
	switch {
	case x == math.Trunc(x) && math.Abs(x) < 1e15:
		return strconv.FormatInt(int64(x), 10)
	case math.Abs(x) >= 1000 && math.Abs(x) < 1e15:
		return strconv.FormatInt(int64(math.Round(x)), 10)
	}
	return strconv.FormatFloat(x, 'g', 3, 64)
}

// seconds prints a latency in the one human duration format (durfmt):
// 850µs, 45.3ms, 1.23s, 123s (a negative difference with its sign).
func seconds(s float64) string {
	if s >= 1e6 || s <= -1e6 || math.IsInf(s, 0) || math.IsNaN(s) { // past what a Duration holds (a server's bucket bound may be anything)
		return strconv.FormatFloat(s, 'g', 3, 64) + "s"
	}
	return durfmt.Format(time.Duration(s * float64(time.Second)))
}

// PrefixCacheHits is the fraction of the prompt tokens the server looked up
// in its prefix cache over the window that it found there (vLLM's
// prefix_cache_hits / prefix_cache_queries increases), with both counts;
// ok is false when the server exposes neither or queried nothing. A hit
// count above the queries (a hostile or broken server) is not a fraction:
// ok is false.
func (v View) PrefixCacheHits() (frac, hits, queries float64, ok bool) {
	q, h := v.Get(PrefixQueries), v.Get(PrefixHits)
	if q == nil || h == nil || q.Counter == nil || h.Counter == nil {
		return 0, 0, 0, false
	}
	queries, hits = q.Counter.Increase, h.Counter.Increase
	if !(queries > 0) || hits < 0 || hits > queries || math.IsInf(queries, 0) {
		return 0, 0, 0, false
	}
	return hits / queries, hits, queries, true
}
