package chaos

import (
	"bytes"
	"encoding/json"
	"encoding/pem"
	"flag"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/cause"
	"github.com/llmprobe/llmprobe/internal/ledger"
	"github.com/llmprobe/llmprobe/internal/protocol"
	"github.com/llmprobe/llmprobe/internal/report"
	"github.com/llmprobe/llmprobe/internal/verdict"
)

// caseParallel is how many cases run at once (each runs two processes that
// mostly wait on the short timeouts), unless -test.parallel is given; heavy
// cases run one at a time.
func caseParallel() int {
	if raceEnabled {
		return 3
	}
	return 8
}

var heavySem = make(chan struct{}, 1)

func TestMain(m *testing.M) {
	flag.Parse()
	explicit := false
	flag.Visit(func(f *flag.Flag) { explicit = explicit || f.Name == "test.parallel" })
	if !explicit {
		_ = flag.Set("test.parallel", fmt.Sprint(caseParallel()))
	}
	os.Exit(llmprobe.Main(m))
}

// Peak memory bounds (resident set size of the whole process, runtime
// included). Every case is small in itself; the bound is what a hostile
// target must not be able to push a process past. The race detector's
// shadow memory multiplies a process's footprint, so its bound is larger.
func memBound() int64 {
	if raceEnabled {
		return 512 << 20
	}
	return 128 << 20
}

// How much traffic a case makes: the probe plans the case's rate over
// probeWindow (constant arrivals, the first one period in); the daemon runs
// at the case's rate until minDaemonRecords requests finished (or
// daemonWait passed).
const (
	probeWindow      = 1500 * time.Millisecond
	minDaemonRecords = 3
	daemonWait       = 15 * time.Second
	drainTimeout     = 5 * time.Second // the least drain; a case drains longer than its total timeout (see drain)
)

// caseRun is one case's run: its target, the probe process and the daemon
// process, and what each left behind.
type caseRun struct {
	c      *chaosCase
	key    sentinel
	url    string
	caFile string
	dir    string

	probe       *proc
	probeLedger string
	probeRecs   []ledger.Record
	report      report.Probe

	daemon       *proc
	admin        string
	configPath   string
	ledgerDir    string
	daemonRecs   []ledger.Record
	metrics      scrape
	debug        []byte
	configPage   []byte
	statusPage   []byte
	scrapeFailed bool
}

// peaks collects the peak memory of every process, for the summary.
var peaks = struct {
	sync.Mutex
	rows []string
	max  map[string]int64
}{max: map[string]int64{}}

func notePeak(kind, name string, rss int64) {
	peaks.Lock()
	defer peaks.Unlock()
	peaks.rows = append(peaks.rows, fmt.Sprintf("%-30s %-6s %s", name, kind, mib(rss)))
	if rss > peaks.max[kind] {
		peaks.max[kind] = rss
	}
}

// TestCases runs every case of the table through `llmprobe probe` and a
// short `llmprobe run`, at the same time, against the case's own server.
func TestCases(t *testing.T) {
	if testing.Short() {
		t.Skip("full tier: the hostile-target suite builds the binary and runs every case through llmprobe probe and run")
	}
	t.Parallel()
	key := newSentinel()
	binary(t)
	all := cases()
	t.Cleanup(func() {
		peaks.Lock()
		defer peaks.Unlock()
		sort.Strings(peaks.rows)
		t.Logf("%d cases; peak RSS: probe max %s, daemon max %s (bound %s)\n%s", len(all),
			mib(peaks.max["probe"]), mib(peaks.max["run"]), mib(memBound()), strings.Join(peaks.rows, "\n"))
	})
	for _, c := range all {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			if c.heavy || c.slow {
				heavySem <- struct{}{}
				defer func() { <-heavySem }()
			}
			r := startCase(t, c, key)
			r.startProbe(t)
			if !c.probeOnly {
				r.runDaemon(t)
			}
			r.probe.wait(t, probeWindow+c.drain()+10*time.Second)
			r.checkProbe(t)
			if !c.probeOnly {
				r.checkDaemon(t)
			}
			if c.check != nil {
				c.check(t, r)
			}
		})
	}
}

