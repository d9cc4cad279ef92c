package bench

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/dispatch"
	"github.com/llmprobe/llmprobe/internal/ledger"
	"github.com/llmprobe/llmprobe/internal/protocol"
	"github.com/llmprobe/llmprobe/internal/schedule"
	"github.com/llmprobe/llmprobe/internal/stats"
)

// memSample is the generator's memory at one instant, after a collection.
type memSample struct {
	heap, stack uint64 // live heap (HeapAlloc after GC), goroutine stacks (StackInuse)
	rss         uint64 // resident set (VmRSS), what a container's memory limit counts
	inFlight    int
}

func sampleMem(g *dispatch.Group) memSample {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return memSample{heap: m.HeapAlloc, stack: m.StackInuse, rss: rss(), inFlight: g.InFlight()}
}

// rss is this process's resident set in bytes (/proc/self/status; 0 where
// it cannot be read).
func rss() uint64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range bytes.Split(b, []byte("\n")) {
		if f := strings.Fields(string(line)); len(f) >= 2 && f[0] == "VmRSS:" {
			kb, _ := strconv.ParseUint(f[1], 10, 64)
			return kb << 10
		}
	}
	return 0
}

// BenchmarkStreamCost measures what one streamed request costs the
// generator as its stream grows longer: for each output length L
// (LLMPROBE_BENCH_LENGTHS, default 16,64,256,1024 tokens, one token a
// chunk), a simulator whose streams all last LLMPROBE_BENCH_STREAM
// (default 2s: L tokens at 2s/L each, after a 1 ms prefill) is driven open
// loop at LLMPROBE_BENCH_RATE (default 50 req/s, Poisson) for
// LLMPROBE_BENCH_WINDOW (default 10s), so about rate × stream duration
// requests are in flight at any time whatever L. It reports the
// generator's CPU per request and per chunk, and its memory per stream in
// flight: the live heap and goroutine stacks (after a collection, at 40 %
// and 70 % of the window, less the same figures before the window, divided
// by the requests then in flight), and the resident set. Each in-flight
// request holds its connection, its goroutines, its stream buffers and its
// record, whose per-chunk gaps and token counts grow with L (up to
// protocol.MaxChunkGaps chunks).
func BenchmarkStreamCost(b *testing.B) {
	bin := buildLLMProbe(b)
	rate := envFloat(b, "LLMPROBE_BENCH_RATE", 50)
	window := envDuration(b, "LLMPROBE_BENCH_WINDOW", 10*time.Second)
	stream := envDuration(b, "LLMPROBE_BENCH_STREAM", 2*time.Second)
	for _, n := range envInts(b, "LLMPROBE_BENCH_LENGTHS", []int{16, 64, 256, 1024}) {
		b.Run(fmt.Sprintf("tokens=%d", n), func(b *testing.B) {
			tokenTime := stream / time.Duration(n)
			base, simPID := startSim(b, bin, "--ttft", "1ms", "--token-time", tokenTime.String(), "--output-tokens", strconv.Itoa(n))
			streamCost(b, base, simPID, protocol.ClientOptions{}, n, rate, window, stream)
		})
	}
}

