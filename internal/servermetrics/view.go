package servermetrics

import (
	"time"
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
	// Unavailable is set when the window could not be opened (its start
	// scrape failed): the view then holds no figures and Error says why.
	Unavailable bool `json:"unavailable,omitempty"`
	// Error is the last failed scrape's error (the end's when Partial,
	// the start's when Unavailable).
	Error string `json:"error,omitempty"`
	// FailureCause is what the last failed scrape ran into, in a few
	// words, sanitised: "timeout after 2s", "HTTP 503", "parse error: …",
	// "connection refused". Explain shows it beside the failure count.
	FailureCause string `json:"failure_cause,omitempty"`
	// Slots is the server's number of slots (llama.cpp's total_slots from
	// its /props), 0 when unknown: idle slots are Slots minus busy ones.
	Slots int `json:"slots,omitempty"`
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
	Kind   Kind   `json:"kind"`           // the kind read
	// Declared is the type the server declares when it is not the kind
	// read (llama.cpp declares a high-water mark a counter: read as a
	// gauge).
	Declared Kind `json:"declared,omitempty"`
	Series   int  `json:"series"` // series folded (most seen in one scrape)
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
	// BucketLow and BucketHigh bound the bucket the quantile was
	// interpolated in: the true quantile lies between them (BucketHigh is
	// 0 when the bucket is +Inf, or for a quantile at a bound ≤ 0).
	BucketLow  float64 `json:"bucket_low,omitempty"`
	BucketHigh float64 `json:"bucket_high,omitempty"`
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
