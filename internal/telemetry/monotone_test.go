package telemetry

import (
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/llmprobe/llmprobe/internal/ledger"
)

// steppingHost is a host source whose derived values step back now and
// then, as they did in the field: busy seconds as a difference of floats
// (2570.8799999999997 then 2570.879999999999), a kernel counter that goes
// back (iowait), and one at the source's zero.
type steppingHost struct{ n atomic.Int64 }

func (s *steppingHost) read() HostCounters {
	i := s.n.Add(1)
	busy := 2570.8799999999997
	if i%2 == 0 {
		busy = 2570.879999999999 // the field's pair: one ulp-scale step back
	}
	busy += float64(i/10) * 0.01
	back := float64(i%7) * -0.5 // steps back by up to 3 s, then on
	return HostCounters{CPUOK: true, CPUBusySeconds: busy, CPUStealSeconds: 10 + float64(i/3) + back, CPUs: 2,
		PressureOK: true, PressureSeconds: 90 + back + float64(i),
		CgroupPressureOK: true, CgroupPressureSeconds: float64(i%3) + float64(i/3),
		ThrottleOK: true, Periods: uint64(100 + i - i%4), ThrottledPeriods: uint64(i / 5), ThrottledSeconds: 2 + back + float64(i)/2,
		RunWaitOK: true, RunWaitSeconds: 3.5 + float64(i)*0.1 + back/10}
}

// steppingSink is a ledger sink whose counts step back once in a while.
type steppingSink struct{ n atomic.Int64 }

func (s *steppingSink) Stats() ledger.RotatingStats {
	i := s.n.Add(1)
	return ledger.RotatingStats{Written: i - i%5, Dropped: i % 3, WriteErrors: i / 4, Rotations: i%2 + i/10}
}

// TestCountersNeverDecrease scrapes every counter of the registry many
// times while requests are recorded from other goroutines, with sources
// that step back, and fails on any decrease of a counter, a histogram's
// count or its sum.
func TestCountersNeverDecrease(t *testing.T) {
	r, reg := newTestRecorder(t, Options{})
	if err := WatchHost(reg, (&steppingHost{}).read); err != nil {
		t.Fatal(err)
	}
	if err := WatchLedgerSink(reg, &steppingSink{}); err != nil {
		t.Fatal(err)
	}
	feedFixture(r)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 2 { // the load: records from other goroutines until the scrapes end
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				for _, rec := range fixtureRecords() {
					r.Record(rec)
				}
			}
		}()
	}
	defer func() { close(stop); wg.Wait() }()
	last := map[string]float64{}
	counters := 0
	for scrape := range 100 {
		mfs, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		counters = 0
		for _, mf := range mfs {
			for _, m := range mf.GetMetric() {
				for k, v := range monotoneValues(mf, m) {
					counters++
					if prev, ok := last[k]; ok && v < prev {
						t.Fatalf("scrape %d: %s went down, %v -> %v", scrape, k, prev, v)
					}
					last[k] = v
				}
			}
		}
	}
	for _, name := range []string{metricHostBusy, metricHostSteal, metricCgroupThrottledSecs, metricRunQueueWait, metricLedgerWritten, "llmprobe_requests_total"} {
		if !hasSeries(last, name) {
			t.Errorf("%s was not scraped: the test did not see it", name)
		}
	}
	t.Logf("%d counter values per scrape, 100 scrapes, none went down", counters)
}

// monotoneValues are the values of m that must never go down: a
// counter's, a histogram's count and sum (observations are never
// negative), keyed by name and labels.
func monotoneValues(mf *dto.MetricFamily, m *dto.Metric) map[string]float64 {
	labels := make([]string, 0, len(m.GetLabel()))
	for _, l := range m.GetLabel() {
		labels = append(labels, l.GetName()+"="+l.GetValue())
	}
	sort.Strings(labels)
	key := mf.GetName() + "{" + strings.Join(labels, ",") + "}"
	switch mf.GetType() {
	case dto.MetricType_COUNTER:
		return map[string]float64{key: m.GetCounter().GetValue()}
	case dto.MetricType_HISTOGRAM:
		h := m.GetHistogram()
		return map[string]float64{key + "_count": float64(h.GetSampleCount()), key + "_sum": h.GetSampleSum()}
	}
	return nil
}

func hasSeries(seen map[string]float64, name string) bool {
	for k := range seen {
		if strings.HasPrefix(k, name+"{") {
			return true
		}
	}
	return false
}

// TestMonotoneHolds: a value below the last exported is held at it, a NaN
// too; a rise passes.
func TestMonotoneHolds(t *testing.T) {
	var m monotone
	d := prometheus.NewDesc("x_total", "x", nil, nil)
	for i, tc := range []struct{ in, want float64 }{{2570.8799999999997, 2570.8799999999997}, {2570.879999999999, 2570.8799999999997}, {0, 2570.8799999999997}, {2571, 2571}} {
		var out dto.Metric
		if err := m.counter(d, tc.in).Write(&out); err != nil {
			t.Fatal(err)
		}
		if got := out.GetCounter().GetValue(); got != tc.want {
			t.Errorf("step %d: %v exported as %v, want %v", i, tc.in, got, tc.want)
		}
	}
}
