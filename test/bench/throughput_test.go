package bench

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/dispatch"
	"github.com/llmprobe/llmprobe/internal/ledger"
	"github.com/llmprobe/llmprobe/internal/protocol"
	"github.com/llmprobe/llmprobe/internal/schedule"
	"github.com/llmprobe/llmprobe/internal/stats"
	"github.com/llmprobe/llmprobe/internal/testutil"
)

// startSimProcess builds llmprobe and runs `llmprobe sim` as a child process
// with a fast, fixed service (1 ms prefill, 8 tokens at 0.1 ms) and ample
// slots. A process, not testutil.StartSim: the benchmark reads the
// simulator's CPU time by pid and may renice it.
func startSimProcess(b *testing.B) (string, int) {
	b.Helper()
	return startSim(b, buildLLMProbe(b), "--ttft", "1ms", "--token-time", "100us", "--output-tokens", "8")
}

var llmprobe testutil.Binary

// buildLLMProbe builds the llmprobe binary, once per test process.
func buildLLMProbe(b *testing.B) string { return llmprobe.Path(b) }

func TestMain(m *testing.M) { os.Exit(llmprobe.Main(m)) }

// startSim runs `bin sim` on a free loopback port with no slot or
// admission limit and the service flags given, until the benchmark ends;
// it returns the base URL and the simulator's pid.
func startSim(b testing.TB, bin string, service ...string) (string, int) {
	b.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	args := append([]string{bin, "sim", "--listen", addr, "--slots", "100000", "--admission", "100000"}, service...)
	// LLMPROBE_BENCH_SIM_NICE runs the simulator at that nice level, so
	// that when the two processes compete for the cores the generator is
	// served first (closer to a target on another host).
	if n := os.Getenv("LLMPROBE_BENCH_SIM_NICE"); n != "" {
		if _, err := strconv.Atoi(n); err != nil {
			b.Fatalf("LLMPROBE_BENCH_SIM_NICE: %q is not an integer", n)
		}
		args = append([]string{"nice", "-n", n}, args...)
	}
	cmd := exec.Command(args[0], args[1:]...)
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
			return "http://" + addr + "/v1", cmd.Process.Pid
		}
		time.Sleep(50 * time.Millisecond)
	}
	b.Fatal("simulator did not start")
	return "", 0
}

// procCPU is the CPU time (user+system) process pid used so far, from
// /proc (Linux); false where it cannot be read.
func procCPU(pid int) (time.Duration, bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, false
	}
	// Fields after the command name (which may hold spaces) start at ") ".
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, false
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0, false
	}
	ut, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, false
	}
	return time.Duration(ut+st) * time.Second / clockTicks, true
}

// clockTicks is USER_HZ, the unit of /proc/<pid>/stat times (100 on Linux).
const clockTicks = 100

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkThroughput drives the simulator open loop at rising Poisson
// rates (LLMPROBE_BENCH_RATES, default 250…4000 req/s) for a fixed window
// each (LLMPROBE_BENCH_WINDOW, default 5s) and reports achieved req/s,
// dispatch-lag p50/p99 (ms), the generator's CPU µs per request and, for
// context, the simulator's (it shares the machine).
func BenchmarkThroughput(b *testing.B) {
	base, simPID := startSimProcess(b)
	window := 5 * time.Second
	if v := os.Getenv("LLMPROBE_BENCH_WINDOW"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			b.Fatalf("LLMPROBE_BENCH_WINDOW: %q is not a positive duration", v)
		}
		window = d
	}
	client, err := protocol.NewClient(protocol.ClientOptions{NoProxy: true, Timeouts: benchTimeouts()})
	if err != nil {
		b.Fatal(err)
	}
	defer client.CloseIdleConnections()
	target := protocol.Target{Base: base, Adapter: protocol.OpenAIChat{}}
	params := protocol.Params{Model: "bench", MaxTokens: 8, Messages: []protocol.Message{{Role: "user", Content: "benchmark prompt"}}}
	for _, rate := range envFloats(b, "LLMPROBE_BENCH_RATES", []float64{250, 500, 1000, 2000, 3000, 4000}) {
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
				sim0, simOK := procCPU(simPID)
				start := led.Now()
				if err := g.Open(context.Background(), dispatch.OpenConfig{Arrivals: seq, Start: start, Window: window, Exec: exec,
					Meta: func(time.Duration) ledger.Meta { return ledger.Meta{Traffic: ledger.TrafficProbe, Target: "bench"} }}); err != nil {
					b.Fatal(err)
				}
				g.Drain(context.Background(), 10*time.Second)
				cpu := cpuTime() - cpu0
				sim1, simOK1 := procCPU(simPID)
				mu.Lock()
				s := stats.Summarize(stats.Config{Mode: ledger.ModeOpen, RequestedRate: rate, Start: start, Window: window}, recs)
				mu.Unlock()
				b.ReportMetric(s.AchievedRate, "achieved_rps")
				b.ReportMetric(float64(s.DispatchLag.P50)/1e6, "lag_p50_ms")
				b.ReportMetric(float64(s.DispatchLag.P99)/1e6, "lag_p99_ms")
				b.ReportMetric(float64(cpu.Microseconds())/float64(max(1, s.Dispatched)), "cpu_us/req")
				b.ReportMetric(float64(s.Completed)/float64(max(1, s.Planned)), "ok_fraction")
				if simOK && simOK1 {
					b.ReportMetric(float64((sim1-sim0).Microseconds())/float64(max(1, s.Dispatched)), "sim_cpu_us/req")
				}
			}
		})
	}
}

// benchTimeouts: every bound a production target sets (each arms a timer
// per request), unless LLMPROBE_BENCH_TIMEOUTS=total asks for the total
// bound alone.
func benchTimeouts() protocol.Timeouts {
	if os.Getenv("LLMPROBE_BENCH_TIMEOUTS") == "total" {
		return protocol.Timeouts{Total: 10 * time.Second}
	}
	return protocol.Timeouts{Connect: 5 * time.Second, Headers: 5 * time.Second, FirstContent: 5 * time.Second, Idle: 5 * time.Second, Total: 10 * time.Second}
}
