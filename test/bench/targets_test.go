package bench

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
)

// scaleConfig is n targets, each of two classes at a baseline of rate
// req/s (split evenly), ladders off, all at the simulator base; a
// non-empty idle sets their idle_conn_timeout (LLMPROBE_BENCH_IDLE_CONN:
// at 0.2 req/s a target's requests come about 5 s apart, past the default
// 4 s, so most open a connection).
func scaleConfig(n int, rate float64, base, idle string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "admin: {listen: \"ADMIN\"}\nlog: {level: warn, format: json}\ndrain: {timeout: 5s}\nlimits: {max_rate: %g}\ntargets:\n", max(100, 2*rate))
	idleKey := ""
	if idle != "" {
		idleKey = "\n    idle_conn_timeout: " + idle
	}
	for t := range n {
		fmt.Fprintf(&b, `  - name: t%04d
    url: %s
    api: openai-chat
    model: bench
    max_in_flight: 1000%s
    baseline: {rate: %g}
    classes:
      - {name: chat, input: {dist: fixed, value: 64}, output: {dist: fixed, value: 16}, gates: {ttft: 1s}}
      - {name: long, input: {dist: fixed, value: 512}, output: {dist: fixed, value: 16}, gates: {ttft: 2s}}
`, t, base, idleKey, rate)
	}
	return b.String()
}

// scaleRun is one measured configuration.
type scaleRun struct {
	targets                 int
	rate                    float64 // per target, req/s
	rss, hwm                uint64  // bytes at the end of the window, and the peak
	cpu                     time.Duration
	window                  time.Duration
	requests                float64 // finished in the window
	series, seriesPerTarget int     // llmprobe_* series with a target label
	textBytes, protoBytes   int
	textSamples             int           // sample lines of the text exposition, the whole process
	textScrape, protoScrape time.Duration // slowest of three
	scrapeCPU               time.Duration // the prober's CPU per scrape (mean of the six)
	valid                   int           // targets whose generator was valid at the end
	causes                  string        // invalid causes, counted over targets
	load                    float64
}

// BenchmarkTargets runs `llmprobe run` with LLMPROBE_BENCH_TARGETS targets
// (default 10,100,1000; each two classes at a baseline of
// LLMPROBE_BENCH_RATE req/s, default 0.2; ladders off) against one
// simulator, and then one target alone at the same total rate (the busy
// reference). Each run warms up for LLMPROBE_BENCH_WARMUP (default 70s:
// the generator's one-minute window is full), then is measured over
// LLMPROBE_BENCH_WINDOW (default 2m): resident set (end and peak), CPU per
// target-hour and per request, series per target, /metrics bytes and the
// slowest of three scrapes (text and protobuf), and the generator's
// verdict. LLMPROBE_BENCH_BIN runs another llmprobe build as the prober
// (the simulator stays this tree's), for a before/after;
// LLMPROBE_BENCH_BUSY=0 leaves out the busy reference;
// LLMPROBE_BENCH_SCRAPE_EVERY scrapes during the window as a Prometheus
// would, with a line every LLMPROBE_BENCH_SAMPLE_EVERY (watch);
// LLMPROBE_BENCH_IDLE_CONN sets the targets' idle_conn_timeout. With LLMPROBE_PPROF=1
// each configuration also logs the prober's live heap after a collection
// and saves its heap profile (heapProfile). The status page's hour of windows is measured time-compressed
// by BenchmarkStatusMemory; docs/scale.md adds the two.
//
// Minutes per configuration: run it by name only,
//
//	go test -run '^$' -bench Targets -benchtime 1x -timeout 60m ./test/bench/
func BenchmarkTargets(b *testing.B) {
	counts := envInts(b, "LLMPROBE_BENCH_TARGETS", []int{10, 100, 1000})
	rate := envFloat(b, "LLMPROBE_BENCH_RATE", 0.2)
	warmup := envDuration(b, "LLMPROBE_BENCH_WARMUP", 70*time.Second)
	window := envDuration(b, "LLMPROBE_BENCH_WINDOW", 2*time.Minute)
	bin := buildLLMProbe(b)
	prober := bin
	if v := os.Getenv("LLMPROBE_BENCH_BIN"); v != "" { // another build to compare (before/after)
		prober = v
	}
	base, _ := startSim(b, bin, "--ttft", "lognormal:50ms,0.5", "--token-time", "5ms", "--output-tokens", "16")
	for range b.N {
		var runs []scaleRun
		for _, n := range counts {
			runs = append(runs, measureTargets(b, prober, base, n, rate, warmup, window))
		}
		top := counts[len(counts)-1]
		all := runs
		var busy scaleRun
		if os.Getenv("LLMPROBE_BENCH_BUSY") != "0" {
			busy = measureTargets(b, prober, base, 1, rate*float64(top), warmup, window)
			all = append(all, busy)
		}
		for _, r := range all {
			b.Logf("%5d targets × %6.1f req/s: RSS %4d MB (peak %4d), CPU %6.1f s/target-hour, %5.2f ms/request, %d series (%d/target), "+
				"scrape text %6.2f MB (%d samples) in %v, protobuf %6.2f MB in %v, %v CPU a scrape, generator valid %d/%d %s, load %.1f",
				r.targets, r.rate, r.rss>>20, r.hwm>>20, r.cpu.Seconds()/float64(r.targets)/r.window.Hours(),
				float64(r.cpu.Microseconds())/1e3/max(r.requests, 1), r.series, r.seriesPerTarget,
				float64(r.textBytes)/1e6, r.textSamples, r.textScrape.Round(time.Millisecond), float64(r.protoBytes)/1e6, r.protoScrape.Round(time.Millisecond), r.scrapeCPU.Round(time.Millisecond),
				r.valid, r.targets, r.causes, r.load)
		}
		last := runs[len(runs)-1]
		b.ReportMetric(float64(last.rss>>20), "MB-RSS")
		b.ReportMetric(float64(last.cpu.Microseconds())/1e3/max(last.requests, 1), "ms/req")
		if busy.targets > 0 {
			b.ReportMetric(float64(busy.cpu.Microseconds())/1e3/max(busy.requests, 1), "busy-ms/req")
		}
		b.ReportMetric(last.protoScrape.Seconds(), "s/scrape")
	}
}

