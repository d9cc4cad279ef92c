package bench

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"
)

// noDecompress is a client that neither asks for nor undoes a content
// encoding by itself: what a scrape carries on the wire is counted as
// sent.
var noDecompress = &http.Client{Transport: &http.Transport{DisableCompression: true}}

// scrapeEncoded reads addr's /metrics once in protobuf with the
// Accept-Encoding a scraper sends (accept), and returns the encoding the
// prober chose, the bytes on the wire and the time.
func scrapeEncoded(addr, accept string) (encoding string, wire int, took time.Duration, err error) {
	req, err := http.NewRequest(http.MethodGet, "http://"+addr+"/metrics", nil)
	if err != nil {
		return "", 0, 0, err
	}
	req.Header.Set("Accept", acceptProto)
	if accept != "" {
		req.Header.Set("Accept-Encoding", accept)
	}
	start := time.Now()
	resp, err := noDecompress.Do(req)
	if err != nil {
		return "", 0, 0, err
	}
	defer resp.Body.Close()
	n, err := io.Copy(io.Discard, resp.Body)
	return resp.Header.Get("Content-Encoding"), int(n), time.Since(start), err
}

// BenchmarkScrapeEncoding measures what a scrape of a many-target prober
// costs the prober in each encoding a scraper may ask for: `llmprobe run`
// with the first of LLMPROBE_BENCH_TARGETS targets (default 1000;
// BenchmarkTargets' configuration) against one simulator, warmed up for
// LLMPROBE_BENCH_WARMUP (default 70s), then five protobuf scrapes asking
// for nothing, for gzip (a Prometheus) and for "zstd,gzip" (one with
// its zstd-scrape feature on: the prober answers it in gzip, or in zstd
// from a build that links client_golang's promhttp/zstd and offers it). Per encoding: the bytes on the wire,
// the slowest wall-clock time and the prober's CPU a scrape, less its
// load's own over the same time (measured over the 10 s before).
func BenchmarkScrapeEncoding(b *testing.B) {
	n := envInts(b, "LLMPROBE_BENCH_TARGETS", []int{1000})[0]
	warmup := envDuration(b, "LLMPROBE_BENCH_WARMUP", 70*time.Second)
	bin := buildLLMProbe(b)
	prober := bin
	if v := os.Getenv("LLMPROBE_BENCH_BIN"); v != "" {
		prober = v
	}
	base, _ := startSim(b, bin, "--ttft", "lognormal:50ms,0.5", "--token-time", "5ms", "--output-tokens", "16")
	p := startProber(b, prober, scaleConfig(n, 0.2, base, ""), 2*time.Minute)
	time.Sleep(warmup)
	for range b.N {
		c0, _ := procCPU(p.pid)
		quiet := time.Now()
		time.Sleep(10 * time.Second)
		c1, _ := procCPU(p.pid)
		load := float64(c1-c0) / float64(time.Since(quiet)) // the prober's own share of a core
		var lines []string
		for _, accept := range []string{"", "gzip", "zstd,gzip"} {
			var wire int
			var slowest, cpu time.Duration
			var enc string
			for range 5 {
				before, _ := procCPU(p.pid)
				e, w, took, err := scrapeEncoded(p.addr, accept)
				after, _ := procCPU(p.pid)
				if err != nil {
					b.Fatal(err)
				}
				enc, wire, slowest = e, w, max(slowest, took)
				cpu += max(after-before-time.Duration(load*float64(took)), 0)
			}
			if enc == "" {
				enc = "identity"
			}
			lines = append(lines, fmt.Sprintf("Accept-Encoding %-11q → %-8s %6.2f MB on the wire, slowest %v, %v CPU a scrape",
				accept, enc, float64(wire)/1e6, slowest.Round(time.Millisecond), (cpu/5).Round(time.Millisecond)))
			b.ReportMetric((cpu / 5).Seconds(), "s-CPU/scrape-"+enc)
		}
		b.Logf("%d targets, the prober's load %.1f %% of a core, load average %.1f:\n%s", n, 100*load, loadAvg(), strings.Join(lines, "\n"))
	}
}