// startCase starts the case's target.
func startCase(t *testing.T, c *chaosCase, key sentinel) *caseRun {
	r := &caseRun{c: c, key: key, dir: t.TempDir()}
	if c.setup != nil {
		c.setup(t)
	}
	switch c.kind {
	case plainServer:
		r.url = newHostile(t, c.name, c.serve).url()
	case refusedPort:
		r.url = "http://" + refusedAddr(t) + "/v1"
	case tlsUntrusted:
		s := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			_, _ = io.WriteString(w, "data: [DONE]\n\n")
		}))
		s.Config.ErrorLog = log.New(io.Discard, "", 0)
		s.StartTLS()
		t.Cleanup(s.Close)
		r.url = s.URL + "/v1"
	case h2Server:
		s := httptest.NewUnstartedServer(c.h2)
		s.EnableHTTP2 = true
		s.Config.ErrorLog = log.New(io.Discard, "", 0)
		s.StartTLS()
		t.Cleanup(s.Close)
		r.url = s.URL + "/v1"
		r.caFile = filepath.Join(r.dir, "ca.pem")
		if err := os.WriteFile(r.caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: s.Certificate().Raw}), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return r
}

// ----- the probe -----

func (r *caseRun) startProbe(t *testing.T) {
	to := r.c.timeouts()
	r.probeLedger = filepath.Join(r.dir, "probe.jsonl")
	args := []string{"probe", "--url", r.url, "--api", r.c.apiName(), "--model", "chaos-model", "--api-key-env", keyEnv,
		"--rate", fmt.Sprint(r.c.rate()), "--duration", probeWindow.String(), "--arrival", "constant",
		"--drain", r.c.drain().String(), "--json", "--ledger", r.probeLedger, "--max-tokens", "8", "--prompt-tokens", "16",
		// The suite judges the target's hostility, not the prober's timing on
		// a loaded machine: a late dispatch must not turn the exit code to 4.
		"--max-lag-p99", "1s",
		"--timeout-connect", to.connect.String(), "--timeout-headers", to.headers.String(),
		"--timeout-first-content", to.firstContent.String(), "--timeout-idle", to.idle.String(), "--timeout-total", to.total.String()}
	if r.caFile != "" {
		args = append(args, "--tls-ca-file", r.caFile)
	}
	args = append(args, r.c.probeArgs...)
	r.probe = startProc(t, r.key, args...)
	if r.c.hupProbe {
		// SIGHUP 700 ms into the probe's window, counted from the ledger
		// file's creation: by then the probe handles the signal (it does
		// from main on), however slowly a busy machine started the
		// process; before, SIGHUP's default action would kill it.
		go func(p *proc, ledgerPath string) {
			for {
				if _, err := os.Stat(ledgerPath); err == nil {
					break
				}
				select {
				case <-time.After(10 * time.Millisecond):
				case <-p.done:
					return
				}
			}
			select {
			case <-time.After(700 * time.Millisecond):
				_ = p.cmd.Process.Signal(syscall.SIGHUP)
			case <-p.done:
			}
		}(r.probe, r.probeLedger)
	}
}

func (r *caseRun) checkProbe(t *testing.T) {
	p := r.probe
	what := "probe"
	stdout, stderr := p.stdout.Bytes(), p.stderr.Bytes()
	notePeak("probe", r.c.name, p.peakRSS())
	checkNoCrash(t, what, stderr)
	if rss := p.peakRSS(); rss > memBound() {
		t.Errorf("probe peak RSS %s, over the bound %s", mib(rss), mib(memBound()))
	}
	lf, raw, err := readLedger(r.probeLedger)
	if err != nil {
		t.Errorf("probe ledger: %v", err)
	}
	r.probeRecs = lf.records
	// The exit code tells a script what happened: 0 when a request
	// succeeded, 3 when none did (README, "Exit codes").
	wantCode := 3
	for _, rec := range r.probeRecs {
		if rec.Outcome == ledger.OK {
			wantCode = 0
			break
		}
	}
	if code := p.exitCode(); code != wantCode && !(wantCode == 0 && code == 4 && hostInvalid(t, stdout)) {
		t.Errorf("probe exited %d, want %d; stderr:\n%s", code, wantCode, tail(stderr, 3000))
	}
	for name, b := range map[string][]byte{"stdout": stdout, "stderr": stderr, "ledger": raw} {
		if frag := r.key.leak(b); frag != "" {
			t.Errorf("probe: the API key leaked into its %s: …%s…", name, leakContext(b, frag))
		}
	}
	checkRecords(t, what+" ledger", r.probeRecs)
	checkOutcomes(t, what, r.c, r.probeRecs)
	if err := json.Unmarshal(stdout, &r.report); err != nil {
		t.Errorf("probe --json: stdout is not a report: %v\n%s", err, tail(stdout, 2000))
		return
	}
	if want := int(r.c.rate() * probeWindow.Seconds()); len(r.probeRecs) != r.report.Attempts || (r.report.Planned < want-1 && !r.c.hupProbe && r.report.Mode == "open") {
		t.Errorf("probe: %d records for %d attempts of %d planned arrivals", len(r.probeRecs), r.report.Attempts, r.report.Planned)
	}
	checkReport(t, r.report, r.probeRecs)
}