// measureTargets runs one configuration: n targets at rate each.
func measureTargets(b *testing.B, bin, base string, n int, rate float64, warmup, window time.Duration) scaleRun {
	b.Helper()
	p := startProber(b, bin, scaleConfig(n, rate, base, os.Getenv("LLMPROBE_BENCH_IDLE_CONN")), 2*time.Minute)
	time.Sleep(warmup)
	first := mustScrape(b, p.addr, acceptProto)
	cpu0, _ := procCPU(p.pid)
	start := time.Now()
	watch(b, p, n, window, envDuration(b, "LLMPROBE_BENCH_SCRAPE_EVERY", 0), envDuration(b, "LLMPROBE_BENCH_SAMPLE_EVERY", time.Minute))
	cpu1, _ := procCPU(p.pid)
	run := scaleRun{targets: n, rate: rate, cpu: cpu1 - cpu0, window: time.Since(start), load: loadAvg(),
		rss: procStatus(p.pid, "VmRSS"), hwm: procStatus(p.pid, "VmHWM")}
	heapProfile(b, p.addr, n)
	var last scrapeResult
	before, _ := procCPU(p.pid)
	scrapesStart := time.Now()
	for range 3 {
		t := mustScrape(b, p.addr, acceptText)
		run.textBytes, run.textSamples, run.textScrape = t.bytes, t.samples, max(run.textScrape, t.took)
		last = mustScrape(b, p.addr, acceptProto)
		run.protoBytes, run.protoScrape = last.bytes, max(run.protoScrape, last.took)
	}
	// The CPU the six scrapes took, less the load's own over the same time.
	after, _ := procCPU(p.pid)
	during := time.Since(scrapesStart)
	run.scrapeCPU = max(after-before-time.Duration(float64(run.cpu)*float64(during)/float64(run.window)), 0) / 6
	run.requests = counterSum(last.families, "llmprobe_requests_total", nil) - counterSum(first.families, "llmprobe_requests_total", nil)
	per, _ := seriesPerTarget(last.families, false)
	for _, c := range per {
		run.series += c
	}
	run.seriesPerTarget = run.series / max(len(per), 1)
	for _, v := range gaugeByTarget(last.families, "llmprobe_generator_valid") {
		if v == 1 {
			run.valid++
		}
	}
	run.causes = invalidCauses(last.families)
	return run
}

