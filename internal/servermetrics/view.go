package servermetrics

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"time"

	"github.com/llmprobe/llmprobe/internal/sanitize"
)

// View is what the server's own metrics said over one window. It holds no
// NaN or infinity, so it always encodes as JSON.
type View struct {
	URL     string    `json:"url"`     // the scraped URL, sanitised
	Flavour Flavour   `json:"flavour"` // as configured, or detected at the start
	Start   time.Time `json:"start"`   // the first successful scrape of the window
	End     time.Time `json:"end"`     // the last successful scrape
	Seconds float64   `json:"seconds"` // End − Start
	Scrapes int       `json:"scrapes"` // successful scrapes folded in, the start and end included
	// FailedScrapes counts scrapes that failed (sampling and end).
	FailedScrapes int `json:"failed_scrapes,omitempty"`
	// Partial is set when the window could not be closed by an end scrape:
	// it then ends at the last successful sample.
	Partial bool `json:"partial,omitempty"`
	// Error is the last failed scrape's error (the end's when Partial).
	Error string `json:"error,omitempty"`
	// Stats are the known roles (in profile order) that the server
	// exposed, then the configured metrics that it exposed.
	Stats []Stat `json:"stats"`
	// Missing names known roles and configured metrics the server did
	// not expose during the window.
	Missing []string `json:"missing,omitempty"`
	Notes   []string `json:"notes,omitempty"`
	// Explanation is Explain(view): one line for a report.
	Explanation string `json:"explanation"`
}

// Stat is one metric over the window.
type Stat struct {
	Role   Role   `json:"role,omitempty"` // empty for a configured metric
	Metric string `json:"metric"`         // the name found on the server
	Kind   Kind   `json:"kind"`
	Series int    `json:"series"` // series folded (most seen in one scrape)
	// Aggregation across series: "sum", or "max" for a fraction.
	Aggregation string         `json:"aggregation"`
	Gauge       *GaugeStat     `json:"gauge,omitempty"`
	Counter     *CounterStat   `json:"counter,omitempty"`
	Histogram   *HistogramStat `json:"histogram,omitempty"`
	// Invalid counts values left out (NaN, ±Inf, negative, out of range,
	// non-cumulative buckets, a changed type); Notes say which.
	Invalid int      `json:"invalid,omitempty"`
	Notes   []string `json:"notes,omitempty"`
}

// GaugeStat is a gauge over every successful scrape of the window.
type GaugeStat struct {
	Start   float64 `json:"start"` // at the first scrape that had it
	Min     float64 `json:"min"`
	Max     float64 `json:"max"`
	Last    float64 `json:"last"`
	Samples int     `json:"samples"`
}

// CounterStat is a counter's increase over the window.
type CounterStat struct {
	Increase float64 `json:"increase"`
	// Rate is Increase / View.Seconds (0 when the window has no length).
	Rate float64 `json:"rate_per_second"`
	// Resets counts decreases between scrapes (a restart): the increase
	// then counts from zero and is a lower bound.
	Resets     int  `json:"resets,omitempty"`
	LowerBound bool `json:"lower_bound,omitempty"`
}

// HistogramStat is a histogram's observations during the window.
type HistogramStat struct {
	Count float64 `json:"count"` // observations during the window
	// Quantiles interpolated within buckets (exact to bucket resolution);
	// nil without observations. Not for summaries.
	P50 *Quantile `json:"p50,omitempty"`
	P95 *Quantile `json:"p95,omitempty"`
	P99 *Quantile `json:"p99,omitempty"`
	// Resets as for counters (a reset or a changed bucket layout).
	Resets     int  `json:"resets,omitempty"`
	LowerBound bool `json:"lower_bound,omitempty"` // the count is a lower bound
}

// Quantile is one quantile of a histogram's window.
type Quantile struct {
	Value float64 `json:"value"`
	// LowerBound: the quantile lies above the highest finite bucket bound,
	// which Value then is.
	LowerBound bool `json:"lower_bound,omitempty"`
}

// Get returns the stat of a role, or nil.
func (v View) Get(r Role) *Stat {
	for i := range v.Stats {
		if v.Stats[i].Role == r && r != Configured {
			return &v.Stats[i]
		}
	}
	return nil
}

// Metric returns the stat of a configured metric by name, or nil.
func (v View) Metric(name string) *Stat {
	for i := range v.Stats {
		if v.Stats[i].Metric == name {
			return &v.Stats[i]
		}
	}
	return nil
}

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
		a.accs = append(a.accs, &acc{role: k.Role, names: k.Names, want: k.Kind, max: k.Max})
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

