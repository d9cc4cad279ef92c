package browser

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/llmprobe/llmprobe/internal/config"
	"github.com/llmprobe/llmprobe/internal/daemon"
	"github.com/llmprobe/llmprobe/internal/sim"
	"github.com/llmprobe/llmprobe/internal/telemetry"
	"github.com/llmprobe/llmprobe/internal/testutil"
	"github.com/llmprobe/llmprobe/internal/wiring"
)

// chromiumPath returns the browser to drive: LLMPROBE_CHROMIUM (which must
// then work), or the first of chromium, chromium-browser and google-chrome
// on PATH; without any the test skips, saying how to get one.
func chromiumPath(t *testing.T) (path string, required bool) {
	t.Helper()
	if testing.Short() {
		t.Skip("full tier: the browser tests drive headless chromium against in-process daemons")
	}
	if p := os.Getenv("LLMPROBE_CHROMIUM"); p != "" {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("LLMPROBE_CHROMIUM=%s: %v", p, err)
		}
		return p, true
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, false
		}
	}
	t.Skip("no chromium found: the status page's browser test needs Debian's chromium (apt-get install -y chromium) or LLMPROBE_CHROMIUM=/path/to/chromium; .ci/run installs it")
	return "", false
}

// browser starts headless chromium with the flags this machine needs (no
// sandbox as root, no GPU, no background network: the network is closed)
// and a fresh profile.
func browser(t *testing.T, ctx context.Context, path string) context.Context {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.UserDataDir(t.TempDir()),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-background-networking", true),
	)
	actx, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	bctx, cancelBrowser := chromedp.NewContext(actx)
	t.Cleanup(func() {
		cancelBrowser()
		cancelAlloc()
	})
	return bctx
}

// config is two targets: "fast", the built-in simulator with its own
// /metrics beside a short ladder whose top step meets its gates (so its
// capacity is a lower bound), and "down", a port nothing listens on (its
// requests fail: connection refused).
func daemonConfig(t *testing.T, simURL, closed string) *config.Config {
	t.Helper()
	yaml := fmt.Sprintf(`admin: {listen: "127.0.0.1:0"}
drain: {timeout: 2s}
targets:
  - name: fast
    url: %s
    model: llmprobe-sim
    timeouts: {connect: 1s, headers: 5s, first_content: 5s, idle: 5s, total: 10s}
    baseline: {rate: 5, arrival: constant}
    server_metrics: {url: %s, interval: 250ms}
    classes:
      - name: chat
        input: {dist: fixed, value: 16}
        output: {dist: fixed, value: 8}
        gates: {ttft: 3s}
    ladder:
      enabled: true
      run_on_start: true
      steps: [2, 4]
      step_duration: 1s
      gap: 100ms
      max_rate: 20
      arrival: constant
      max_lag_p99: 1s
      rate_tolerance: 0.5
      abort: {on_generator_invalid: false}
  - name: down
    url: %s
    model: m
    timeouts: {connect: 500ms, headers: 1s, first_content: 1s, idle: 1s, total: 2s}
    baseline: {rate: 4, arrival: constant}
`, simURL, strings.TrimSuffix(simURL, "/v1")+"/metrics", closed)
	cfg, err := wiring.Load(config.Options{BuiltIn: []byte(yaml), Environ: func() []string { return nil }})
	if err != nil {
		t.Fatalf("config: %v", err)
	}
	return cfg
}

// startDaemon runs the daemon in-process until the test ends and returns
// its admin URL.
func startDaemon(t *testing.T, cfg *config.Config) string {
	t.Helper()
	rec, err := telemetry.New(telemetry.Options{})
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	d, err := daemon.New(daemon.Options{Config: cfg, Recorder: rec, Listener: l, Tick: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("daemon: %v", err)
		}
	})
	return "http://" + l.Addr().String() + "/"
}

