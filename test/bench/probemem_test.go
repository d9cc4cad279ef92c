package bench

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// BenchmarkProbeMemory measures the peak resident set (the kernel's
// maxrss of the process, what a container's memory limit meets) of a whole
// `llmprobe probe` run against a simulator in its own process on loopback,
// so the figure is the probe's alone:
//
//   - streams: LLMPROBE_BENCH_MEM_STREAMS (default 10,000) concurrent
//     streams of LLMPROBE_BENCH_MEM_STREAM (default 10s, 100 tokens), that
//     is arrivals at streams/stream-duration req/s for one stream duration,
//     so the last arrival finds about that many in flight (a --ledger file
//     is written, as a long run would);
//   - long: LLMPROBE_BENCH_MEM_RATE (default 200 req/s) for
//     LLMPROBE_BENCH_MEM_WINDOW (default 2m) of 1-second, 200-token
//     streams: how a probe's memory grows with the requests it has seen.
//
// LLMPROBE_BENCH_BIN runs a prebuilt binary instead of building this tree
// (to measure an older version with this same harness). Run with
//
//	go test -run '^$' -bench ProbeMemory -benchtime 1x -timeout 30m ./test/bench/
func BenchmarkProbeMemory(b *testing.B) {
	bin := os.Getenv("LLMPROBE_BENCH_BIN")
	if bin == "" {
		bin = buildLLMProbe(b)
	}
	streams := envFloat(b, "LLMPROBE_BENCH_MEM_STREAMS", 10000)
	stream := envDuration(b, "LLMPROBE_BENCH_MEM_STREAM", 10*time.Second)
	rate := envFloat(b, "LLMPROBE_BENCH_MEM_RATE", 200)
	window := envDuration(b, "LLMPROBE_BENCH_MEM_WINDOW", 2*time.Minute)
	cases := []struct {
		name           string
		rate           float64
		window, stream time.Duration
		tokens         int
	}{
		{"streams", streams / stream.Seconds(), stream, stream, 100},
		{"long", rate, window, time.Second, 200},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			tokenTime := c.stream / time.Duration(c.tokens)
			base, _ := startSim(b, bin, "--ttft", "1ms", "--token-time", tokenTime.String(), "--output-tokens", strconv.Itoa(c.tokens))
			for range b.N {
				b.ReportMetric(loadAvg(), "load1_before")
				peak, rep := runProbe(b, bin, base, c.rate, c.window, c.stream, c.tokens)
				b.ReportMetric(float64(peak)/(1<<20), "peak_rss_MB")
				b.ReportMetric(float64(rep.Planned), "planned")
				b.ReportMetric(float64(rep.Completed), "completed")
				b.ReportMetric(rep.AchievedRPS, "achieved_rps")
				valid := 0.0
				if rep.Valid {
					valid = 1
				}
				b.ReportMetric(valid, "generator_valid")
				if !rep.Valid {
					b.Logf("generator invalid: %s", strings.Join(rep.InvalidReasons, "; "))
				}
			}
		})
	}
}

// probeReport is what the benchmark reads of `probe --json`.
type probeReport struct {
	Planned     int     `json:"planned"`
	Completed   int     `json:"completed"`
	AchievedRPS float64 `json:"achieved_rate"`
	// Valid is the generator's verdict: it kept its schedule (the
	// figures measure a probe that did its work, not one that fell behind).
	Valid          bool     `json:"valid"`
	InvalidReasons []string `json:"invalid_reasons"`
}

// runProbe runs one `bin probe` and returns its peak resident set in bytes
// and its report.
func runProbe(b *testing.B, bin, base string, rate float64, window, stream time.Duration, tokens int) (uint64, probeReport) {
	b.Helper()
	cmd := exec.Command(bin, "probe", "--url", base, "--json", "--rate", fmt.Sprint(rate), "--max-rate", fmt.Sprint(max(rate, 100)), "--duration", window.String(),
		"--max-tokens", strconv.Itoa(tokens), "--drain", (stream + 30*time.Second).String(),
		"--timeout-total", (stream + 60*time.Second).String(), "--timeout-first-content", "60s", "--timeout-headers", "60s",
		"--max-lag-p99", "10s", "--ledger", filepath.Join(b.TempDir(), "ledger.jsonl"))
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	if cmd.ProcessState == nil {
		b.Fatalf("probe: %v\n%s", err, errOut.Bytes())
	}
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) { // an exit code is a verdict, not a failure of the run
		b.Fatalf("probe: %v\n%s", err, errOut.Bytes())
	}
	var rep probeReport
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		b.Fatalf("probe output: %v\n%s\n%s", err, out.Bytes(), errOut.Bytes())
	}
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		b.Skip("no rusage on this system")
	}
	return uint64(ru.Maxrss) << 10, rep // Linux: kilobytes
}

// loadAvg is the host's one-minute load average (/proc/loadavg; 0 where it
// cannot be read): the figure to quote beside a peak, which a busy host
// moves (a starved collector lets the heap run past its goal).
func loadAvg() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0
	}
	v, _ := strconv.ParseFloat(f[0], 64)
	return v
}
