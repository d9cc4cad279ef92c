package main

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/cause"
	"github.com/llmprobe/llmprobe/internal/ladder"
	"github.com/llmprobe/llmprobe/internal/ladderresult"
	"github.com/llmprobe/llmprobe/internal/ledger"
	"github.com/llmprobe/llmprobe/internal/report"
	"github.com/llmprobe/llmprobe/internal/stats"
	"github.com/llmprobe/llmprobe/internal/verdict"
)

// lenient keeps a loaded test machine from making the generator invalid
// where the test is about another exit code.
var lenient = []string{"--max-lag-p99", "1s"}

// TestExitCodes runs the CLI into each exit code.
func TestExitCodes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		args []string
		want int
		says string // on stderr
	}{
		{"fine", append([]string{"probe", "--rate", "10", "--duration", "1s", "--arrival", "constant", "--max-tokens", "8"}, lenient...), exitOK, ""},
		{"usage", []string{"ladder", "--on-invalid", "shrug"}, exitUsage, "--on-invalid"},
		{"error: ledger cannot be created", []string{"probe", "--duration", "1s", "--ledger", filepath.Join(t.TempDir(), "no-such-dir", "l.jsonl")}, exitError, "--ledger"},
		{"no request succeeded: refused port", []string{"probe", "--url", "http://" + closedPort(t) + "/v1", "--rate", "9", "--duration", "1s", "--arrival", "constant"},
			exitNoSuccess, "no request succeeded: 0 of 9 planned arrivals ended ok (transport_error 9)"},
		{"generator invalid: in-flight cap", append([]string{"probe", "--rate", "20", "--duration", "1s", "--arrival", "constant", "--max-in-flight", "1", "--max-tokens", "64"}, lenient...),
			exitGeneratorInvalid, "generator invalid (in_flight_cap)"},
		{"gates failed", append([]string{"probe", "--rate", "10", "--duration", "1s", "--arrival", "constant", "--max-tokens", "8", "--slo-ttft", "1ns"}, lenient...),
			exitGatesFailed, "gates failed: good fraction 0.0% below --good-fraction 90.0%"},
		{"gates met below --good-fraction", append([]string{"probe", "--rate", "10", "--duration", "1s", "--arrival", "constant", "--max-tokens", "8", "--slo-ttft", "1h", "--good-fraction", "1"}, lenient...),
			exitOK, ""},
		{"ledger not written", append([]string{"probe", "--rate", "10", "--duration", "1s", "--max-tokens", "8", "--ledger", "/dev/full"}, lenient...),
			exitNotWritten, "ledger not written"},
		{"ladder: no capacity", append([]string{"ladder", "--steps", "5,10", "--step-duration", "1s", "--gap", "0s", "--max-tokens", "8", "--slo-ttft", "1ns",
			"--abort-ttft-gate-multiple", "0", "--on-invalid", "continue", "--arrival", "constant"}, lenient...), exitLadderNoCapacity, "no capacity: no valid step met the gates"},
		{"ladder: aborted", append([]string{"ladder", "--steps", "5,10", "--step-duration", "1s", "--gap", "0s", "--max-tokens", "8", "--slo-ttft", "1ns",
			"--abort-ttft-gate-multiple", "1", "--arrival", "constant"}, lenient...), exitLadderNoCapacity, "ladder aborted before any capacity was measured: step 1"},
		{"ladder: no valid step", append([]string{"ladder", "--steps", "20,40", "--step-duration", "1s", "--gap", "0s", "--max-tokens", "64", "--max-in-flight", "1",
			"--on-invalid", "continue", "--arrival", "constant"}, lenient...), exitGeneratorInvalid, "generator invalid: no step was valid"},
		{"ladder: an invalid step aborts it", append([]string{"ladder", "--steps", "20,40", "--step-duration", "1s", "--gap", "0s", "--max-tokens", "64", "--max-in-flight", "1",
			"--arrival", "constant"}, lenient...), exitGeneratorInvalid, "generator invalid: step 1 (in_flight_cap) stopped the ladder"},
		{"ladder: history not written", append([]string{"ladder", "--steps", "5", "--step-duration", "1s", "--max-tokens", "8", "--history", "/dev/full", "--arrival", "constant"}, lenient...),
			exitNotWritten, "ladder history not written"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if strings.Contains(strings.Join(tc.args, " "), "/dev/full") && runtime.GOOS != "linux" {
				t.Skip("/dev/full is Linux's")
			}
			r := mustExit(t, []int{tc.want}, tc.args...)
			if tc.says != "" && !strings.Contains(r.stderr, tc.says) {
				t.Errorf("stderr lacks %q:\n%s", tc.says, r.stderr)
			}
			if tc.want > exitUsage && !strings.Contains(r.stderr, "exit "+strconv.Itoa(tc.want)+": ") {
				t.Errorf("stderr does not give the exit code and why:\n%s", r.stderr)
			}
		})
	}
}

