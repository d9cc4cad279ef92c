package servermetrics

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"mime"
	"slices"
	"strings"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
)

// Kind is the type of a metric family as the exposition declares it.
type Kind string

// Kinds. An untyped family is read as a gauge.
const (
	Gauge     Kind = "gauge"
	Counter   Kind = "counter"
	Histogram Kind = "histogram"
	Summary   Kind = "summary"
	Untyped   Kind = "untyped"
	Other     Kind = "other" // gauge histograms and anything newer: not read
)

// MaxSeries is the most series kept per family; a family with more keeps
// the first MaxSeries in label order and counts the rest as dropped.
const MaxSeries = 256

// Exposition is one parsed scrape.
type Exposition struct {
	At       time.Time          // when the response was read
	Families map[string]*Family // by family name as exposed
}

// Family is one metric family of an exposition.
type Family struct {
	Name       string
	Kind       Kind
	Series     []Series // sorted by Key, unique
	Dropped    int      // series beyond MaxSeries
	Duplicates int      // series repeating a label set (the first is kept)
}

// Series is one labelled series of a family.
type Series struct {
	// Key identifies the series by its labels (le and quantile excluded);
	// it is internal and never printed.
	Key string
	// Value of a gauge, counter or untyped series.
	Value float64
	// Count is a histogram's or summary's number of observations.
	Count float64
	// Buckets of a histogram: cumulative counts by ascending upper bound,
	// the last one +Inf (added from Count when the exposition omits it).
	Buckets []Bucket
}

// Bucket is one cumulative histogram bucket.
type Bucket struct {
	UpperBound float64
	Count      float64
}

// AcceptHeader asks for the Prometheus text format, which every known
// exporter serves when asked.
const AcceptHeader = "text/plain;version=0.0.4;q=1,*/*;q=0.1"

// Bounds on an OpenMetrics body. expfmt parses OpenMetrics line by line
// against the ABNF grammar, at a cost that grows steeply with line length
// (measured on this project's 2-core machine: a 19 KB vLLM exposition
// ≈ 0.75 s, 32 KiB of 128-byte lines ≈ 3.4 s, one 4,000-byte line 72 s),
// so a server that ignores the Accept header and answers OpenMetrics is
// read only when the body is this small; the text format has no such
// bound.
const (
	MaxOpenMetricsBytes     = 8 << 10
	MaxOpenMetricsLineBytes = 128
)

// Parse reads one exposition in the format contentType names (a response's
// Content-Type; empty or plain text/plain means the Prometheus text
// format). Formats expfmt cannot decode are an error, and so is any
// syntax error anywhere in the body: a partly parsed scrape is not used.
// Error texts may quote the body; sanitise them before showing them.
func Parse(body []byte, contentType string) (*Exposition, error) {
	format, err := formatOf(contentType)
	if err != nil {
		return nil, err
	}
	if format.FormatType() == expfmt.TypeOpenMetrics {
		if err := openMetricsBounds(body); err != nil {
			return nil, err
		}
	}
	dec := expfmt.NewDecoder(bytes.NewReader(body), format)
	e := &Exposition{Families: map[string]*Family{}}
	for {
		var mf dto.MetricFamily
		err := dec.Decode(&mf)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("parse %s: %w", formatName(format), err)
		}
		name := mf.GetName()
		if _, dup := e.Families[name]; dup {
			return nil, fmt.Errorf("parse %s: metric family %q appears twice", formatName(format), name)
		}
		e.Families[name] = convert(&mf)
	}
	return e, nil
}

// openMetricsBounds refuses an OpenMetrics body too costly to parse.
func openMetricsBounds(body []byte) error {
	const advice = "expfmt's OpenMetrics parser costs seconds per kilobyte; the endpoint ignored Accept: text/plain — have it serve the Prometheus text format"
	if len(body) > MaxOpenMetricsBytes {
		return fmt.Errorf("OpenMetrics body of %d bytes refused (at most %d): %s", len(body), MaxOpenMetricsBytes, advice)
	}
	for line := range bytes.Lines(body) {
		if len(line) > MaxOpenMetricsLineBytes+1 {
			return fmt.Errorf("OpenMetrics line of %d bytes refused (at most %d): %s", len(line), MaxOpenMetricsLineBytes, advice)
		}
	}
	return nil
}

