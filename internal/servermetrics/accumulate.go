package servermetrics

import (
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/llmprobe/llmprobe/internal/sanitize"
)

// nameMax bounds a metric name in a View.
const nameMax = 128

// Accumulator folds the scrapes of one window into a View. It is not safe
// for concurrent use (Window serialises it).
type Accumulator struct {
	flavour   Flavour
	configure []string
	accs      []*acc
	scrapes   int
	first     time.Time
	last      time.Time
}

// NewAccumulator follows the known roles of flavour (Auto: detected from
// the first exposition added) and the named metrics.
func NewAccumulator(flavour Flavour, metrics []string) *Accumulator {
	a := &Accumulator{flavour: flavour, configure: slices.Clone(metrics)}
	if flavour != Auto {
		a.track()
	}
	return a
}

// track builds the list of followed metrics once the flavour is known.
func (a *Accumulator) track() {
	seen := map[string]bool{}
	for _, k := range profiles[a.flavour] {
		a.accs = append(a.accs, &acc{role: k.Role, names: k.Names, want: k.Kind, max: k.Max, asGauge: k.AsGauge})
		for _, n := range k.Names {
			seen[n] = true
		}
	}
	for _, n := range a.configure {
		if !seen[n] {
			seen[n] = true
			a.accs = append(a.accs, &acc{role: Configured, names: []string{n}})
		}
	}
}

// Flavour is the flavour followed (Auto until the first exposition).
func (a *Accumulator) Flavour() Flavour { return a.flavour }

// Add folds one exposition in; expositions must come in time order.
func (a *Accumulator) Add(e *Exposition) {
	if e == nil {
		return
	}
	if a.flavour == Auto {
		a.flavour = Detect(e)
		a.track()
	}
	first := a.scrapes == 0
	if first {
		a.first = e.At
	}
	a.last = e.At
	a.scrapes++
	for _, x := range a.accs {
		x.add(e, first)
	}
}

// View summarises the window so far.
func (a *Accumulator) View() View {
	v := View{Flavour: a.flavour, Start: a.first, End: a.last, Scrapes: a.scrapes, Stats: []Stat{}}
	if a.scrapes > 0 {
		v.Seconds = a.last.Sub(a.first).Seconds()
	}
	for _, x := range a.accs {
		if x.name == "" {
			if x.role == Configured {
				v.Missing = append(v.Missing, sanitize.String(x.names[0], nameMax))
			} else {
				v.Missing = append(v.Missing, fmt.Sprintf("%s (%s)", x.role, sanitize.String(x.names[0], nameMax)))
			}
			continue
		}
		v.Stats = append(v.Stats, x.stat(v.Seconds))
	}
	return v
}

// acc follows one metric through a window.
type acc struct {
	role  Role
	names []string // candidates, the first present winning
	want  Kind     // the kind a role needs; "" = as exposed
	max   bool
	// asGauge reads a gauge role whatever type is declared (Known.AsGauge).
	asGauge bool

	declared Kind // the type the server declares, when it is not the one read

	name    string // the name found; fixed at the first scrape that has it
	kind    Kind   // the kind read (untyped read as gauge)
	series  int
	dropped int
	dups    int
	invalid map[string]int

	g  GaugeStat
	cs map[string]*counterSeries
	hs map[string]*histSeries
	// tainted series had an invalid value before their first valid one:
	// that first valid value is a baseline, not an increase from zero.
	tainted map[string]bool
	gaps    int // such baselines: the increase before them is unknown
}

func (x *acc) taint(key string) {
	if x.tainted == nil {
		x.tainted = map[string]bool{}
	}
	x.tainted[key] = true
}

type counterSeries struct {
	prev, inc float64
	resets    int
}

func (x *acc) bad(reason string) {
	if x.invalid == nil {
		x.invalid = map[string]int{}
	}
	x.invalid[reason]++
}

// readKind is the kind a family is read as for this acc, or "" with a
// reason when it cannot be.
func (x *acc) readKind(f *Family) (Kind, string) {
	k := f.Kind
	switch {
	case k == Other:
		return "", "a type not read (gauge histogram or newer)"
	case x.asGauge && x.want == Gauge && (k == Counter || k == Gauge || k == Untyped):
		return Gauge, ""
	case x.want == "":
		if k == Untyped {
			return Gauge, ""
		}
		return k, ""
	case k == x.want, k == Untyped && (x.want == Gauge || x.want == Counter):
		return x.want, ""
	}
	return "", fmt.Sprintf("exposed as %s, want %s", k, x.want)
}