// TestExitPrecedence: when several codes apply, the table's order decides.
func TestExitPrecedence(t *testing.T) {
	invalid := verdict.Validity{Causes: []verdict.InvalidCause{{Cause: cause.HostStarved}}}
	for _, tc := range []struct {
		name string
		s    stats.Summary
		lost int
		want int
	}{
		{"fine", stats.Summary{Planned: 10, Completed: 10, Good: 10, GoodFraction: 1, Validity: verdict.Validity{Valid: true}}, 0, exitOK},
		{"nothing ok beats invalid", stats.Summary{Planned: 10, Validity: invalid}, 0, exitNoSuccess},
		{"nothing planned", stats.Summary{Validity: verdict.Validity{Valid: true}}, 0, exitNoSuccess},
		{"lost records beat everything", stats.Summary{Planned: 10, Validity: invalid}, 3, exitNotWritten},
		{"invalid beats gates", stats.Summary{Planned: 10, Completed: 10, GoodFraction: 0, Validity: invalid}, 0, exitGeneratorInvalid},
		{"gates", stats.Summary{Planned: 10, Completed: 10, GoodFraction: 0.5, Validity: verdict.Validity{Valid: true}}, 0, exitGatesFailed},
	} {
		if got := codeOf(probeExit(tc.s, true, 0.9, tc.lost, nil)); got != tc.want {
			t.Errorf("probe %s: exit %d, want %d", tc.name, got, tc.want)
		}
	}
	step := func(n int, valid bool, ok int) ladderresult.LadderStep {
		return ladderresult.LadderStep{Index: n, Summary: stats.Summary{Planned: 10, Completed: ok, Validity: verdict.Validity{Valid: valid}}}
	}
	for _, tc := range []struct {
		name string
		res  ladder.Result
		hist error
		want int
	}{
		{"capacity", ladder.Result{Steps: []ladderresult.LadderStep{step(1, true, 10)}, Verdict: ladderresult.Verdict{CapacityStep: 1}}, nil, exitOK},
		{"lower bound with an invalid step above, not aborted", ladder.Result{Steps: []ladderresult.LadderStep{step(1, true, 10), step(2, false, 10)}, Verdict: ladderresult.Verdict{CapacityStep: 1}}, nil, exitOK},
		{"no capacity", ladder.Result{Steps: []ladderresult.LadderStep{step(1, true, 10)}}, nil, exitLadderNoCapacity},
		{"aborted before any capacity", ladder.Result{Steps: []ladderresult.LadderStep{step(1, true, 3)}, Aborted: true}, nil, exitLadderNoCapacity},
		{"aborted after capacity", ladder.Result{Steps: []ladderresult.LadderStep{step(1, true, 10), step(2, true, 3)}, Verdict: ladderresult.Verdict{CapacityStep: 1}, Aborted: true}, nil, exitOK},
		{"interrupted after capacity", ladder.Result{Steps: []ladderresult.LadderStep{step(1, true, 10), aborted(step(2, true, 3), ladder.ReasonInterrupted)}, Verdict: ladderresult.Verdict{CapacityStep: 1}, Aborted: true, AbortReason: "step 2: interrupted"}, nil, exitLadderNoCapacity},
		{"aborted by the generator rule", ladder.Result{Steps: []ladderresult.LadderStep{step(1, true, 10), aborted(step(2, false, 10), "generator invalid: x")}, Verdict: ladderresult.Verdict{CapacityStep: 1}, Aborted: true}, nil, exitGeneratorInvalid},
		{"aborted by the TTFT rule on an invalid step", ladder.Result{Steps: []ladderresult.LadderStep{step(1, true, 10), aborted(step(2, false, 10), "mid-step: TTFT p95 9s above 5 × gate 1s")}, Verdict: ladderresult.Verdict{CapacityStep: 1}, Aborted: true}, nil, exitOK},
		{"nothing valid", ladder.Result{Steps: []ladderresult.LadderStep{step(1, false, 10)}}, nil, exitGeneratorInvalid},
		{"nothing ok", ladder.Result{Steps: []ladderresult.LadderStep{step(1, false, 0)}, Aborted: true}, nil, exitNoSuccess},
		{"history", ladder.Result{Steps: []ladderresult.LadderStep{step(1, true, 0)}}, errors.New("x"), exitNotWritten},
	} {
		if got := codeOf(ladderExit(tc.res, tc.hist)); got != tc.want {
			t.Errorf("ladder %s: exit %d, want %d", tc.name, got, tc.want)
		}
	}
}

