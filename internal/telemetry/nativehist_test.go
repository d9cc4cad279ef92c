package telemetry

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"google.golang.org/protobuf/proto"
)

// clientGolangTwin is the client_golang histogram a histVec of o stands
// for.
func clientGolangTwin(o histOpts) *prometheus.HistogramVec {
	ex := o.exemplars
	if ex <= 0 {
		ex = -1
	}
	return prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: o.name, Help: o.help, Buckets: o.classic,
		NativeHistogramBucketFactor:     nativeBucketFactor,
		NativeHistogramMaxBucketNumber:  uint32(o.maxBuckets),
		NativeHistogramMinResetDuration: o.minReset,
		NativeHistogramMaxExemplars:     ex,
	}, o.labels)
}

// written is what a Write gives, without the timestamps (the creation's
// and the exemplars'), which each clock sets.
func written(t *testing.T, m prometheus.Metric) *dto.Metric {
	t.Helper()
	var out dto.Metric
	if err := m.Write(&out); err != nil {
		t.Fatal(err)
	}
	c := proto.Clone(&out).(*dto.Metric)
	h := c.GetHistogram()
	h.CreatedTimestamp = nil
	for _, e := range h.GetExemplars() {
		e.Timestamp = nil
	}
	for _, b := range h.GetBucket() {
		if b.Exemplar != nil {
			b.Exemplar.Timestamp = nil
		}
	}
	return c
}

// TestHistSeriesMatchesClientGolang: for the same observations, a
// histSeries writes what a client_golang histogram of the same options
// writes (native buckets and schema, zero bucket, count and sum, classic
// buckets, exemplars but their timestamps), through a reduction of the
// resolution too.
func TestHistSeriesMatchesClientGolang(t *testing.T) {
	values := map[string]func(r *rand.Rand) float64{
		"latencies": func(r *rand.Rand) float64 { return math.Exp(math.Log(0.05) + 0.8*r.NormFloat64()) },
		"wide":      func(r *rand.Rand) float64 { return math.Exp2(float64(r.IntN(120)-60)) * (1 + r.Float64()) },
		"edges": func(r *rand.Rand) float64 {
			switch r.IntN(6) {
			case 0:
				return 0
			case 1:
				return math.Exp2(float64(r.IntN(20) - 10)) // a bucket boundary
			case 2:
				return math.Nextafter(histBounds[3][r.IntN(8)]*math.Exp2(float64(r.IntN(8))), math.Inf(1))
			case 3:
				return histBounds[3][r.IntN(8)] * math.Exp2(float64(r.IntN(8)-4))
			case 4:
				return -r.Float64()
			}
			return math.Inf(1)
		},
	}
	for _, tc := range []struct {
		name    string
		classic []float64
		ex, max int
	}{
		{"native", nil, 0, 160},
		{"native, exemplars", nil, 4, 160},
		{"classic, exemplars", bucketsTTFT, 10, 160},
		{"few buckets", bucketsLag, 2, 12},
	} {
		for vname, draw := range values {
			t.Run(tc.name+"/"+vname, func(t *testing.T) {
				o := histOpts{name: "h_seconds", help: "h", labels: []string{"target", "class"}, classic: tc.classic,
					exemplars: tc.ex, maxBuckets: tc.max, minReset: time.Hour}
				ours, theirs := newHistVec(o), clientGolangTwin(o)
				a, b := ours.WithLabelValues("t", "c"), theirs.WithLabelValues("t", "c")
				r := rand.New(rand.NewPCG(1, uint64(len(vname))))
				for i := range 3000 {
					v := draw(r)
					if tc.ex > 0 && i%3 == 0 {
						l := prometheus.Labels{exemplarRequestID: strconv.Itoa(i)}
						a.ObserveWithExemplar(v, l)
						b.(prometheus.ExemplarObserver).ObserveWithExemplar(v, l)
					} else {
						a.Observe(v)
						b.Observe(v)
					}
					if i%500 == 499 || i == 2 {
						got, want := written(t, a), written(t, b.(prometheus.Metric))
						if !proto.Equal(got, want) {
							t.Fatalf("after %d observations:\n ours:   %v\n theirs: %v", i+1, got, want)
						}
					}
				}
				if tc.max == 12 && written(t, a).GetHistogram().GetSchema() >= histSchema {
					t.Errorf("the resolution was never reduced: schema %d", written(t, a).GetHistogram().GetSchema())
				}
			})
		}
	}
}