// checkOutcomes asserts every request ended as the case allows, and the
// outcomes it requires were seen.
func checkOutcomes(t *testing.T, what string, c *chaosCase, recs []ledger.Record) {
	t.Helper()
	allowed := map[string]bool{}
	for _, w := range c.want {
		allowed[w.String()] = true
	}
	got := tally(recs)
	for k, n := range got {
		if !allowed[k] {
			ex := ""
			for _, rec := range recs {
				if string(rec.Outcome)+"/"+string(rec.Reason) == k {
					ex = fmt.Sprintf(" (e.g. record %d: error %q, status %d)", rec.ID, rec.Error, rec.Status)
					break
				}
			}
			t.Errorf("%s: %d requests ended %s%s; want %s (all: %s)", what, n, k, ex, wantList(c), keysOf(got))
		}
	}
	need := c.want[:1]
	if c.all {
		need = c.want
	}
	for _, w := range need {
		if got[w.String()] == 0 {
			t.Errorf("%s: no request ended %s (all: %s)", what, w, keysOf(got))
		}
	}
}

func wantList(c *chaosCase) string {
	s := make([]string, len(c.want))
	for i, w := range c.want {
		s[i] = w.String()
	}
	return strings.Join(s, " or ")
}

// checkReport asserts the report's counts are the ledger's, and that only
// ok requests are samples of the success latencies.
func checkReport(t *testing.T, rep report.Probe, recs []ledger.Record) {
	t.Helper()
	var ok, ttft, e2e, gaps, first int
	byOutcome := map[string]int{}
	for i := range recs {
		r := &recs[i]
		byOutcome[string(r.Outcome)]++
		if !r.IsRetry() {
			first++
		}
		if r.Outcome != ledger.OK {
			continue
		}
		ok++
		if _, has := r.TTFT(); has {
			ttft++
		}
		if _, has := r.E2E(); has {
			e2e++
		}
		gaps += len(r.ChunkGaps)
	}
	for o, n := range rep.Outcomes {
		if byOutcome[o] != n {
			t.Errorf("report: %d %s, the ledger has %d", n, o, byOutcome[o])
		}
	}
	for _, c := range []struct {
		name      string
		got, want int
	}{
		{"planned", rep.Planned, first},
		{"completed", rep.Completed, ok},
		{"ttft count (ok requests only)", rep.TTFT.Count, ttft},
		{"e2e count (ok requests only)", rep.E2E.Count, e2e},
		{"inter-chunk count (gaps of ok requests only)", rep.InterChunk.Count, gaps},
		{"attempts = dispatched + unsent", rep.Attempts, rep.Dispatched + rep.Unsent},
	} {
		if c.got != c.want {
			t.Errorf("report: %s is %d, want %d", c.name, c.got, c.want)
		}
	}
	if rep.TPOT.Count > ok {
		t.Errorf("report: %d TPOT samples from %d ok requests", rep.TPOT.Count, ok)
	}
}

// ----- the daemon -----