type histSeries struct {
	prev, delta []Bucket // last valid cumulative buckets; accumulated deltas on the same bounds
	resets      int
	relayouts   int
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
	return x.role == Running || x.role == Waiting || x.role == KVCache
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

// validBuckets reports why cumulative buckets are unusable, or "".
func validBuckets(bs []Bucket) string {
	for i, b := range bs {
		if math.IsNaN(b.UpperBound) || (i > 0 && b.UpperBound <= bs[i-1].UpperBound) {
			return "bucket bounds not increasing"
		}
		if !finite(b.Count) || b.Count < 0 {
			return "NaN, infinite or negative bucket count"
		}
		if i > 0 && b.Count < bs[i-1].Count {
			return "bucket counts not cumulative"
		}
	}
	if len(bs) == 0 || !math.IsInf(bs[len(bs)-1].UpperBound, 1) {
		return "no +Inf bucket"
	}
	return ""
}

func sameBounds(a, b []Bucket) bool {
	return slices.EqualFunc(a, b, func(x, y Bucket) bool { return x.UpperBound == y.UpperBound })
}

func (x *acc) addHistogram(s Series, first bool) {
	if why := validBuckets(s.Buckets); why != "" {
		x.bad(why)
		x.taint(s.Key)
		return
	}
	if x.hs == nil {
		x.hs = map[string]*histSeries{}
	}
	cur := slices.Clone(s.Buckets)
	h, ok := x.hs[s.Key]
	switch {
	case !ok && (first || x.tainted[s.Key]):
		zero := slices.Clone(cur)
		for i := range zero {
			zero[i].Count = 0
		}
		x.hs[s.Key] = &histSeries{prev: cur, delta: zero}
		if !first {
			x.gaps++ // its start is unknown: count from here
		}
		return
	case !ok: // created during the window
		x.hs[s.Key] = &histSeries{prev: cur, delta: slices.Clone(cur)}
		return
	case !sameBounds(h.prev, cur): // a new layout (a restart with other buckets): count anew
		h.delta = slices.Clone(cur)
		h.relayouts++
		h.resets++
		h.prev = cur
		return
	}
	reset := false
	for i := range cur {
		if cur[i].Count < h.prev[i].Count {
			reset = true
			break
		}
	}
	for i := range cur {
		d := cur[i].Count
		if !reset {
			d -= h.prev[i].Count
		}
		h.delta[i].Count += d
	}
	if reset {
		h.resets++
	}
	h.prev = cur
}

func (x *acc) stat(seconds float64) Stat {
	st := Stat{Role: x.role, Metric: sanitize.String(x.name, nameMax), Kind: x.kind, Series: x.series, Aggregation: "sum"}
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
		c.LowerBound = c.Resets > 0 || x.gaps > 0
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
		st.Histogram.LowerBound = st.Histogram.LowerBound || x.gaps > 0
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

func (x *acc) relayouts() int {
	n := 0
	for _, h := range x.hs {
		n += h.relayouts
	}
	return n
}

// histogram merges the series' window deltas on their common bounds.
func (x *acc) histogram() *HistogramStat {
	out := &HistogramStat{}
	keys := sortedKeys(x.hs)
	if len(keys) == 0 {
		return out
	}
	common := map[float64]int{}
	for _, k := range keys {
		for _, b := range x.hs[k].delta {
			common[b.UpperBound]++
		}
	}
	var bounds []float64
	for ub, n := range common {
		if n == len(keys) {
			bounds = append(bounds, ub)
		}
	}
	sort.Float64s(bounds)
	merged := make([]Bucket, len(bounds))
	for i, ub := range bounds {
		merged[i].UpperBound = ub
	}
	for _, k := range keys {
		h := x.hs[k]
		out.Resets += h.resets
		j := 0
		for _, b := range h.delta {
			for j < len(merged) && merged[j].UpperBound < b.UpperBound {
				j++
			}
			if j < len(merged) && merged[j].UpperBound == b.UpperBound {
				merged[j].Count += b.Count
			}
		}
	}
	out.LowerBound = out.Resets > 0
	if n := len(merged); n > 0 && finite(merged[n-1].Count) {
		out.Count = merged[n-1].Count
	}
	if out.Count > 0 {
		out.P50 = BucketQuantile(0.50, merged)
		out.P95 = BucketQuantile(0.95, merged)
		out.P99 = BucketQuantile(0.99, merged)
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
