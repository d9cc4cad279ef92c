package dispatch

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/ledger"
	"github.com/llmprobe/llmprobe/internal/schedule"
)

// lagSink keeps the dispatch lag of every sent record.
type lagSink struct {
	mu   sync.Mutex
	lags []time.Duration
}

func (s *lagSink) Record(r *ledger.Record) {
	if lag, ok := r.DispatchLag(); ok {
		s.mu.Lock()
		s.lags = append(s.lags, lag)
		s.mu.Unlock()
	}
}

func (s *lagSink) report(b *testing.B) {
	if len(s.lags) == 0 {
		return
	}
	slices.Sort(s.lags)
	q := func(p float64) float64 { return float64(s.lags[int(p*float64(len(s.lags)-1))].Microseconds()) }
	b.ReportMetric(q(0.5), "lag-p50-µs")
	b.ReportMetric(q(0.99), "lag-p99-µs")
	b.ReportMetric(q(1), "lag-max-µs")
}

// cpuTime is the process's user+system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportCPU reports CPU time per op since c0 (the whole process: the
// dispatcher, the ledger and the fake executor).
func reportCPU(b *testing.B, c0 time.Duration) {
	b.ReportMetric(float64((cpuTime()-c0).Microseconds())/float64(b.N), "cpu-µs/op")
}

// BenchmarkOpenFlatOut measures the dispatcher alone at full speed: every
// arrival is already due, the executor returns at once. ns/op is the cost of
// one arrival (plan, goroutine, exec wrapper, finish).
func BenchmarkOpenFlatOut(b *testing.B) {
	sink := &lagSink{}
	led := ledger.New(time.Now(), sink)
	g := NewGroup(led)
	arr, err := schedule.New(schedule.Spec{Kind: schedule.Constant}, schedule.Step{Rate: 1e9})
	if err != nil {
		b.Fatal(err)
	}
	time.Sleep(time.Millisecond) // every arrival is due at once
	b.ReportAllocs()
	b.ResetTimer()
	c0 := cpuTime()
	if err := g.Open(context.Background(), OpenConfig{
		Arrivals: arr, Start: time.Nanosecond, Window: time.Duration(b.N) * time.Nanosecond, Exec: okExec,
	}); err != nil {
		b.Fatal(err)
	}
	g.Drain(context.Background(), time.Minute)
	b.StopTimer()
	reportCPU(b, c0)
	if err := led.Verify(); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkOpenPaced runs Poisson arrivals at fixed rates against an
// instant executor and reports the dispatch-lag percentiles: the
// generator's own precision on this machine. Each op is one arrival.
func BenchmarkOpenPaced(b *testing.B) {
	for _, bc := range []struct {
		rate float64
		spin time.Duration
	}{{500, 0}, {2000, 0}, {5000, 0}, {500, time.Millisecond}, {2000, time.Millisecond}, {5000, time.Millisecond}} {
		rate := bc.rate
		b.Run(fmt.Sprintf("rate=%v/spin=%v", rate, bc.spin), func(b *testing.B) {
			sink := &lagSink{}
			led := ledger.New(time.Now(), sink)
			g := NewGroup(led)
			arr, err := schedule.New(schedule.Spec{Seed: 1}, schedule.Step{Rate: rate})
			if err != nil {
				b.Fatal(err)
			}
			n := 0
			counted := arrivalsFunc(func() (time.Duration, bool) {
				if n >= b.N {
					return 0, false
				}
				n++
				return arr.Next()
			})
			b.ResetTimer()
			c0 := cpuTime()
			if err := g.Open(context.Background(), OpenConfig{Arrivals: counted, Exec: okExec, Spin: bc.spin}); err != nil {
				b.Fatal(err)
			}
			g.Drain(context.Background(), time.Minute)
			b.StopTimer()
			reportCPU(b, c0)
			sink.report(b)
		})
	}
}

// TestAwaitNeverEarly: whatever the path (runtime timer, precise sleep,
// spin), a wait never ends before its time, and a wait already due ends at
// once.
func TestAwaitNeverEarly(t *testing.T) {
	for _, spin := range []time.Duration{0, 300 * time.Microsecond} {
		for _, ahead := range []time.Duration{-time.Millisecond, 0, 50 * time.Microsecond, 700 * time.Microsecond, fineWindow, 3 * time.Millisecond} {
			t.Run(fmt.Sprintf("spin=%v/ahead=%v", spin, ahead), func(t *testing.T) {
				led := ledger.New(time.Now())
				g := NewGroup(led)
				timer := time.NewTimer(time.Hour)
				defer timer.Stop()
				for range 5 {
					at := led.Now() + ahead
					if _, ok := g.await(at, spin, timer, nil); !ok {
						t.Fatal("await gave up with nothing to stop it")
					}
					if now := led.Now(); now < at {
						t.Fatalf("await ended %v before its time", at-now)
					}
				}
			})
		}
	}
}

// TestAwaitStops: a wait ends (false) when its stream's context is done or
// the group drains, also inside the precise-sleep window, and a wait due
// in the past still checks them.
func TestAwaitStops(t *testing.T) {
	for _, ahead := range []time.Duration{-time.Millisecond, fineWindow / 2, time.Hour} {
		t.Run(fmt.Sprintf("done/ahead=%v", ahead), func(t *testing.T) {
			led := ledger.New(time.Now())
			g := NewGroup(led)
			timer := time.NewTimer(time.Hour)
			defer timer.Stop()
			done := make(chan struct{})
			close(done)
			if _, ok := g.await(led.Now()+ahead, 0, timer, done); ok {
				t.Error("await went on after done")
			}
		})
		t.Run(fmt.Sprintf("drain/ahead=%v", ahead), func(t *testing.T) {
			led := ledger.New(time.Now())
			g := NewGroup(led)
			timer := time.NewTimer(time.Hour)
			defer timer.Stop()
			g.Drain(context.Background(), 0)
			if _, ok := g.await(led.Now()+ahead, 0, timer, nil); ok {
				t.Error("await went on after the drain")
			}
		})
	}
}

type arrivalsFunc func() (time.Duration, bool)

func (f arrivalsFunc) Next() (time.Duration, bool) { return f() }