// daemonConfig is the daemon's configuration for the case; quiet plans no
// more arrivals.
func (r *caseRun) daemonConfig(quiet bool) string {
	to := r.c.timeouts()
	var b strings.Builder
	fmt.Fprintf(&b, "admin: {listen: %q}\n", r.admin)
	b.WriteString("log: {level: info, format: json}\n")
	fmt.Fprintf(&b, "ledger: {dir: %q}\n", r.ledgerDir)
	fmt.Fprintf(&b, "drain: {timeout: %s}\n", r.c.drain())
	if r.c.daemonGlobal != "" {
		b.WriteString(r.c.daemonGlobal + "\n")
	}
	b.WriteString("targets:\n")
	b.WriteString(targetYAML("chaos", r.url, r.c.apiName(), r.caFile, to, r.c.daemonRate(), !quiet, r.c.budget, r.c.daemonTarget))
	return b.String()
}

// targetYAML is one target of a daemon configuration.
func targetYAML(name, url, api, caFile string, to timeouts, rate float64, enabled bool, budget int, extra string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "  - name: %s\n    url: %q\n    api: %s\n    model: chaos-model\n    api_key_env: %s\n", name, url, api, keyEnv)
	fmt.Fprintf(&b, "    timeouts: {connect: %s, headers: %s, first_content: %s, idle: %s, total: %s}\n",
		to.connect, to.headers, to.firstContent, to.idle, to.total)
	b.WriteString("    max_in_flight: 256\n")
	b.WriteString("    identity: {response_header: X-Build, models_field: root}\n")
	fmt.Fprintf(&b, "    baseline: {enabled: %t, rate: %g, arrival: constant}\n", enabled, rate)
	if caFile != "" {
		fmt.Fprintf(&b, "    tls: {ca_file: %q}\n", caFile)
	}
	if budget > 0 {
		fmt.Fprintf(&b, "    budget: {tokens_per_day: %d}\n", budget)
	}
	if extra != "" {
		b.WriteString("    " + extra + "\n")
	}
	b.WriteString("    classes:\n      - name: default\n        input: {dist: fixed, value: 16}\n        output: {dist: fixed, value: 8}\n")
	return b.String()
}

// runDaemon runs `llmprobe run` against the case's target until enough
// requests finished, stops planning with a reload, waits for in-flight
// requests, reads every endpoint and stops it with SIGTERM.
func (r *caseRun) runDaemon(t *testing.T) {
	r.ledgerDir = filepath.Join(r.dir, "ledger")
	r.configPath = filepath.Join(r.dir, "llmprobe.yaml")
	var err error
	r.daemon, r.admin, err = startDaemon(t, r.key, r.configPath, func(admin string) {
		r.admin = admin
		_ = os.RemoveAll(r.ledgerDir)
		if err := os.WriteFile(r.configPath, []byte(r.daemonConfig(false)), 0o600); err != nil {
			t.Fatal(err)
		}
	})
	if err != nil {
		t.Error(err)
		r.scrapeFailed = true
	}
	sel := map[string]string{"target": "chaos"}

	// A heavy case's request may take most of its (long) total timeout on a
	// loaded machine: wait for its records that long.
	wait := max(daemonWait, r.c.timeouts().total+5*time.Second)
	deadline := time.Now().Add(wait)
	for !r.scrapeFailed {
		s, err := scrapeMetrics(r.admin)
		if err != nil {
			t.Errorf("run: %v", err)
			r.scrapeFailed = true
			break
		}
		if s.sum("llmprobe_requests_total", sel) >= minDaemonRecords {
			break
		}
		if time.Now().After(deadline) || r.daemon.exited() {
			t.Errorf("run: only %v requests finished within %v", s.sum("llmprobe_requests_total", sel), wait)
			break
		}
		time.Sleep(100 * time.Millisecond)
	}

	// Stop planning (a good reload with the baseline off) and wait until
	// nothing is in flight, so that the last scrape and the ledger files
	// hold the same requests.
	if err := os.WriteFile(r.configPath, []byte(r.daemonConfig(true)), 0o600); err != nil {
		t.Fatal(err)
	}
	_ = r.daemon.cmd.Process.Signal(syscall.SIGHUP)
	deadline = time.Now().Add(r.c.timeouts().total + 8*time.Second)
	var q quiet
	for !r.scrapeFailed && !r.daemon.exited() {
		s, err := scrapeMetrics(r.admin)
		if err != nil {
			t.Errorf("run: %v", err)
			break
		}
		reloaded := bytes.Contains(r.daemon.stderr.Bytes(), []byte("configuration reloaded"))
		if q.settled(s, sel) && reloaded {
			r.metrics = s
			break
		}
		if time.Now().After(deadline) {
			t.Errorf("run: still %v in flight (reloaded: %t) %v after the reload that stopped planning",
				s.sum("llmprobe_in_flight_requests", sel), reloaded, r.c.timeouts().total+8*time.Second)
			r.metrics = s
			break
		}
		time.Sleep(150 * time.Millisecond)
	}
	for _, e := range []struct {
		path string
		dst  *[]byte
	}{{"/debug/requests", &r.debug}, {"/config", &r.configPage}, {"/", &r.statusPage}} {
		code, b, err := get(t.Context(), "http://"+r.admin+e.path)
		if err != nil || code != 200 {
			t.Errorf("run: GET %s: %d %v", e.path, code, err)
		}
		*e.dst = b
	}
	if code, _, err := get(t.Context(), "http://"+r.admin+"/-/ready"); err != nil || code != 200 {
		t.Errorf("run: not ready at the end of the case: %d %v", code, err)
	}
	_ = r.daemon.cmd.Process.Signal(syscall.SIGTERM)
	r.daemon.wait(t, r.c.drain()+10*time.Second)
}