// TestHistSeriesReset: a histogram whose resolution was halved is reset
// when minReset has passed since its creation (at its next observation or
// scrape), regaining the full schema; one over its buckets after minReset
// is reset at once, keeping only that observation.
func TestHistSeriesReset(t *testing.T) {
	now := time.Date(2026, 12, 5, 8, 0, 0, 0, time.UTC)
	v := newHistVec(histOpts{name: "h_seconds", help: "h", labels: []string{"target"}, maxBuckets: 4, minReset: time.Hour})
	v.now = func() time.Time { return now }
	s := v.WithLabelValues("t")
	for _, x := range []float64{1, 2, 4, 8, 16, 32} {
		s.Observe(x)
	}
	h := written(t, s).GetHistogram()
	if h.GetSchema() >= histSchema || h.GetSampleCount() != 6 {
		t.Fatalf("before an hour: schema %d, count %d; want a lower schema and 6", h.GetSchema(), h.GetSampleCount())
	}
	now = now.Add(time.Hour)
	var raw dto.Metric
	if err := s.Write(&raw); err != nil {
		t.Fatal(err)
	}
	h = raw.GetHistogram()
	if h.GetSchema() != histSchema || h.GetSampleCount() != 0 || !h.GetCreatedTimestamp().AsTime().Equal(now) {
		t.Fatalf("an hour on: schema %d, count %d, created %v; want %d, 0, %v", h.GetSchema(), h.GetSampleCount(), h.GetCreatedTimestamp().AsTime(), histSchema, now)
	}
	// Within the hour again, then past it with too many buckets: reset at
	// once, the last observation kept.
	for _, x := range []float64{1, 2, 4, 8} {
		s.Observe(x)
	}
	now = now.Add(2 * time.Hour)
	s.Observe(64)
	h = written(t, s).GetHistogram()
	if h.GetSchema() != histSchema || h.GetSampleCount() != 1 || h.GetSampleSum() != 64 {
		t.Errorf("over the buckets two hours on: schema %d, count %d, sum %g; want %d, 1, 64", h.GetSchema(), h.GetSampleCount(), h.GetSampleSum(), histSchema)
	}
}

// TestHistVecLabels: label values are checked as client_golang checks
// them, and DeletePartialMatch deletes exactly the matching series.
func TestHistVecLabels(t *testing.T) {
	v := newHistVec(histOpts{name: "h_seconds", help: "h", labels: []string{"target", "class"}, maxBuckets: 160})
	if _, err := v.GetMetricWithLabelValues("t"); err == nil {
		t.Error("one value for two labels accepted")
	}
	if _, err := v.GetMetricWithLabelValues("t", "\xff"); err == nil {
		t.Error("a value that is not UTF-8 accepted")
	}
	for _, tg := range []string{"a", "b"} {
		for _, c := range []string{"x", "y"} {
			v.WithLabelValues(tg, c).Observe(1)
		}
	}
	if first, again := v.WithLabelValues("a", "x"), v.WithLabelValues("a", "x"); first != again {
		t.Error("the same values gave two series")
	}
	if n := v.DeletePartialMatch(prometheus.Labels{"target": "a"}); n != 2 {
		t.Errorf("deleted %d, want 2", n)
	}
	if n := v.DeletePartialMatch(prometheus.Labels{"nope": "a"}); n != 0 {
		t.Errorf("an unknown label deleted %d", n)
	}
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(v)
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	if len(mfs) != 1 || len(mfs[0].GetMetric()) != 2 || labelsOf(mfs[0].GetMetric()[0])["target"] != "b" {
		t.Errorf("left after the delete: %v", mfs)
	}
	defer func() {
		if recover() == nil {
			t.Error("an exemplar of 200 runes did not panic, as client_golang's")
		}
	}()
	v.WithLabelValues("b", "x").ObserveWithExemplar(1, prometheus.Labels{"trace_id": fmt.Sprintf("%0200d", 1)})
}

// TestHistSeriesConcurrent: observations, scrapes and deletions at once
// lose no observation (go test -race checks the rest).
func TestHistSeriesConcurrent(t *testing.T) {
	v := newHistVec(histOpts{name: "h_seconds", help: "h", labels: []string{"target"}, exemplars: 4, maxBuckets: 160, minReset: time.Hour})
	reg := prometheus.NewRegistry()
	reg.MustRegister(v)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			s := v.WithLabelValues("t")
			for i := range 2000 {
				s.ObserveWithExemplar(float64(i%50+1)/1000, prometheus.Labels{exemplarRequestID: strconv.Itoa(g*10000 + i)})
			}
		})
	}
	wg.Go(func() {
		for range 50 {
			if _, err := reg.Gather(); err != nil {
				t.Error(err)
			}
			v.WithLabelValues("gone").Observe(1)
			v.DeletePartialMatch(prometheus.Labels{"target": "gone"})
		}
	})
	wg.Wait()
	if h := written(t, v.WithLabelValues("t")).GetHistogram(); h.GetSampleCount() != 8000 || len(h.GetExemplars()) != 4 {
		t.Errorf("count %d, %d exemplars; want 8000 and 4", h.GetSampleCount(), len(h.GetExemplars()))
	}
}

// BenchmarkHistWrite is one scrape's Write of a histogram with 40 native
// buckets and 4 exemplars, against client_golang's.
func BenchmarkHistWrite(b *testing.B) {
	o := histOpts{name: "h_seconds", help: "h", labels: []string{"target"}, exemplars: 4, maxBuckets: 160, minReset: time.Hour}
	for _, impl := range []string{"histSeries", "client_golang"} {
		b.Run(impl, func(b *testing.B) {
			var m prometheus.Metric
			var obs prometheus.ExemplarObserver
			if impl == "histSeries" {
				s := newHistVec(o).WithLabelValues("t")
				m, obs = s, s
			} else {
				h := clientGolangTwin(o).WithLabelValues("t")
				m, obs = h.(prometheus.Metric), h.(prometheus.ExemplarObserver)
			}
			for i := range 400 {
				obs.ObserveWithExemplar(0.01*math.Exp2(float64(i%40)/8), prometheus.Labels{exemplarRequestID: strconv.Itoa(i)})
			}
			b.ReportAllocs()
			for b.Loop() {
				var out dto.Metric
				if err := m.Write(&out); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