// watch waits out the window. With every > 0 it scrapes /metrics in
// protobuf every that long, as a Prometheus would, and logs every sample
// interval what the window is made of: the resident set and its peak, the
// prober's share of a core, the scrapes' slowest wall-clock time and
// their CPU (the prober's CPU during each, less its rate between scrapes),
// the targets whose generator is valid and the load average. An hour-long
// run at 1,000 targets is this with LLMPROBE_BENCH_WINDOW=60m and
// LLMPROBE_BENCH_SCRAPE_EVERY=30s.
func watch(b *testing.B, p prober, n int, window, every, sample time.Duration) {
	b.Helper()
	if every <= 0 {
		time.Sleep(window)
		return
	}
	start := time.Now()
	end := start.Add(window)
	logCPU, _ := procCPU(p.pid)
	logAt, nextLog := start, start.Add(sample)
	prevCPU, prevAt := logCPU, start // at the end of the last scrape
	var slowest, scrapeCPU time.Duration
	var scrapes, bytes int
	for time.Now().Before(end) {
		time.Sleep(min(every, time.Until(end)))
		before, _ := procCPU(p.pid)
		at := time.Now()
		res, err := scrape(p.addr, acceptProto)
		after, _ := procCPU(p.pid)
		if err != nil {
			b.Logf("%v in: scrape: %v", time.Since(start).Round(time.Second), err)
			continue
		}
		rate := float64(before-prevCPU) / float64(max(at.Sub(prevAt), time.Millisecond))
		prevCPU, prevAt = after, time.Now()
		scrapes++
		scrapeCPU += max(after-before-time.Duration(rate*float64(res.took)), 0)
		slowest = max(slowest, res.took)
		bytes = res.bytes
		now := time.Now()
		if now.Before(nextLog) && now.Before(end) {
			continue
		}
		valid := 0
		for _, v := range gaugeByTarget(res.families, "llmprobe_generator_valid") {
			if v == 1 {
				valid++
			}
		}
		b.Logf("%5.1f min: RSS %4d MB (peak %4d), %4.1f %% of a core, %d scrapes of %.2f MB: slowest %v, %v CPU each, generator valid %d/%d %s, load %.1f",
			now.Sub(start).Minutes(), procStatus(p.pid, "VmRSS")>>20, procStatus(p.pid, "VmHWM")>>20,
			100*float64(after-logCPU)/float64(now.Sub(logAt)), scrapes, float64(bytes)/1e6, slowest.Round(time.Millisecond),
			(scrapeCPU / time.Duration(scrapes)).Round(time.Millisecond), valid, n, invalidCauses(res.families), loadAvg())
		logCPU, logAt, nextLog = after, now, now.Add(sample)
		slowest, scrapeCPU, scrapes = 0, 0, 0
	}
}

// heapProfile, when the benchmark runs with LLMPROBE_PPROF=1 (the prober
// inherits it and serves /debug/pprof/), logs the prober's live heap and
// heap goal after a collection and saves its heap profile as
// heap-N.pb.gz in LLMPROBE_BENCH_PROFILES (default: the test's temporary
// directory), for `go tool pprof -sample_index=inuse_space`.
func heapProfile(b *testing.B, addr string, n int) {
	if os.Getenv("LLMPROBE_PPROF") != "1" {
		return
	}
	dir := os.Getenv("LLMPROBE_BENCH_PROFILES")
	if dir == "" {
		dir = b.TempDir()
	}
	get := func(path string) []byte {
		resp, err := http.Get("http://" + addr + path)
		if err != nil {
			b.Fatal(err)
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err != nil || resp.StatusCode != http.StatusOK {
			b.Fatalf("%s: %d %v", path, resp.StatusCode, err)
		}
		return body
	}
	file := filepath.Join(dir, fmt.Sprintf("heap-%d.pb.gz", n))
	if err := os.WriteFile(file, get("/debug/pprof/heap?gc=1"), 0o600); err != nil {
		b.Fatal(err)
	}
	var stats []string
	for _, line := range strings.Split(string(get("/debug/pprof/heap?debug=1")), "\n") {
		for _, k := range []string{"# HeapAlloc = ", "# NextGC = ", "# Stack = "} {
			if v, ok := strings.CutPrefix(line, k); ok {
				stats = append(stats, strings.TrimPrefix(k, "# ")+v)
			}
		}
	}
	b.Logf("%d targets: %s; heap profile %s", n, strings.Join(stats, ", "), file)
}

func mustScrape(b *testing.B, addr, accept string) scrapeResult {
	b.Helper()
	res, err := scrape(addr, accept)
	if err != nil {
		b.Fatal(err)
	}
	return res
}

// invalidCauses counts, by cause, the targets whose generator verdict
// names it ("" when none does).
func invalidCauses(mfs []*dto.MetricFamily) string {
	by := map[string]int{}
	for _, mf := range mfs {
		if mf.GetName() != "llmprobe_generator_invalid_cause" {
			continue
		}
		for _, m := range mf.GetMetric() {
			if m.GetGauge().GetValue() != 1 {
				continue
			}
			for _, l := range m.GetLabel() {
				if l.GetName() == "cause" {
					by[l.GetValue()]++
				}
			}
		}
	}
	var out []string
	for c, k := range by {
		out = append(out, fmt.Sprintf("%s:%d", c, k))
	}
	sort.Strings(out)
	if len(out) == 0 {
		return ""
	}
	return "(invalid: " + strings.Join(out, ", ") + ")"
}