func (r *caseRun) checkDaemon(t *testing.T) {
	p := r.daemon
	what := "run"
	stdout, stderr := p.stdout.Bytes(), p.stderr.Bytes()
	notePeak("run", r.c.name, p.peakRSS())
	checkNoCrash(t, what, stderr)
	if code := p.exitCode(); code != 0 {
		t.Errorf("run exited %d after SIGTERM; stderr:\n%s", code, tail(stderr, 3000))
	}
	if rss := p.peakRSS(); rss > memBound() {
		t.Errorf("run peak RSS %s, over the bound %s", mib(rss), mib(memBound()))
	}
	checkLogs(t, what, stderr)
	recs, raw, err := readLedgerDir(r.ledgerDir)
	if err != nil {
		t.Errorf("run ledger: %v", err)
	}
	r.daemonRecs = recs
	for name, b := range map[string][]byte{"stdout": stdout, "stderr (logs)": stderr, "ledger files": raw,
		"/metrics": r.metrics.raw, "/debug/requests": r.debug, "/config": r.configPage, "status page": r.statusPage} {
		if frag := r.key.leak(b); frag != "" {
			t.Errorf("run: the API key leaked into %s: …%s…", name, leakContext(b, frag))
		}
	}
	checkRecords(t, what+" ledger", recs)
	checkOutcomes(t, what, r.c, recs)
	if r.metrics.fams == nil {
		return
	}
	checkLabels(t, what, r.metrics)
	checkMetricsAddUp(t, what, r.metrics, recs, "chaos")
	var dbg struct {
		Targets []ledger.TargetRecords `json:"targets"`
	}
	if err := json.Unmarshal(r.debug, &dbg); err != nil {
		t.Errorf("run: /debug/requests is not JSON: %v", err)
	}
}

// quiet tells when a daemon that plans nothing more has settled: nothing
// in flight and no request finished for settleFor (a retry waiting out its
// backoff is not in flight, and ends a moment later).
type quiet struct {
	n     float64
	since time.Time
}

const settleFor = 700 * time.Millisecond

func (q *quiet) settled(s scrape, sel map[string]string) bool {
	n := s.sum("llmprobe_requests_total", sel)
	if n != q.n || s.sum("llmprobe_in_flight_requests", sel) != 0 || q.since.IsZero() {
		q.n, q.since = n, time.Now()
		return false
	}
	return time.Since(q.since) >= settleFor
}

