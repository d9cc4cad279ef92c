package bench

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/ledger"
)

// BenchmarkRingMemory measures what the /debug/requests ring
// (ledger.Ring, as the daemon makes it: the last ledger.debug_keep = 200
// records and the last 1,000 failures of each target) keeps for
// LLMPROBE_BENCH_TARGETS targets (the first count; default 1,000),
// time-compressed: each target is fed the records of a baseline of
// LLMPROBE_BENCH_RATE req/s (default 0.2; 16-token streams as
// BenchmarkTargets asks of the simulator, 1 % failures), in order, for
// each of LLMPROBE_BENCH_RING_MINUTES (default 1,10,60: the first record,
// a ten-minute run, an hour), and reports the live heap after a
// collection, per target and in all (heap-MB@Nm), at each.
//
//	go test -run '^$' -bench RingMemory -benchtime 1x ./test/bench/
func BenchmarkRingMemory(b *testing.B) {
	targets := envInts(b, "LLMPROBE_BENCH_TARGETS", []int{1000})[0]
	rate := envFloat(b, "LLMPROBE_BENCH_RATE", 0.2)
	minutes := envInts(b, "LLMPROBE_BENCH_RING_MINUTES", []int{1, 10, 60})
	const keep = 200 // the daemon's default ledger.debug_keep
	for range b.N {
		before := liveHeap()
		ring := ledger.NewRing(keep, keep*5)
		rng := rand.New(rand.NewPCG(1, 2))
		every := time.Duration(float64(time.Second) / rate)
		fed := 0
		for _, m := range minutes {
			n := int(rate * 60 * float64(m))
			for k := fed; k < n; k++ {
				for t := range targets {
					ring.Record(ringRecord(rng, fmt.Sprintf("t%04d", t), uint64(k), time.Duration(k)*every))
				}
			}
			fed = max(fed, n)
			heap := liveHeap() - before
			b.ReportMetric(float64(heap)/float64(targets), fmt.Sprintf("heap-B/target@%dm", m))
			b.ReportMetric(float64(heap)/(1<<20), fmt.Sprintf("heap-MB@%dm", m))
		}
		runtime.KeepAlive(ring)
	}
}

// ringRecord is one finished baseline record of a 16-token stream (15
// chunk gaps), a failure (timeout) one time in a hundred.
func ringRecord(rng *rand.Rand, target string, id uint64, planned time.Duration) *ledger.Record {
	ttft := 50*time.Millisecond + time.Duration(rng.Int64N(int64(100*time.Millisecond)))
	gaps := make([]time.Duration, 15)
	end := planned + ttft
	for j := range gaps {
		gaps[j] = 5 * time.Millisecond
		end += gaps[j]
	}
	r := &ledger.Record{ID: id, Target: target, Class: []string{"chat", "long"}[id%2], Traffic: ledger.TrafficBaseline, API: "openai-chat",
		Planned: planned, Dispatched: planned + time.Millisecond, FirstContent: planned + ttft, LastContent: end, End: end,
		ContentEvents: 16, ChunkGaps: gaps, Usage: ledger.Usage{Known: true, Prompt: 64, Completion: 16}, Model: "bench",
		Outcome: ledger.OK, Reason: ledger.ReasonStop, FinishReason: "length"}
	if rng.IntN(100) == 0 {
		r.Outcome, r.Reason, r.Error = ledger.Timeout, ledger.ReasonTotal, "total timeout"
	}
	return r
}