func (x *acc) add(e *Exposition, first bool) {
	var f *Family
	if x.name != "" {
		f, _ = e.lookup(x.name)
	} else {
		for _, n := range x.names {
			if ff, ok := e.lookup(n); ok {
				f = ff
				x.name = n
				break
			}
		}
	}
	if f == nil {
		return
	}
	k, why := x.readKind(f)
	if why != "" {
		x.bad(why)
		return
	}
	if x.kind != "" && x.kind != k {
		x.bad(fmt.Sprintf("type changed from %s to %s", x.kind, k))
		return
	}
	x.kind = k
	if f.Kind != k && f.Kind != Untyped {
		x.declared = f.Kind
	}
	x.series = max(x.series, len(f.Series))
	x.dropped = max(x.dropped, f.Dropped)
	x.dups = max(x.dups, f.Duplicates)
	switch k {
	case Gauge:
		x.addGauge(f)
	case Counter:
		for _, s := range f.Series {
			x.addCounter(s.Key, s.Value, first)
		}
	case Summary:
		for _, s := range f.Series {
			x.addCounter(s.Key, s.Count, first)
		}
	case Histogram:
		for _, s := range f.Series {
			x.addHistogram(s, first)
		}
	}
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// nonNegative reports whether a role's gauge counts or measures something
// that cannot be negative.
func (x *acc) nonNegative() bool {
	switch x.role {
	case Running, Waiting, KVCache, KVTokens, TokensMax, PromptTPSLife, GenTPSLife, SlotsPerDec:
		return true
	}
	return false
}

func (x *acc) addGauge(f *Family) {
	agg, n := 0.0, 0
	for _, s := range f.Series {
		v := s.Value
		switch {
		case !finite(v):
			x.bad("NaN or infinite value")
			continue
		case v < 0 && x.nonNegative():
			x.bad("negative value")
			continue
		case v > 1 && x.role == KVCache:
			x.bad("fraction above 1")
			continue
		}
		if x.max {
			if n == 0 || v > agg {
				agg = v
			}
		} else {
			agg += v
		}
		n++
	}
	if n == 0 {
		return
	}
	if !finite(agg) {
		x.bad("sum across series overflows")
		return
	}
	g := &x.g
	if g.Samples == 0 {
		g.Start, g.Min, g.Max = agg, agg, agg
	}
	g.Min, g.Max, g.Last = min(g.Min, agg), max(g.Max, agg), agg
	g.Samples++
}

func (x *acc) addCounter(key string, v float64, first bool) {
	if !finite(v) || v < 0 {
		x.bad("NaN, infinite or negative counter")
		x.taint(key)
		return
	}
	if x.cs == nil {
		x.cs = map[string]*counterSeries{}
	}
	c, ok := x.cs[key]
	switch {
	case !ok && first:
		x.cs[key] = &counterSeries{prev: v}
	case !ok && x.tainted[key]: // its start is unknown: count from here
		x.cs[key] = &counterSeries{prev: v}
		x.gaps++
	case !ok: // created during the window: it counted from zero
		x.cs[key] = &counterSeries{prev: v, inc: v}
	case v >= c.prev:
		c.inc += v - c.prev
		c.prev = v
	default: // reset: counted from zero since
		c.inc += v
		c.prev = v
		c.resets++
	}
}

func (x *acc) stat(seconds float64) Stat {
	st := Stat{Role: x.role, Metric: sanitize.String(x.name, nameMax), Kind: x.kind, Declared: x.declared, Series: x.series, Aggregation: "sum"}
	if x.max {
		st.Aggregation = "max"
	}
	switch x.kind {
	case Gauge:
		if x.g.Samples > 0 {
			g := x.g
			st.Gauge = &g
		}
	case Counter, Summary:
		c := &CounterStat{}
		for _, k := range sortedKeys(x.cs) {
			s := x.cs[k]
			c.Increase += s.inc
			c.Resets += s.resets
		}
		c.LowerBound = c.Resets > 0 || x.gaps > 0 || x.dropped > 0
		if seconds > 0 && finite(c.Increase/seconds) {
			c.Rate = c.Increase / seconds
		}
		if !finite(c.Increase) {
			c.Increase, c.Rate = 0, 0
			st.Notes = append(st.Notes, "increase overflows: not reported")
		}
		st.Counter = c
		if x.kind == Summary {
			st.Notes = append(st.Notes, "a summary: its quantiles cannot be taken over a window; observation count only")
		}
	case Histogram:
		st.Histogram = x.histogram()
		st.Histogram.LowerBound = st.Histogram.LowerBound || x.gaps > 0 || x.dropped > 0
		if n := x.relayouts(); n > 0 {
			st.Notes = append(st.Notes, fmt.Sprintf("bucket layout changed %d times: counted anew after each change", n))
		}
	}
	if x.dropped > 0 {
		st.Notes = append(st.Notes, fmt.Sprintf("%d series beyond the %d kept were left out", x.dropped, MaxSeries))
	}
	if x.gaps > 0 {
		st.Notes = append(st.Notes, fmt.Sprintf("%d series had no valid value at the start: counted from their first valid one (a lower bound)", x.gaps))
	}
	if x.dups > 0 {
		st.Notes = append(st.Notes, fmt.Sprintf("%d series repeating a label set were left out (the first kept)", x.dups))
	}
	for _, why := range sortedKeys(x.invalid) {
		st.Invalid += x.invalid[why]
		st.Notes = append(st.Notes, fmt.Sprintf("%d values left out: %s", x.invalid[why], why))
	}
	return st
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