// checkLogs asserts every log line is one JSON object and none reports a
// broken ledger.
func checkLogs(t *testing.T, what string, stderr []byte) {
	t.Helper()
	bad := 0
	for i, line := range bytes.Split(bytes.TrimSpace(stderr), []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal(line, &m); err != nil {
			if bad++; bad <= 3 {
				t.Errorf("%s: log line %d is not JSON: %q", what, i+1, tail(line, 300))
			}
			continue
		}
		msg, _ := m["msg"].(string)
		if strings.Contains(msg, "ledger invariant") || strings.Contains(msg, "still pending") {
			t.Errorf("%s: log line %d: %s", what, i+1, line)
		}
		for k, v := range m {
			if s, ok := v.(string); ok {
				// llmprobe's own joined errors hold line ends; nothing else
				// unprintable may reach a log line.
				if msg := unclean(strings.NewReplacer("\n", " ", "\t", " ").Replace(s), 4096); msg != "" {
					t.Errorf("%s: log line %d: %s %q: %s", what, i+1, k, s, msg)
				}
			}
		}
	}
}

// checkMetricsAddUp asserts that a scrape taken while nothing was in
// flight and nothing more was planned counts exactly what the ledger holds
// for target, and that only ok requests are latency samples.
func checkMetricsAddUp(t *testing.T, what string, s scrape, recs []ledger.Record, target string) {
	t.Helper()
	type key struct{ class, traffic, outcome, reason string }
	byKey := map[key]int{}
	var planned, dispatched, ok, ttft, e2e, gaps int
	var tokIn, tokOut float64
	for i := range recs {
		r := &recs[i]
		if r.Target != target {
			continue
		}
		byKey[key{r.Class, string(r.Traffic), string(r.Outcome), string(r.Reason)}]++
		if r.Attempt <= 1 {
			planned++
		}
		if _, has := r.DispatchLag(); has {
			dispatched++
		}
		if r.Usage.Known {
			tokIn += float64(r.Usage.Prompt)
			tokOut += float64(r.Usage.Completion)
		}
		if r.Outcome != ledger.OK {
			continue
		}
		ok++
		if _, has := r.TTFT(); has {
			ttft++
		}
		if _, has := r.E2E(); has {
			e2e++
		}
		gaps += len(r.ChunkGaps)
	}
	sel := map[string]string{"target": target}
	// llmprobe_requests_total by class, traffic, outcome and reason (summed
	// over any other label) against the ledger.
	metricsByKey := map[key]int{}
	for _, m := range s.fams["llmprobe_requests_total"].GetMetric() {
		if l := labelsOf(m); l["target"] == target {
			metricsByKey[key{l["class"], l["traffic"], l["outcome"], l["reason"]}] += int(m.GetCounter().GetValue())
		}
	}
	for k, got := range metricsByKey {
		if got != byKey[k] {
			t.Errorf("%s: llmprobe_requests_total%v = %d, the ledger files hold %d", what, k, got, byKey[k])
		}
	}
	for k, n := range byKey {
		if _, ok := metricsByKey[k]; !ok {
			t.Errorf("%s: the ledger files hold %d %v, /metrics has no series", what, n, k)
		}
	}
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"llmprobe_requests_planned_total", s.sum("llmprobe_requests_planned_total", sel), float64(planned)},
		{"llmprobe_requests_dispatched_total", s.sum("llmprobe_requests_dispatched_total", sel), float64(dispatched)},
		{"llmprobe_tokens_total{type=input}", s.sum("llmprobe_tokens_total", map[string]string{"target": target, "type": "input"}), tokIn},
		{"llmprobe_tokens_total{type=output}", s.sum("llmprobe_tokens_total", map[string]string{"target": target, "type": "output"}), tokOut},
		{"llmprobe_request_duration_seconds count (ok only)", float64(s.histCount("llmprobe_request_duration_seconds", sel)), float64(e2e)},
		{"llmprobe_time_to_first_token_seconds count (ok only)", float64(s.histCount("llmprobe_time_to_first_token_seconds", sel)), float64(ttft)},
		{"llmprobe_inter_chunk_latency_seconds count (gaps of ok only)", float64(s.histCount("llmprobe_inter_chunk_latency_seconds", sel)), float64(gaps)},
		{"llmprobe_dispatch_lag_seconds count", float64(s.histCount("llmprobe_dispatch_lag_seconds", sel)), float64(dispatched)},
	} {
		if c.got != c.want {
			t.Errorf("%s: %s is %v, the ledger files say %v", what, c.name, c.got, c.want)
		}
	}
}

// ----- case checks -----