func fetch(url string) string {
	c := &http.Client{Timeout: 5 * time.Second}
	resp, err := c.Get(url)
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

// firstCount is the first count cell of a target's latency table (its
// TTFT over 5 minutes).
var firstCount = regexp.MustCompile(`<td class="n count">(\d+)</td>`)

var latencyCell = regexp.MustCompile(`^\d+(\.\d+)?(µs|ms|s)$|^\d+m\d+(\.\d+)?s$`)

// TestStatusPageInChromium loads the status page of a running daemon in
// headless chromium and asserts on what it renders: the capacity with "≥"
// (a lower bound), the baseline p50/p99 cells with their counts, the last
// ladder's server view, the failures list with reasons, the SLO state, the
// auto-refresh, and no horizontal overflow at phone width.
func TestStatusPageInChromium(t *testing.T) {
	chrome, required := chromiumPath(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + ln.Addr().String() + "/v1"
	ln.Close()
	page := startDaemon(t, daemonConfig(t, testutil.StartSim(t, sim.DefaultConfig()), closed))

	// The ladder runs at start; wait until its capacity and some baseline
	// figures are on the page (served HTML, before the browser is used).
	testutil.Eventually(t, 60*time.Second, "the ladder's capacity, latencies and failures on the page", func() bool {
		_, fast, _ := strings.Cut(fetch(page), `id="target-fast"`)
		m := firstCount.FindStringSubmatch(fast)
		n := 0
		if m != nil {
			n, _ = strconv.Atoi(m[1])
		}
		return strings.Contains(fast, `class="capacity lower-bound">≥ `) && n >= 10 // TTFT over 5 min: two seconds of baseline
	})

	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	bctx := browser(t, ctx, chrome)
	fail := func(what string, err error) {
		t.Helper()
		if required {
			t.Fatalf("%s in chromium (LLMPROBE_CHROMIUM=%s): %v", what, chrome, err)
		}
		t.Fatalf("%s in chromium at %s: %v", what, chrome, err)
	}
	if err := chromedp.Do(bctx,
		chromedp.EmulateViewport(1280, 900),
		chromedp.Navigate(page),
		chromedp.WaitVisible(chromedp.CSS(`#target-fast .capacity`)),
	); err != nil {
		fail("loading the status page", err)
	}
	text := func(sel string) string {
		t.Helper()
		s, err := chromedp.Run(bctx, chromedp.Text(chromedp.CSS(sel)))
		if err != nil {
			fail("reading "+sel, err)
		}
		return strings.TrimSpace(s)
	}
	rows := func(sel string) [][]string {
		t.Helper()
		r, err := chromedp.Run(bctx, chromedp.Evaluate[[][]string](rowsJS(sel)))
		if err != nil {
			fail("reading "+sel, err)
		}
		return r
	}
	capacity := text(`#target-fast .capacity`)
	refresh, err := chromedp.Run(bctx, chromedp.AttributeValue(chromedp.CSS(`meta[http-equiv="refresh"]`), "content"))
	if err != nil {
		fail("reading the refresh", err)
	}
	latency, server, slo := rows(`#target-fast table.latency`), rows(`#target-fast table.server`), rows(`#target-down table.slo`)
	failures, err := chromedp.Run(bctx, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll('#target-down ol.failures li')).map(li => li.innerText)`))
	if err != nil {
		fail("reading the failures", err)
	}
	sparkPoints, err := chromedp.Run(bctx, chromedp.Evaluate[int](`document.querySelectorAll('#target-fast svg.spark circle').length`))
	if err != nil {
		fail("reading the sparkline", err)
	}

	t.Logf("capacity %q; latency %q; server %q; failures %q; SLO %q", capacity, latency, server, failures, slo)
	if !strings.HasPrefix(capacity, "≥ 4 req/s") || !strings.Contains(capacity, "lower bound") {
		t.Errorf("capacity rendered %q, want a lower bound ≥ 4 req/s", capacity)
	}
	if n, err := strconv.Atoi(refresh.Value); err != nil || n <= 0 {
		t.Errorf("meta refresh %+v", refresh)
	}
	if sparkPoints != 1 {
		t.Errorf("capacity history: %d points, want 1 (one ladder)", sparkPoints)
	}
	// The latency table: TTFT, inter-chunk and e2e over 5 and 60 minutes,
	// each with its p50, p99 and count.
	seen := map[string]bool{}
	for _, row := range latency {
		if len(row) != 5 {
			t.Fatalf("latency row %q", row)
		}
		fig, window, p50, p99, count := row[0], row[1], row[2], row[3], row[4]
		seen[fig+" "+window] = true
		n, err := strconv.Atoi(count)
		if err != nil || n < 10 {
			t.Errorf("%s %s: count %q, want at least 10", fig, window, count)
		}
		if !latencyCell.MatchString(p50) || !latencyCell.MatchString(p99) {
			t.Errorf("%s %s: p50 %q p99 %q are not latencies", fig, window, p50, p99)
		}
	}
	for _, want := range []string{"TTFT 5 min", "TTFT 60 min", "inter-chunk gap 5 min", "e2e 60 min"} {
		if !seen[want] {
			t.Errorf("no latency row %q in %q", want, latency)
		}
	}
	// step, rate, running, waiting, KV cache, server view, gap
	if len(server) != 2 || len(server[1]) != 7 || !strings.Contains(server[1][5], "running up to") || !strings.HasPrefix(server[1][6], "p50 ") {
		t.Errorf("server view rows %q", server)
	}
	if len(failures) == 0 || !strings.Contains(failures[0], "transport_error/connection_refused") || !strings.Contains(failures[0], "baseline/default") {
		t.Errorf("failures %q", failures)
	}
	if len(slo) != 2 || !strings.Contains(slo[0][3], "BURNING") {
		t.Errorf("the failing target's SLO state %q", slo)
	}

	// At phone width the page fits: nothing wider than the viewport, and
	// no table needs to scroll inside its box either.
	type overflow struct {
		ScrollWidth, ClientWidth int
		Widest, Scrolls          string
	}
	if err := chromedp.Do(bctx,
		chromedp.EmulateViewport(375, 740, chromedp.EmulateMobile),
		chromedp.Navigate(page),
		chromedp.WaitVisible(chromedp.CSS(`#target-fast .capacity`)),
	); err != nil {
		fail("loading the page at phone width", err)
	}
	o, err := chromedp.Run(bctx, chromedp.Evaluate[overflow](`(() => {
		const de = document.documentElement;
		let widest = "";
		for (const el of document.body.querySelectorAll("*")) {
			const r = el.getBoundingClientRect();
			if (r.right > de.clientWidth + 1 && !el.closest(".scroll")) { widest = el.tagName + "." + el.getAttribute("class") + " right=" + r.right; break; }
		}
		let scrolls = "";
		for (const el of document.querySelectorAll(".scroll")) {
			if (el.scrollWidth > el.clientWidth + 1) { scrolls += (el.firstElementChild ? el.firstElementChild.getAttribute("class") : "?") + " (" + el.scrollWidth + " > " + el.clientWidth + ") "; }
		}
		return {ScrollWidth: de.scrollWidth, ClientWidth: de.clientWidth, Widest: widest, Scrolls: scrolls};
	})()`))
	if err != nil {
		fail("measuring the page at phone width", err)
	}
	t.Logf("phone width: %+v", o)
	if o.ClientWidth > 400 || o.ClientWidth < 300 {
		t.Errorf("phone viewport is %d px wide, want 375", o.ClientWidth)
	}
	if o.ScrollWidth > o.ClientWidth || o.Widest != "" {
		t.Errorf("at 375 px the page overflows horizontally: scroll width %d > %d (%s)", o.ScrollWidth, o.ClientWidth, o.Widest)
	}
	if o.Scrolls != "" {
		t.Errorf("at 375 px these tables are wider than their box: %s", o.Scrolls)
	}
}

// rowsJS returns the text of each data row's cells of the table at sel.
func rowsJS(sel string) string {
	return fmt.Sprintf(`Array.from(document.querySelectorAll(%q + ' tr')).slice(1).map(r => Array.from(r.cells).map(c => c.innerText.trim()))`, sel)
}