func aborted(r ladderresult.LadderStep, why string) ladderresult.LadderStep {
	r.AbortReason = why
	return r
}

func codeOf(err error) int {
	if err == nil {
		return exitOK
	}
	return exitCodeOf(err)
}

// TestExitCodesDocumented: README's exit-code table lists exactly the codes
// of exitCodes, and --help prints them.
func TestExitCodesDocumented(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	i := strings.Index(string(b), "### Exit codes")
	if i < 0 {
		t.Fatal("README has no \"### Exit codes\" section")
	}
	section := string(b)[i:]
	if j := strings.Index(section[4:], "\n#"); j >= 0 {
		section = section[:j+4]
	}
	rows := regexp.MustCompile("(?m)^\\| `?(\\d+)`? \\|").FindAllStringSubmatch(section, -1)
	var documented []int
	for _, r := range rows {
		n, _ := strconv.Atoi(r[1])
		documented = append(documented, n)
	}
	var defined []int
	for _, c := range exitCodes {
		defined = append(defined, c.code)
	}
	if len(documented) != len(defined) {
		t.Fatalf("README documents exit codes %v, the code defines %v", documented, defined)
	}
	for i := range defined {
		if documented[i] != defined[i] {
			t.Fatalf("README documents exit codes %v, the code defines %v", documented, defined)
		}
	}
	r := invoke(t.Context(), "--help")
	for _, c := range exitCodes {
		if !strings.Contains(r.stdout, strconv.Itoa(c.code)+"  "+c.meaning) {
			t.Errorf("--help lacks exit code %d", c.code)
		}
	}
}

// TestSeedExperimentsExact reproduces the seed experiments through the
// probe command: one request a second for 10 s plans 10 (not 9), 40/s for
// 4 s plans 160 (not 159).
func TestSeedExperimentsExact(t *testing.T) {
	if testing.Short() {
		t.Skip("full tier: 14 s of real probes (1 req/s for 10 s, 40 req/s for 4 s) to count every planned arrival")
	}
	t.Parallel()
	for _, tc := range []struct {
		rate, duration string
		want           int
	}{{"1", "10s", 10}, {"40", "4s", 160}} {
		t.Run(tc.rate+"x"+tc.duration, func(t *testing.T) {
			t.Parallel()
			path := tempPath(t, "seed.jsonl")
			r := completes(t, "probe", "--rate", tc.rate, "--duration", tc.duration, "--arrival", "constant",
				"--max-tokens", "8", "--json", "--ledger", path)
			p := decodeProbe(t, r)
			_, recs := readLedger(t, path)
			if p.Planned != tc.want || len(recs) != tc.want {
				t.Fatalf("planned %d (ledger %d records), want exactly %d", p.Planned, len(recs), tc.want)
			}
			// A constant grid: consecutive arrivals exactly 1/rate apart.
			rate, _ := strconv.ParseFloat(tc.rate, 64)
			planned := make([]time.Duration, len(recs))
			for i, rec := range recs {
				planned[i] = rec.Planned
			}
			slices.Sort(planned)
			for i := 1; i < len(planned); i++ {
				if d := planned[i] - planned[i-1] - time.Duration(1e9/rate); d > time.Microsecond || d < -time.Microsecond {
					t.Fatalf("arrivals %d and %d are %v apart, want %v", i, i+1, planned[i]-planned[i-1], time.Duration(1e9/rate))
				}
			}
		})
	}
}

