package telemetry

import (
	"context"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
)

func TestRecordConcurrently(t *testing.T) {
	r, _ := newTestRecorder(t, Options{})
	recs := fixtureRecords()
	var wg sync.WaitGroup
	const workers, rounds = 8, 50
	for range workers {
		wg.Go(func() {
			for range rounds {
				for _, rec := range recs {
					r.Record(rec)
				}
				r.SetTargetInfo("sim", "m1", "")
				r.SetInFlight("sim", 1, 0)
			}
		})
	}
	wg.Wait()
	var total float64
	for _, rec := range recs {
		total += testutil.ToFloat64(r.prom.requests.WithLabelValues(rec.Target, rec.Class, string(rec.Traffic), rec.DuringLabel(), string(rec.Outcome), string(rec.Reason)))
	}
	if want := float64(workers * rounds * len(recs)); total != want {
		t.Errorf("requests counted = %v, want %v", total, want)
	}
}

func BenchmarkRecordPrometheus(b *testing.B) { benchRecord(b, Options{}) }

func BenchmarkRecordPrometheusAndOTel(b *testing.B) {
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()), sdkmetric.WithView(ExponentialHistogramView()))
	defer mp.Shutdown(context.Background())
	benchRecord(b, Options{MeterProvider: mp})
}

// benchRecord measures Record of one fixture record from parallel goroutines.
func benchRecord(b *testing.B, o Options) {
	b.Helper()
	r, err := New(o)
	if err != nil {
		b.Fatal(err)
	}
	rec := fixtureRecords()[0]
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			r.Record(rec)
		}
	})
}

func TestRefreshingGatherer(t *testing.T) {
	r, reg := newTestRecorder(t, Options{})
	n := 0
	g := RefreshingGatherer(reg, func() { n++; r.SetInFlight("a", n, 0) })
	for want := 1; want <= 2; want++ {
		mf := family(t, g, "llmprobe_in_flight_requests")
		if got := mf.GetMetric()[0].GetGauge().GetValue(); got != float64(want) {
			t.Errorf("scrape %d: in flight = %v, want %v", want, got, want)
		}
	}
}
