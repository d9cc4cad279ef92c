package fleet

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/dispatch"
	"github.com/llmprobe/llmprobe/internal/ladder"
	"github.com/llmprobe/llmprobe/internal/ledger"
	"github.com/llmprobe/llmprobe/internal/quantile"
	"github.com/llmprobe/llmprobe/internal/stats"
	"github.com/llmprobe/llmprobe/internal/verdict"
)

// benchCoordinator is shard 0 of a fleet of n with one class, its peers
// never contacted: what the merge benchmark needs of a coordinator.
func benchCoordinator(b testing.TB, n int, rate float64) *Ladder {
	b.Helper()
	led := ledger.New(time.Now())
	g := dispatch.NewGroup(led)
	b.Cleanup(func() { g.Drain(context.Background(), time.Second) })
	id := Identity{0, n}
	cfg := ladder.Config{Target: "t", Classes: []ladder.Class{{Name: "chat", Weight: 1, Gates: stats.Gates{TTFT: 500 * time.Millisecond}}},
		Steps: id.Rates([]float64{rate}), StepDuration: time.Minute, Gap: MinGap, MaxRate: rate, GoodFractionTarget: 0.5, KneeFactor: 2,
		StopAt: ladder.StopAtTop, Settle: time.Second, Validity: verdict.ValidityConfig{MaxLagP99: 10 * time.Millisecond}}
	r, err := ladder.New(cfg, g, okExec(led))
	if err != nil {
		b.Fatal(err)
	}
	urls := make([]string, n)
	for i := range urls {
		urls[i] = fmt.Sprintf("http://127.0.0.1:%d", 1+i) // never asked
	}
	node, err := NewNode(NodeOptions{Identity: id, Peers: Peers{URLs: urls}})
	if err != nil {
		b.Fatal(err)
	}
	l, err := node.NewLadder(LadderOptions{Steps: []float64{rate}, Runner: r, LedgerNow: led.Now})
	if err != nil {
		b.Fatal(err)
	}
	return l
}

// benchReport is shard's report of step 1 with s requests (most ok, with
// random latencies; some rejected or timed out), as JSON.
func benchReport(b testing.TB, l *Ladder, shard, s int) []byte {
	b.Helper()
	id := l.n.id
	rate := id.Rate(l.cfg.Steps[0])
	cfg := stats.Config{Mode: ledger.ModeOpen, RequestedRate: rate, Window: l.cfg.StepDuration, Validity: l.cfg.Validity,
		ClassGates: map[string]stats.Gates{"chat": l.cfg.Classes[0].Gates}}
	all, class := stats.NewAccumulator(cfg), stats.NewAccumulator(cfg)
	rng := rand.New(rand.NewPCG(uint64(shard), 1))
	ms := time.Millisecond
	for i := range s {
		p := time.Duration(i) * time.Duration(float64(time.Second)/rate)
		r := ledger.Record{Mode: ledger.ModeOpen, Class: "chat", Planned: p}
		switch x := rng.IntN(50); {
		case x == 0:
			r.Dispatched, r.End, r.Outcome, r.Reason = p+ms, p+40*ms, ledger.Rejected, ledger.ReasonStatus429
		case x == 1:
			r.Dispatched, r.End, r.Outcome, r.Reason = p+ms, p+900*ms, ledger.Timeout, ledger.ReasonFirstContent
		case x == 2:
			r.Dispatched, r.End, r.Outcome, r.Reason = p+ms, p+60*ms, ledger.Rejected, ledger.ReasonStatus503
		default:
			lag := time.Duration(rng.IntN(3000)) * time.Microsecond
			ttft := time.Duration(20_000+rng.IntN(400_000)) * time.Microsecond
			e2e := ttft + time.Duration(rng.IntN(800_000))*time.Microsecond
			r.Dispatched, r.Headers, r.FirstContent, r.LastContent, r.End = p+lag, p+lag+ms, p+ttft, p+e2e-ms, p+e2e
			r.Outcome, r.Reason, r.ContentEvents = ledger.OK, ledger.ReasonStop, 8
		}
		all.Add(&r)
		class.Add(&r)
	}
	sum := all.Summary()
	rep := StepReport{Ladder: "t-1", Target: "t", Step: 1, Shard: shard, Shards: id.Shards, Fingerprint: l.print, Rate: rate,
		Valid: sum.Validity.Valid, Causes: sum.Validity.Causes, All: all.ShardSummary(true), Classes: map[string]stats.ShardSummary{"chat": class.ShardSummary(true)}}
	out, err := json.Marshal(rep)
	if err != nil {
		b.Fatal(err)
	}
	return out
}

// BenchmarkCoordinatorMerge is what the coordinator spends on one fleet
// step once the shards' answers are in: decoding n shards' reports of s
// requests each (every sample of TTFT, e2e and dispatch lag while a
// shard's step holds at most quantile.ExportExact; log buckets past it),
// checking each, and merging and judging them (every class together and
// each class). It reports the bytes of one shard's report, the time per
// step and the part of it spent decoding and checking the reports; the
// network transfer of those bytes is not in it.
func BenchmarkCoordinatorMerge(b *testing.B) {
	for _, n := range []int{3, 10, 30} {
		for _, s := range []int{1_000, 10_000, quantile.ExportExact, 4 * quantile.ExportExact} {
			b.Run(fmt.Sprintf("shards=%d/requests=%d", n, s), func(b *testing.B) {
				l := benchCoordinator(b, n, float64(n*s)/60)
				reports := make([][]byte, n)
				size := 0
				for i := range n {
					reports[i] = benchReport(b, l, i, s)
					size += len(reports[i])
				}
				b.SetBytes(int64(size))
				var decode time.Duration
				b.ResetTimer()
				for range b.N {
					g := gathered{reports: map[int]*StepReport{}, missing: map[int]string{}}
					t0 := time.Now()
					for i, raw := range reports {
						var r StepReport
						if err := json.Unmarshal(raw, &r); err != nil {
							b.Fatal(err)
						}
						if err := l.checkReport(&r, "t-1", 1, i); err != nil {
							b.Fatal(err)
						}
						g.reports[i] = &r
					}
					decode += time.Since(t0)
					step, _, _ := l.merge(1, g)
					if step.Summary.Planned != n*s || !step.Summary.Validity.Valid {
						b.Fatalf("merged step: planned %d (want %d), valid %v %v", step.Summary.Planned, n*s, step.Summary.Validity.Valid, step.Summary.Validity.Reasons())
					}
				}
				b.ReportMetric(float64(size)/float64(n)/(1<<20), "MiB/report")
				b.ReportMetric(float64(b.Elapsed().Microseconds())/1e3/float64(b.N), "ms/step")
				b.ReportMetric(float64(decode.Microseconds())/1e3/float64(b.N), "decode_ms/step")
			})
		}
	}
}
