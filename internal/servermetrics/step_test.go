package servermetrics

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"
)

// TestUnavailable: an error's text is bounded in the view, and a view
// without an error still explains itself (the scrape package tests a real
// failed start).
func TestUnavailable(t *testing.T) {
	long := Unavailable("http://x/metrics", errors.New(strings.Repeat("é", 1000)))
	if len(long.Error) > errMax {
		t.Errorf("error of %d bytes kept, at most %d", len(long.Error), errMax)
	}
	if got := Unavailable("u", nil).Explanation; got != "server metrics unavailable" {
		t.Errorf("explanation without an error %q", got)
	}
	mustJSON(t, long)
}

// TestGap: client − server at p50 and p95, "at most" when the server's
// quantile is a lower bound, nil when either side has nothing.
func TestGap(t *testing.T) {
	view := func(p50, p95 float64, lower bool) View {
		return View{Stats: []Stat{{Role: TTFT, Kind: Histogram, Histogram: &HistogramStat{Count: 40,
			P50: &Quantile{Value: p50}, P95: &Quantile{Value: p95, LowerBound: lower}}}}}
	}
	ms := time.Millisecond
	tests := []struct {
		name     string
		v        View
		n        int
		p50, p95 time.Duration
		want     *TTFTGap
	}{
		{"client behind the server", view(0.080, 0.200, false), 50, 100 * ms, 250 * ms,
			&TTFTGap{ClientCount: 50, ClientP50: 0.1, ClientP95: 0.25, ServerCount: 40, ServerP50: 0.08, ServerP95: 0.2, P50: 0.02, P95: 0.05}},
		{"server quantile a lower bound", view(0.080, 80, true), 50, 100 * ms, 90 * time.Second,
			&TTFTGap{ClientCount: 50, ClientP50: 0.1, ClientP95: 90, ServerCount: 40, ServerP50: 0.08, ServerP95: 80, P50: 0.02, P95: 10, P95AtMost: true}},
		{"negative within the buckets", view(0.120, 0.250, false), 5, 100 * ms, 240 * ms,
			&TTFTGap{ClientCount: 5, ClientP50: 0.1, ClientP95: 0.24, ServerCount: 40, ServerP50: 0.12, ServerP95: 0.25, P50: -0.02, P95: -0.01}},
		{"no client TTFT", view(0.08, 0.2, false), 0, 0, 0, nil},
		{"no server TTFT", View{}, 10, ms, ms, nil},
		{"server without observations", View{Stats: []Stat{{Role: TTFT, Kind: Histogram, Histogram: &HistogramStat{}}}}, 10, ms, ms, nil},
		{"unavailable", Unavailable("u", errors.New("down")), 10, ms, ms, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Gap(tt.v, tt.n, tt.p50, tt.p95)
			if (got == nil) != (tt.want == nil) {
				t.Fatalf("Gap = %+v, want %+v", got, tt.want)
			}
			if got == nil {
				return
			}
			if !near(got.P50, tt.want.P50) || !near(got.P95, tt.want.P95) || got.P50AtMost != tt.want.P50AtMost || got.P95AtMost != tt.want.P95AtMost ||
				got.ClientCount != tt.want.ClientCount || got.ServerCount != tt.want.ServerCount ||
				!near(got.ClientP95, tt.want.ClientP95) || !near(got.ServerP95, tt.want.ServerP95) {
				t.Errorf("Gap = %+v, want %+v", *got, *tt.want)
			}
		})
	}
}

func TestSecondsSigned(t *testing.T) {
	for in, want := range map[float64]string{0.0421: "42.1ms", -0.0421: "-42.1ms", -1.5: "-1.5s", 0.00085: "850µs"} {
		if got := Seconds(in); got != want {
			t.Errorf("Seconds(%v) = %q, want %q", in, got, want)
		}
	}
}

// TestGapRange: a quantile carries the bucket it was interpolated in, and
// the gap the range that bucket allows (client minus its bounds); an
// unbounded (+Inf) bucket gives no range.
func TestGapRange(t *testing.T) {
	inf := math.Inf(1)
	b := []Bucket{{0.1, 10}, {0.25, 20}, {inf, 21}}
	q40, q75, q99 := BucketQuantile(0.4, b), BucketQuantile(0.75, b), BucketQuantile(0.999, b)
	if q40.BucketLow != 0 || q40.BucketHigh != 0.1 || q75.BucketLow != 0.1 || q75.BucketHigh != 0.25 {
		t.Errorf("buckets: p40 %+v, p75 %+v", q40, q75)
	}
	if !q99.LowerBound || q99.BucketLow != 0.25 || q99.BucketHigh != 0 {
		t.Errorf("+Inf bucket: %+v", q99)
	}
	v := View{Stats: []Stat{{Role: TTFT, Kind: Histogram, Histogram: &HistogramStat{Count: 21, P50: q75, P95: q99}}}}
	g := Gap(v, 30, 300*time.Millisecond, 2*time.Second)
	if g.P50Range == nil || !near(g.P50Range.Low, 0.05) || !near(g.P50Range.High, 0.2) || g.P50 < g.P50Range.Low || g.P50 > g.P50Range.High {
		t.Errorf("p50 gap %v in %+v, want within [0.05, 0.2]", g.P50, g.P50Range)
	}
	if g.P95Range != nil || !g.P95AtMost {
		t.Errorf("p95 gap over an unbounded bucket: range %+v, at most %v", g.P95Range, g.P95AtMost)
	}
	mustJSON(t, View{Stats: v.Stats})
}
