package servermetrics

import (
	"time"
)

// Unavailable is the view of a window that could not be opened: no
// figures, the URL (sanitised) and why (err's text, already cleaned by the
// scraper, is cleaned and bounded again here; its cause is FailureCause).
func Unavailable(url string, err error) View {
	v := View{URL: url, Unavailable: true, Stats: []Stat{}}
	if err != nil {
		v.Error = CleanError(nil, err)
		v.FailureCause = FailureCause(err)
	}
	v.Explanation = Explain(v)
	return v
}

// TTFTGap sets a step's client TTFT beside the server's own: client minus
// server, at p50 and at p95. Each is a difference of two percentiles, not a
// percentile of per-request differences (the two sides are not joined
// request by request), so it says how far apart the two distributions sit,
// not what any one request lost. The client measures from its planned send
// time to the first token it read; the server from the request's arrival
// at its engine to the first token it produced: the difference is the
// network both ways plus any queueing outside the server's clock (the
// prober's dispatch lag, a proxy or load balancer, the server's HTTP
// front end). The server's quantiles are interpolated within its buckets,
// so the gap is exact only to their resolution, and its window may count
// other clients' requests.
type TTFTGap struct {
	ClientCount int     `json:"client_count"` // ok requests with a TTFT
	ClientP50   float64 `json:"client_p50_s"`
	ClientP95   float64 `json:"client_p95_s"`
	ServerCount float64 `json:"server_count"` // server TTFT observations in the window
	ServerP50   float64 `json:"server_p50_s"`
	ServerP95   float64 `json:"server_p95_s"`
	// P50 and P95 are client minus server, in seconds; negative when the
	// server's interpolated quantile lies above the client's.
	P50 float64 `json:"p50_s"`
	P95 float64 `json:"p95_s"`
	// P50AtMost and P95AtMost: the server quantile lay in its +Inf bucket
	// (a lower bound), so the gap is at most the figure.
	P50AtMost bool `json:"p50_at_most,omitempty"`
	P95AtMost bool `json:"p95_at_most,omitempty"`
	// P50Range and P95Range are where the gap lies given the server's
	// bucket (client minus the bucket's upper and lower bound): the
	// interpolated P50/P95 is one point of it. nil when the bucket is
	// unbounded.
	P50Range *GapRange `json:"p50_range,omitempty"`
	P95Range *GapRange `json:"p95_range,omitempty"`
}

// GapRange bounds a gap, in seconds.
type GapRange struct {
	Low  float64 `json:"low_s"`
	High float64 `json:"high_s"`
}

// gapRange is client − the server quantile's bucket, nil when unbounded.
func gapRange(client float64, q *Quantile) *GapRange {
	if q.LowerBound || q.BucketHigh <= q.BucketLow {
		return nil
	}
	return &GapRange{Low: client - q.BucketHigh, High: client - q.BucketLow}
}

// Gap compares the client's TTFT percentiles (count ok requests with a
// TTFT) with the server's TTFT over the view's window; nil when either
// side has nothing to compare.
func Gap(v View, count int, p50, p95 time.Duration) *TTFTGap {
	s := v.Get(TTFT)
	if count == 0 || s == nil || s.Histogram == nil || s.Histogram.P50 == nil || s.Histogram.P95 == nil {
		return nil
	}
	h := s.Histogram
	g := &TTFTGap{
		ClientCount: count, ClientP50: p50.Seconds(), ClientP95: p95.Seconds(),
		ServerCount: h.Count, ServerP50: h.P50.Value, ServerP95: h.P95.Value,
		P50AtMost: h.P50.LowerBound, P95AtMost: h.P95.LowerBound,
	}
	g.P50, g.P95 = g.ClientP50-g.ServerP50, g.ClientP95-g.ServerP95
	g.P50Range, g.P95Range = gapRange(g.ClientP50, h.P50), gapRange(g.ClientP95, h.P95)
	return g
}

// Seconds formats a latency in seconds as Explain does (850µs, 45.3ms,
// 1.23s), for reports that print a view's figures.
func Seconds(s float64) string { return seconds(s) }

// Num formats a count or gauge as Explain does (whole numbers without
// decimals, anything else with three significant digits).
func Num(x float64) string { return num(x) }
