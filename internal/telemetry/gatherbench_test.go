package telemetry

import (
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"

	"github.com/llmprobe/llmprobe/internal/ledger"
)

// BenchmarkGather1000Targets is one scrape of a recorder holding 1000
// targets of two classes, each with an hour's worth of distinct latencies
// recorded (and their exemplars): gathering and encoding in the delimited
// protobuf Prometheus negotiates for native histograms.
func BenchmarkGather1000Targets(b *testing.B) {
	r, err := New(Options{})
	if err != nil {
		b.Fatal(err)
	}
	id := uint64(0)
	for t := range 1000 {
		target := fmt.Sprintf("t%04d", t)
		for _, class := range []string{"chat", "long"} {
			r.InitSeries(target, class, ledger.TrafficBaseline)
			for k := range 40 {
				id++
				ttft := time.Duration(50+k*7) * time.Millisecond
				r.Record(&ledger.Record{ID: id, Target: target, Class: class, Traffic: ledger.TrafficBaseline, API: "openai-chat",
					Planned: ms, Dispatched: 2 * ms, FirstContent: ms + ttft, LastContent: 2*ms + ttft + 80*ms, End: 3*ms + ttft + 80*ms,
					ContentEvents: 5, ChunkGaps: []time.Duration{20 * ms, time.Duration(15+k) * ms, 25 * ms, 20 * ms},
					Outcome: ledger.OK, Reason: ledger.ReasonStop})
			}
		}
	}
	reg := r.Registry()
	b.ResetTimer()
	for range b.N {
		mfs, err := reg.Gather()
		if err != nil {
			b.Fatal(err)
		}
		enc := expfmt.NewEncoder(io.Discard, expfmt.NewFormat(expfmt.TypeProtoDelim))
		for _, mf := range mfs {
			if err := enc.Encode(mf); err != nil {
				b.Fatal(err)
			}
		}
	}
}