// checkRetryAfterClamped asserts a Retry-After far in the future, in either
// form, is kept as the bound and marked clamped.
func checkRetryAfterClamped(t *testing.T, r *caseRun) {
	for what, recs := range map[string][]ledger.Record{"probe": r.probeRecs, "run": r.daemonRecs} {
		for _, rec := range recs {
			if rec.Outcome != ledger.Rejected {
				continue
			}
			if rec.RetryAfter != protocol.MaxRetryAfter || !rec.RetryAfterClamped {
				t.Errorf("%s: record %d: retry_after %v (clamped %t), want the bound %v, marked clamped",
					what, rec.ID, rec.RetryAfter, rec.RetryAfterClamped, protocol.MaxRetryAfter)
				return
			}
		}
	}
}

// checkSaysWhat asserts the error of every failed request names what was
// unexpected (holds says) and not the misleading notSays.
func checkSaysWhat(says, notSays string) func(t *testing.T, r *caseRun) {
	return func(t *testing.T, r *caseRun) {
		for what, recs := range map[string][]ledger.Record{"probe": r.probeRecs, "run": r.daemonRecs} {
			for _, rec := range recs {
				if rec.Outcome != ledger.OK && (!strings.Contains(rec.Error, says) || strings.Contains(rec.Error, notSays)) {
					t.Errorf("%s: record %d: error %q; want one naming %q (and not %q)", what, rec.ID, rec.Error, says, notSays)
					return
				}
			}
		}
	}
}

// checkUsageUnknown asserts impossible token counts are unknown, never
// counted, and never charged to a budget.
func checkUsageUnknown(t *testing.T, r *caseRun) {
	for what, recs := range map[string][]ledger.Record{"probe": r.probeRecs, "run": r.daemonRecs} {
		for _, rec := range recs {
			if rec.Usage.Known || !rec.Usage.Invalid {
				t.Errorf("%s: record %d: usage %+v; want unknown and flagged invalid", what, rec.ID, rec.Usage)
				return
			}
		}
	}
	if r.metrics.fams == nil {
		return
	}
	if r.c.budget > 0 {
		rem := r.metrics.sum("llmprobe_budget_remaining_tokens", map[string]string{"target": "chaos"})
		if !r.metrics.has("llmprobe_budget_remaining_tokens", map[string]string{"target": "chaos"}) || rem < 0 || rem > float64(r.c.budget) {
			t.Errorf("run: llmprobe_budget_remaining_tokens %v, want within [0, %d]", rem, r.c.budget)
		}
		sent := 0
		for _, rec := range r.daemonRecs {
			if rec.Sent() {
				sent++
			}
		}
		if sent > 0 && rem >= float64(r.c.budget) {
			t.Errorf("run: %d answers with impossible usage spent nothing of the %d-token budget: each costs its upper bound", sent, r.c.budget)
		}
	}
}

// checkIdentity asserts the daemon published the target's identity (its
// labels are checked with every other label).
func checkIdentity(t *testing.T, r *caseRun) {
	if r.metrics.fams == nil {
		return
	}
	f := r.metrics.fams["llmprobe_target_info"]
	for _, m := range f.GetMetric() {
		if l := labelsOf(m); l["target"] == "chaos" {
			if l["version"] == "" {
				t.Errorf("run: llmprobe_target_info%v has no version", l)
			}
			return
		}
	}
	t.Errorf("run: no llmprobe_target_info for the target")
}

// The failure backoff's documented defaults: 100 ms doubling per
// consecutive failure, the last half of each wait drawn at random (so a
// wait is at least half its nominal value).
const (
	defaultBackoff = 100 * time.Millisecond
	defaultJitter  = 0.5
)

// minWait is the shortest backoff before the n-th attempt (n ≥ 2).
func minWait(n int) time.Duration {
	return time.Duration(float64(defaultBackoff<<(n-2)) * (1 - defaultJitter))
}

