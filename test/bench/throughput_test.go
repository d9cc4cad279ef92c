package bench

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/dispatch"
	"github.com/llmprobe/llmprobe/internal/ledger"
	"github.com/llmprobe/llmprobe/internal/protocol"
	"github.com/llmprobe/llmprobe/internal/schedule"
	"github.com/llmprobe/llmprobe/internal/stats"
)

// startSim builds llmprobe and runs `llmprobe sim` as a child process with a
// fast, fixed service (1 ms prefill, 8 tokens at 0.1 ms) and ample slots.
func startSim(b *testing.B) string {
	b.Helper()
	dir := b.TempDir()
	bin := filepath.Join(dir, "llmprobe")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/llmprobe/llmprobe/cmd/llmprobe").CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	cmd := exec.Command(bin, "sim", "--listen", addr, "--ttft", "1ms", "--token-time", "100us", "--output-tokens", "8",
		"--slots", "100000", "--admission", "100000")
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		_ = cmd.Wait()
	})
	for i := 0; i < 100; i++ {
		if resp, err := http.Get("http://" + addr + "/healthz"); err == nil {
			resp.Body.Close()
			return "http://" + addr + "/v1"
		}
		time.Sleep(50 * time.Millisecond)
	}
	b.Fatal("simulator did not start")
	return ""
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkThroughput drives the simulator open loop at rising Poisson
// rates for a fixed window each and reports achieved req/s, dispatch-lag
// p50/p99 (ms) and the generator's CPU µs per request.
func BenchmarkThroughput(b *testing.B) {
	base := startSim(b)
	window := 5 * time.Second
	if v := os.Getenv("LLMPROBE_BENCH_WINDOW"); v != "" {
		if d, err := time.ParseDuration(v); err == nil {
			window = d
		}
	}
	client, err := protocol.NewClient(protocol.ClientOptions{NoProxy: true, Timeouts: protocol.Timeouts{Total: 10 * time.Second}})
	if err != nil {
		b.Fatal(err)
	}
	defer client.CloseIdleConnections()
	target := protocol.Target{Base: base, Adapter: protocol.OpenAIChat{}}
	params := protocol.Params{Model: "bench", MaxTokens: 8, Messages: []protocol.Message{{Role: "user", Content: "benchmark prompt"}}}
	for _, rate := range []float64{250, 500, 1000, 2000, 3000} {
		b.Run(fmt.Sprintf("rate=%g", rate), func(b *testing.B) {
			for range b.N {
				var mu sync.Mutex
				var recs []ledger.Record
				led := ledger.New(time.Now(), ledger.SinkFunc(func(r *ledger.Record) {
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
				cpu0 := cpuTime()
				start := led.Now()
				if err := g.Open(context.Background(), dispatch.OpenConfig{Arrivals: seq, Start: start, Window: window, Exec: exec,
					Meta: func(time.Duration) ledger.Meta { return ledger.Meta{Traffic: ledger.TrafficProbe, Target: "bench"} }}); err != nil {
					b.Fatal(err)
				}
				g.Drain(context.Background(), 10*time.Second)
				cpu := cpuTime() - cpu0
				mu.Lock()
				s := stats.Summarize(stats.Config{Mode: ledger.ModeOpen, RequestedRate: rate, Start: start, Window: window}, recs)
				mu.Unlock()
				b.ReportMetric(s.AchievedRate, "achieved_rps")
				b.ReportMetric(float64(s.DispatchLag.P50)/1e6, "lag_p50_ms")
				b.ReportMetric(float64(s.DispatchLag.P99)/1e6, "lag_p99_ms")
				b.ReportMetric(float64(cpu.Microseconds())/float64(max(1, s.Dispatched)), "cpu_us/req")
				b.ReportMetric(float64(s.Completed)/float64(max(1, s.Planned)), "ok_fraction")
			}
		})
	}
}
