package bench

import (
	"math/rand/v2"
	"runtime"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/ledger"
	"github.com/llmprobe/llmprobe/internal/stats"
	"github.com/llmprobe/llmprobe/internal/statuspage"
)

// BenchmarkStatusMemory measures what the status page keeps per target once
// its 60 one-minute windows are full, time-compressed: each target's
// statuspage.Memory is fed an hour of records (2 classes, baseline
// LLMPROBE_BENCH_RATE req/s, default 0.2, split evenly; TTFT 100–400 ms,
// 32 chunks 15–45 ms apart) with the record's finish time as its clock, in
// a few seconds. It reports the live heap per target after a collection
// (heap-B/target), the figure docs/scale.md adds to a live run's resident
// set to reach a full hour.
func BenchmarkStatusMemory(b *testing.B) {
	rate := envFloat(b, "LLMPROBE_BENCH_RATE", 0.2)
	targets := envInts(b, "LLMPROBE_BENCH_TARGETS", []int{100})[0]
	gates := stats.Gates{TTFT: time.Second}
	for range b.N {
		before := liveHeap()
		mems := make([]*statuspage.Memory, targets)
		for i := range mems {
			mems[i] = statuspage.NewMemory()
		}
		feedHour(mems, rate, gates)
		after := liveHeap()
		b.ReportMetric(float64(after-before)/float64(targets), "heap-B/target")
		runtime.KeepAlive(mems)
	}
}

// feedHour feeds each memory an hour of synthetic baseline records at
// rate (req/s, over two classes), stamped with their own finish time.
func feedHour(mems []*statuspage.Memory, rate float64, g stats.Gates) {
	rng := rand.New(rand.NewPCG(1, 2))
	start := time.Date(2026, 12, 4, 0, 0, 0, 0, time.UTC)
	n := int(rate * 3600)
	every := time.Duration(float64(time.Second) / rate)
	for i, m := range mems {
		for k := range n {
			planned := time.Duration(k)*every + time.Duration(i)*137*time.Millisecond
			ttft := 100*time.Millisecond + time.Duration(rng.Int64N(int64(300*time.Millisecond)))
			gaps := make([]time.Duration, 32)
			end := planned + ttft
			for j := range gaps {
				gaps[j] = 15*time.Millisecond + time.Duration(rng.Int64N(int64(30*time.Millisecond)))
				end += gaps[j]
			}
			rec := &ledger.Record{ID: uint64(k), Target: "t", Class: []string{"chat", "long"}[k%2], Traffic: ledger.TrafficBaseline,
				Planned: planned, Dispatched: planned + time.Millisecond, FirstContent: planned + ttft, LastContent: end, End: end,
				ContentEvents: 33, ChunkGaps: gaps, Outcome: ledger.OK, Reason: ledger.ReasonStop}
			m.Record(start.Add(end), rec, g)
		}
	}
}

// liveHeap is the live heap after two collections.
func liveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// BenchmarkStatusJudge measures what judging one target costs once its
// hour of windows is full (feedHour, as BenchmarkStatusMemory): the daemon
// judges every target every second (statuspage.Memory.Judge, for the
// state its card shows and its log line), so at 1,000 targets a
// second of the prober's time holds 1,000 of these.
func BenchmarkStatusJudge(b *testing.B) {
	rate := envFloat(b, "LLMPROBE_BENCH_RATE", 0.2)
	m := statuspage.NewMemory()
	feedHour([]*statuspage.Memory{m}, rate, stats.Gates{TTFT: time.Second})
	now := time.Date(2026, 12, 4, 0, 59, 59, 0, time.UTC)
	if st, classes := m.Judge(now); len(classes) != 2 {
		b.Fatalf("judged %d classes (state %s), want 2", len(classes), st)
	}
	b.ReportAllocs()
	for b.Loop() {
		m.Judge(now)
	}
}