// streamCost runs one measurement of BenchmarkStreamCost's kind against the
// simulator at base (pid simPID) through a client with opts' TLS and HTTP/2
// settings: n-token streams of duration stream, Poisson at rate for window.
func streamCost(b *testing.B, base string, simPID int, opts protocol.ClientOptions, n int, rate float64, window, stream time.Duration) {
	b.Helper()
	client, err := protocol.NewClient(protocol.ClientOptions{NoProxy: true, TLS: opts.TLS, DisableHTTP2: opts.DisableHTTP2, Timeouts: protocol.Timeouts{
		Connect: 5 * time.Second, Headers: 5 * time.Second, FirstContent: 5 * time.Second, Idle: 5 * time.Second, Total: stream + 20*time.Second}})
	if err != nil {
		b.Fatal(err)
	}
	defer client.CloseIdleConnections()
	target := protocol.Target{Base: base, Adapter: protocol.OpenAIChat{}}
	params := protocol.Params{Model: "bench", MaxTokens: n, Messages: []protocol.Message{{Role: "user", Content: "benchmark prompt"}}}
	for range b.N {
		client.CloseIdleConnections()
		var mu sync.Mutex
		// Preallocated before the baseline sample, so the records kept
		// for the summary are not counted as the streams' memory.
		recs := make([]ledger.Record, 0, int(rate*window.Seconds()*1.5)+1000)
		var chunks, h2 atomic.Int64
		led := ledger.New(time.Now(), ledger.SinkFunc(func(r *ledger.Record) {
			chunks.Add(int64(r.ContentEvents))
			if r.Conn != nil && r.Conn.HTTPVersion == "2" {
				h2.Add(1)
			}
			r.ChunkGaps, r.ChunkTokens = nil, nil // what Summarize needs is kept; the record's chunk slices are freed as the daemon's sinks would
			mu.Lock()
			recs = append(recs, *r)
			mu.Unlock()
		}))
		g := dispatch.NewGroup(led)
		seq, err := schedule.New(schedule.Spec{Seed: 1}, schedule.Step{Rate: rate})
		if err != nil {
			b.Fatal(err)
		}
		exec := client.Exec(target, func(*ledger.Record) protocol.Params { return params }, led.Now)
		before := sampleMem(g)
		var samples []memSample
		stop := make(chan struct{})
		sampled := make(chan struct{})
		wall := time.Now()
		go func() {
			defer close(sampled)
			for _, at := range []float64{0.4, 0.7} {
				select {
				case <-time.After(time.Until(wall.Add(time.Duration(at * float64(window))))):
				case <-stop:
					return
				}
				s := sampleMem(g)
				mu.Lock()
				samples = append(samples, s)
				mu.Unlock()
			}
		}()
		cpu0 := cpuTime()
		sim0, simOK := procCPU(simPID)
		start := led.Now()
		if err := g.Open(context.Background(), dispatch.OpenConfig{Arrivals: seq, Start: start, Window: window, Exec: exec,
			Meta: func(time.Duration) ledger.Meta { return ledger.Meta{Traffic: ledger.TrafficProbe, Target: "bench"} }}); err != nil {
			b.Fatal(err)
		}
		close(stop)
		<-sampled
		g.Drain(context.Background(), stream+20*time.Second)
		cpu := cpuTime() - cpu0
		sim1, simOK1 := procCPU(simPID)
		mu.Lock()
		s := stats.Summarize(stats.Config{Mode: ledger.ModeOpen, RequestedRate: rate, Start: start, Window: window}, recs)
		ms := append([]memSample(nil), samples...)
		mu.Unlock()
		done := float64(max(1, s.Dispatched))
		b.ReportMetric(s.AchievedRate, "achieved_rps")
		b.ReportMetric(float64(s.DispatchLag.P99)/1e6, "lag_p99_ms")
		b.ReportMetric(float64(cpu.Microseconds())/done, "cpu_us/req")
		b.ReportMetric(float64(cpu.Nanoseconds())/1e3/float64(max(1, chunks.Load())), "cpu_us/chunk")
		b.ReportMetric(float64(s.Completed)/float64(max(1, s.Planned)), "ok_fraction")
		b.ReportMetric(float64(h2.Load())/float64(max(1, s.Planned)), "http2_fraction")
		if simOK && simOK1 {
			b.ReportMetric(float64((sim1-sim0).Microseconds())/done, "sim_cpu_us/req")
		}
		var heap, stack, resident, flights float64
		for _, m := range ms {
			if m.inFlight <= 0 {
				continue
			}
			f := float64(m.inFlight)
			heap += (float64(m.heap) - float64(before.heap)) / f
			stack += (float64(m.stack) - float64(before.stack)) / f
			resident = max(resident, float64(m.rss))
			flights += f
		}
		if k := float64(len(ms)); k > 0 && flights > 0 {
			b.ReportMetric(flights/k, "in_flight")
			b.ReportMetric(heap/k/1024, "heap_kb/stream")
			b.ReportMetric(stack/k/1024, "stack_kb/stream")
			b.ReportMetric(resident/(1<<20), "rss_mb")
		}
	}
}