// checkClosedLoopBackoff asserts closed-loop users wait the failure backoff
// after each failure instead of hammering a refused port.
func checkClosedLoopBackoff(t *testing.T, r *caseRun) {
	const users = 4
	perUser := 1
	for at := minWait(2); at < probeWindow; at += minWait(perUser + 2) {
		perUser++
	}
	if n := len(r.probeRecs); n > users*perUser {
		t.Errorf("probe: %d requests from %d closed-loop users in %v; with the failure backoff at most %d", n, users, probeWindow, users*perUser)
	}
	byUser := map[int][]ledger.Record{}
	for _, rec := range r.probeRecs {
		byUser[rec.User] = append(byUser[rec.User], rec)
	}
	for u, recs := range byUser {
		sort.Slice(recs, func(i, j int) bool { return recs[i].Planned < recs[j].Planned })
		for i := 1; i < len(recs); i++ {
			if wait := recs[i].Planned - recs[i-1].End; wait < minWait(i+1)-time.Millisecond {
				t.Errorf("probe: user %d sent again %v after a failure; want at least %v", u, wait, minWait(i+1))
			}
		}
	}
}

// checkRetryBackoff asserts every retry waited its backoff after the
// attempt it repeats.
func checkRetryBackoff(t *testing.T, r *caseRun) {
	for what, recs := range map[string][]ledger.Record{"probe": r.probeRecs, "run": r.daemonRecs} {
		byID := map[uint64]*ledger.Record{}
		for i := range recs {
			byID[recs[i].ID] = &recs[i]
		}
		retries := 0
		for _, rec := range recs {
			if rec.RetryOf == 0 {
				continue
			}
			retries++
			prev := byID[rec.RetryOf]
			if prev == nil {
				t.Errorf("%s: record %d retries %d, which is not in the ledger", what, rec.ID, rec.RetryOf)
				continue
			}
			if wait := rec.Planned - prev.End; wait < minWait(rec.Attempt)-time.Millisecond {
				t.Errorf("%s: record %d (attempt %d) planned %v after its previous attempt ended; want at least %v",
					what, rec.ID, rec.Attempt, wait, minWait(rec.Attempt))
			}
		}
		if retries == 0 {
			t.Errorf("%s: no retry in the ledger", what)
		}
	}
}

// checkBudgetSpent asserts a believable but huge usage spends the daemon's
// token budget at once, and nothing passes it afterwards.
func checkBudgetSpent(t *testing.T, r *caseRun) {
	if r.metrics.fams == nil {
		return
	}
	got := tally(r.daemonRecs)
	if got["unsent/budget"] == 0 || got["ok/stop"] > 2 {
		t.Errorf("run: %s; want the first answer (or two in flight together) to spend the budget and the rest unsent/budget", keysOf(got))
	}
	sel := map[string]string{"target": "chaos"}
	if rem := r.metrics.sum("llmprobe_budget_remaining_tokens", sel); !r.metrics.has("llmprobe_budget_remaining_tokens", sel) || rem != 0 {
		t.Errorf("run: llmprobe_budget_remaining_tokens %v, want 0", rem)
	}
}

// checkInterrupted asserts the probe stopped its arrivals early on SIGHUP
// and said so.
func checkInterrupted(t *testing.T, r *caseRun) {
	noted := false
	for _, n := range r.report.Notes {
		noted = noted || strings.Contains(n, "interrupted")
	}
	if !noted {
		t.Errorf("probe: the report does not say it was interrupted; notes %q", r.report.Notes)
	}
	if full := int(r.c.rate() * probeWindow.Seconds()); r.report.Planned >= full {
		t.Errorf("probe: %d arrivals planned, the whole window's %d: SIGHUP did not end the window early", r.report.Planned, full)
	}
}

// hostInvalid reports whether a probe's JSON report says its generator
// was invalid only for the prober host (a busy machine: exit 4 with the
// host named as the cause, as the README promises), and says so.
func hostInvalid(t *testing.T, stdout []byte) bool {
	var rep report.Probe
	if json.Unmarshal(stdout, &rep) != nil || rep.Valid || len(rep.InvalidCauses) == 0 {
		return false
	}
	var causes []verdict.InvalidCause
	for _, c := range rep.InvalidCauses {
		causes = append(causes, verdict.InvalidCause{Cause: cause.Cause(c.Cause)})
	}
	if !verdict.HostCaused(causes) {
		return false
	}
	t.Logf("probe: generator invalid for the prober host (a busy machine), exit 4 accepted: %q", rep.InvalidReasons)
	return true
}