// formatOf maps a Content-Type to an expfmt format.
func formatOf(contentType string) (expfmt.Format, error) {
	if strings.TrimSpace(contentType) == "" {
		return expfmt.NewFormat(expfmt.TypeTextPlain), nil
	}
	h := make(map[string][]string, 1)
	h["Content-Type"] = []string{contentType}
	if f := expfmt.ResponseFormat(h); f != expfmt.FmtUnknown {
		return f, nil
	}
	mt, _, err := mime.ParseMediaType(contentType)
	if err == nil && mt == "text/plain" {
		return expfmt.NewFormat(expfmt.TypeTextPlain), nil // a text version expfmt does not name
	}
	return "", fmt.Errorf("unsupported content type %q (want the Prometheus text format or OpenMetrics 1.0)", contentType)
}

func formatName(f expfmt.Format) string {
	switch f.FormatType() {
	case expfmt.TypeOpenMetrics:
		return "OpenMetrics"
	case expfmt.TypeProtoDelim:
		return "protobuf"
	default:
		return "text format"
	}
}

func kindOf(t dto.MetricType) Kind {
	switch t {
	case dto.MetricType_GAUGE:
		return Gauge
	case dto.MetricType_COUNTER:
		return Counter
	case dto.MetricType_HISTOGRAM:
		return Histogram
	case dto.MetricType_SUMMARY:
		return Summary
	case dto.MetricType_UNTYPED:
		return Untyped
	default:
		return Other
	}
}

// convert turns a decoded family into ours, keeping at most MaxSeries
// series. Values are copied as they are; the window validates them.
func convert(mf *dto.MetricFamily) *Family {
	f := &Family{Name: mf.GetName(), Kind: kindOf(mf.GetType())}
	for _, m := range mf.GetMetric() {
		if m == nil {
			continue
		}
		s := Series{Key: seriesKey(m.GetLabel())}
		switch f.Kind {
		case Gauge:
			s.Value = m.GetGauge().GetValue()
		case Counter:
			s.Value = m.GetCounter().GetValue()
		case Untyped:
			s.Value = m.GetUntyped().GetValue()
		case Summary:
			s.Count = float64(m.GetSummary().GetSampleCount())
		case Histogram:
			s.Count, s.Buckets = buckets(m.GetHistogram())
		}
		f.Series = append(f.Series, s)
	}
	slices.SortStableFunc(f.Series, func(a, b Series) int { return strings.Compare(a.Key, b.Key) })
	n := len(f.Series)
	f.Series = slices.CompactFunc(f.Series, func(a, b Series) bool { return a.Key == b.Key })
	f.Duplicates = n - len(f.Series)
	if len(f.Series) > MaxSeries {
		f.Dropped = len(f.Series) - MaxSeries
		f.Series = f.Series[:MaxSeries:MaxSeries]
	}
	return f
}

// buckets returns a classic histogram's count and cumulative buckets, the
// last one +Inf.
func buckets(h *dto.Histogram) (float64, []Bucket) {
	count := float64(h.GetSampleCount())
	if h != nil && h.SampleCountFloat != nil {
		count = h.GetSampleCountFloat()
	}
	out := make([]Bucket, 0, len(h.GetBucket())+1)
	for _, b := range h.GetBucket() {
		if b == nil {
			continue
		}
		c := float64(b.GetCumulativeCount())
		if b.CumulativeCountFloat != nil {
			c = b.GetCumulativeCountFloat()
		}
		out = append(out, Bucket{UpperBound: b.GetUpperBound(), Count: c})
	}
	if n := len(out); n == 0 || !math.IsInf(out[n-1].UpperBound, 1) {
		out = append(out, Bucket{UpperBound: math.Inf(1), Count: count})
	}
	return count, out
}

// seriesKey is a canonical form of a label set without le and quantile.
func seriesKey(labels []*dto.LabelPair) string {
	pairs := make([]string, 0, len(labels))
	for _, l := range labels {
		if n := l.GetName(); n != "le" && n != "quantile" {
			pairs = append(pairs, n+"\xff"+l.GetValue())
		}
	}
	slices.Sort(pairs)
	return strings.Join(pairs, "\xfe")
}

// lookup finds a family by name, also under the other spelling of a
// counter (OpenMetrics names the family without _total, the text format
// with it).
func (e *Exposition) lookup(name string) (*Family, bool) {
	if e == nil {
		return nil, false
	}
	if f, ok := e.Families[name]; ok {
		return f, true
	}
	alt := name + "_total"
	if base, ok := strings.CutSuffix(name, "_total"); ok {
		alt = base
	}
	if f, ok := e.Families[alt]; ok && f.Kind == Counter {
		return f, true
	}
	return nil, false
}