// TestStarvedGeneratorNamesHost starves the prober on purpose (one
// processor, three goroutines spinning) while a probe runs: its generator
// falls behind, the verdict is invalid, and the cause named is the starved
// host, with the Go scheduler latency that shows it. Not parallel: it
// changes GOMAXPROCS for the process.
func TestStarvedGeneratorNamesHost(t *testing.T) {
	if testing.Short() {
		t.Skip("full tier: starves the prober on purpose (GOMAXPROCS 1, spinning goroutines) through seconds of probe")
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	var stop atomic.Bool
	var wg sync.WaitGroup
	for range 3 {
		wg.Go(func() {
			x := 0
			for !stop.Load() {
				x++
			}
			_ = x
		})
	}
	r := mustExit(t, []int{exitGeneratorInvalid}, "probe", "--rate", "50", "--duration", "2s", "--arrival", "constant",
		"--max-tokens", "4", "--drain", "20s", "--json")
	stop.Store(true)
	wg.Wait()
	p := decodeProbe(t, r)
	var host *report.CauseJSON
	for i, c := range p.InvalidCauses {
		if c.Cause == string(cause.HostStarved) {
			host = &p.InvalidCauses[i]
		}
	}
	if host == nil {
		t.Fatalf("causes %+v: want host_starved (host %+v)", p.InvalidCauses, p.Host)
	}
	if !strings.Contains(host.Reason, "prober host starved: ") || !strings.Contains(host.Reason, "Go scheduler latency p99") ||
		!strings.Contains(host.WhatToDo, "more CPU") || !strings.Contains(host.WhatToDo, "do not spin-wait") {
		t.Errorf("cause %+v", host)
	}
	if p.Host == nil || p.Host.SchedLatencyP99 == nil || *p.Host.SchedLatencyP99 < 0.0025 {
		t.Errorf("host health %+v: want a scheduler latency p99 of at least a quarter of 10ms", p.Host)
	}
	if !strings.Contains(r.stderr, "exit 4: generator invalid (host_starved") {
		t.Errorf("stderr: %s", lastLine(r.stderr))
	}
}

// TestThinkTimeBareDuration: --think-time 900ms is a constant 900 ms.
func TestThinkTimeBareDuration(t *testing.T) {
	if testing.Short() {
		t.Skip("full tier: seconds of closed-loop probe with 900 ms think times")
	}
	// Each user thinks 900 ms before each request: 3 s holds up to three
	// requests per user, and its first one has 2 s to spare for a busy
	// host's late timer (with 1 s, a 100 ms late timer planned nothing).
	r := completes(t, "probe", "--closed-loop-users", "2", "--think-time", "900ms", "--duration", "3s", "--max-tokens", "4", "--json")
	if p := decodeProbe(t, r); p.Mode != string(ledger.ModeClosed) || p.Planned < 2 || p.Planned > 6 {
		t.Errorf("closed loop with 900ms think time: mode %s, planned %d (want a few per user)", p.Mode, p.Planned)
	}
}

// TestLadderTitleNamesTarget: the ladder's reports name the target (the
// simulator's address, the URL, or --name), never "ladder: ladder".
func TestLadderTitleNamesTarget(t *testing.T) {
	t.Parallel()
	htmlPath := tempPath(t, "l.html")
	r := mustExit(t, ladderCodes, append([]string{"ladder", "--steps", "5", "--step-duration", "1s", "--max-tokens", "8", "--arrival", "constant", "--html", htmlPath}, lenient...)...)
	page, err := os.ReadFile(htmlPath)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(r.stdout, "llmprobe ladder: built-in simulator (127.0.0.1:") || strings.Contains(string(page), "ladder: ladder") ||
		!strings.Contains(string(page), "<title>llmprobe ladder: built-in simulator (127.0.0.1:") {
		t.Errorf("title does not name the simulator:\n%s", r.stdout)
	}
	r = mustExit(t, ladderCodes, append([]string{"ladder", "--steps", "5", "--step-duration", "1s", "--max-tokens", "8", "--arrival", "constant", "--name", "staging-gpu", "--json"}, lenient...)...)
	if !strings.Contains(r.stdout, `"target": "staging-gpu"`) {
		t.Errorf("--name not used:\n%s", r.stdout)
	}
	if got := (&targetFlags{url: "https://api.example.com/v1/?x=1"}).displayName(""); got != "https://api.example.com/v1" {
		t.Errorf("display name %q: want scheme, host and path only", got)
	}
}

// TestLadderAbortedByTargetExits6: a target that stops answering mid-step
// trips the in-step TTFT rule after about a second of a 20 s step. The
// step's arrivals stopped early, so it is judged over the time they ran:
// the generator kept its schedule (no rate_not_reached), the exit is 6
// (aborted), not 4 (generator invalid), and the history line says so.
// Judged over the full 20 s it was "0 dispatched … for 800.0 expected".
func TestLadderAbortedByTargetExits6(t *testing.T) {
	if testing.Short() {
		t.Skip("full tier: a whole ladder in real time until the target's failures abort it")
	}
	t.Parallel()
	s := newSim(t, fastSim())
	var n atomic.Int64
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) > 30 { // then it stalls: no headers, no token
			select {
			case <-r.Context().Done():
			case <-release:
			}
			return
		}
		s.Handler().ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) }) // before Close: it waits for the handlers
	hist := tempPath(t, "h.jsonl")
	args := append([]string{"ladder", "--url", srv.URL + "/v1", "--steps", "40", "--step-duration", "20s", "--arrival", "constant",
		"--max-tokens", "8", "--slo-ttft", "100ms", "--abort-ttft-gate-multiple", "5",
		"--timeout-connect", "1s", "--timeout-headers", "2s", "--timeout-first-content", "2s", "--timeout-idle", "2s", "--timeout-total", "3s",
		"--history", hist}, lenient...)
	r := mustExit(t, []int{exitLadderNoCapacity}, args...)
	if !strings.Contains(r.stderr, "ladder aborted before any capacity was measured: step 1: mid-step: TTFT p95 above 5 × gate 100ms") {
		t.Errorf("stderr does not name the abort:\n%s", r.stderr)
	}
	b, err := os.ReadFile(hist)
	if err != nil {
		t.Fatal(err)
	}
	var res ladder.Result
	if err := json.Unmarshal(b, &res); err != nil {
		t.Fatalf("history line: %v\n%s", err, b)
	}
	if len(res.Steps) != 1 || !(res.Steps[0].Summary.Validity.Valid || verdict.HostCaused(res.Steps[0].Summary.Validity.Causes)) {
		t.Fatalf("steps %+v: want one valid step (or one invalid for the prober host)", res.Steps)
	}
	st := res.Steps[0]
	if offered := st.Summary.Planned + st.Summary.Pending; offered >= 400 || st.Summary.AchievedRate < 20 || st.Summary.AchievedRate > 60 {
		t.Errorf("%d arrivals offered at %g req/s: want the step stopped early (under half its 800) and its rate about 40 req/s over the time it ran",
			offered, st.Summary.AchievedRate)
	}
}
