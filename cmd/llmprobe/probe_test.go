package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/ledger"
	"github.com/llmprobe/llmprobe/internal/report"
	"github.com/llmprobe/llmprobe/internal/sim"
	"github.com/llmprobe/llmprobe/internal/verdict"
)

// TestStallOpenVersusClosedLoop is issue 2's "Show": against a simulator
// that stalls, the open-loop run's median and tail carry the stall, while a
// closed-loop run at a similar rate sends fewer requests during the stall
// and its median hides it.
func TestStallOpenVersusClosedLoop(t *testing.T) {
	if testing.Short() {
		t.Skip("full tier: open and closed loop each through a 2 s stall of the target (internal/dispatch proves the open loop never waits, in both tiers)")
	}
	const (
		stallStart = time.Second
		stall      = 2 * time.Second
	)
	// Six slots of ≈0.2 s each serve ≈30 req/s: 20 req/s runs unqueued until
	// the stall, whose backlog then takes seconds to clear (as on a real
	// server), so the stall reaches arrivals planned after it too.
	common := []string{"probe", "--sim-stall", fmt.Sprintf("%v+%v", stallStart, stall),
		"--sim-slots", "6", "--sim-admission", "1000", "--max-tokens", "16",
		"--duration", "6s", "--arrival", "constant", "--json", "--drain", "20s"}
	type run struct {
		args   []string
		path   string
		res    result
		probe  report.Probe
		header ledger.RunHeader
		recs   []ledger.Record
	}
	runs := map[string]*run{
		"open":   {args: []string{"--rate", "20"}},
		"closed": {args: []string{"--closed-loop-users", "6", "--think-time", "constant:50ms"}},
	}
	// Both runs at once: each has its own simulator, and the comparison is
	// between them, so shared machine noise cancels.
	var wg sync.WaitGroup
	for name, r := range runs {
		r.path = tempPath(t, name+".jsonl")
		args := append(slices.Clone(common), r.args...)
		args = append(args, "--ledger", r.path)
		wg.Go(func() { r.res = invoke(t.Context(), args...) })
	}
	wg.Wait()
	for name, r := range runs {
		if r.res.code != exitOK && r.res.code != exitGeneratorInvalid {
			t.Fatalf("%s run: exit %d\n%s", name, r.res.code, r.res.stderr)
		}
		r.probe = decodeProbe(t, r.res)
		r.header, r.recs = readLedger(t, r.path)
	}
	open, closed := runs["open"], runs["closed"]
	for name, r := range runs {
		if r.probe.Mode != name || string(r.header.Mode) != name {
			t.Errorf("%s run: JSON mode %q, ledger header mode %q", name, r.probe.Mode, r.header.Mode)
		}
		for _, rec := range r.recs {
			if string(rec.Mode) != name {
				t.Fatalf("%s run: record %d has mode %q", name, rec.ID, rec.Mode)
			}
		}
		checkLedgerInvariants(t, r.recs)
		if r.probe.Outcomes["ok"] != r.probe.Planned || r.probe.Planned != len(r.recs) {
			t.Errorf("%s run: ok %d, planned %d, ledger records %d: want all equal (no failures expected)",
				name, r.probe.Outcomes["ok"], r.probe.Planned, len(r.recs))
		}
		t.Logf("%s: planned %d, achieved %.1f/s, TTFT p50 %.3fs p90 %.3fs p99 %.3fs (n=%d)",
			name, r.probe.Planned, r.probe.AchievedRate, r.probe.TTFT.P50, r.probe.TTFT.P90, r.probe.TTFT.P99, r.probe.TTFT.Count)
	}
	if !strings.Contains(strings.Join(closed.probe.Notes, " "), "closed loop") {
		t.Errorf("closed run: notes %q do not label it closed loop", closed.probe.Notes)
	}

	// The rates are comparable (the closed loop's is set by its users).
	// A starved host slows the closed loop (its users wait on a simulator
	// and a client short of CPU) but not the open loop's schedule: the
	// runs are then not comparable, for a host cause.
	if ratio := closed.probe.AchievedRate / open.probe.AchievedRate; ratio < 0.4 || ratio > 2.5 {
		if why := hostStarvedJSON(closed.probe.Host); why != "" {
			t.Skipf("closed/open achieved rate ratio %.2f: the runs are not comparable on a starved host (%s)", ratio, why)
		}
		t.Errorf("closed/open achieved rate ratio %.2f: the runs are not comparable", ratio)
	}

	s := stall.Seconds()
	// Open loop: the tail carries (most of) the stall, and so does the median.
	if got := open.probe.TTFT.P99; got < 0.5*s {
		t.Errorf("open TTFT p99 %.3fs: want ≥ %.3fs (half the %v stall)", got, 0.5*s, stall)
	}
	if got := open.probe.TTFT.P50; got < 0.2*s {
		t.Errorf("open TTFT p50 %.3fs: want ≥ %.3fs (the median carries the stall)", got, 0.2*s)
	}
	// Closed loop: the median hides it.
	if got := closed.probe.TTFT.P50; got > 0.15*s || got > open.probe.TTFT.P50/3 || got > open.probe.TTFT.P99/5 {
		t.Errorf("closed TTFT p50 %.3fs: want well below the stall (%.3fs), open p50 %.3fs and open p99 %.3fs",
			got, s, open.probe.TTFT.P50, open.probe.TTFT.P99)
	}

	// Requests planned inside the stall (past its first 200 ms, so that a
	// user that had just been answered does not count): the open loop keeps
	// sending on schedule, the closed loop's users are all stuck waiting.
	lo, hi := stallStart+200*time.Millisecond, stallStart+stall
	inStall := func(recs []ledger.Record) int {
		n := 0
		for _, r := range recs {
			if r.Planned >= lo && r.Planned < hi && r.Sent() {
				n++
			}
		}
		return n
	}
	no, nc := inStall(open.recs), inStall(closed.recs)
	t.Logf("requests sent with a planned time in [%v, %v): open %d, closed %d", lo, hi, no, nc)
	if want := int(0.8 * 20 * (hi - lo).Seconds()); no < want {
		t.Errorf("open loop sent %d requests planned inside the stall: want ≥ %d (it must keep its schedule)", no, want)
	}
	if nc*3 > no {
		t.Errorf("closed loop sent %d requests planned inside the stall, open %d: want the closed loop far fewer", nc, no)
	}
}

// TestCappedOpenLoop: an in-flight cap against a slow target suppresses
// arrivals; every one of them stays in the ledger as unsent/client_cap at
// its planned time, and the run is flagged invalid.
func TestCappedOpenLoop(t *testing.T) {
	t.Parallel()
	const rate, window = 20.0, 2 * time.Second
	path := tempPath(t, "capped.jsonl")
	// The default simulator takes ≈0.6 s per 64-token request: a cap of two
	// lets about 3 req/s through.
	// Arrivals unsent at the cap make the generator invalid: exit 4, the
	// cause named.
	res := mustExit(t, []int{exitGeneratorInvalid}, "probe", "--rate", "20", "--duration", window.String(), "--arrival", "constant",
		"--max-in-flight", "2", "--max-tokens", "64", "--json", "--ledger", path)
	p := decodeProbe(t, res)
	found := false
	for _, c := range p.InvalidCauses {
		found = found || (c.Cause == "in_flight_cap" && c.WhatToDo != "")
	}
	if !found || !strings.Contains(res.stderr, "in_flight_cap") {
		t.Errorf("invalid causes %+v (stderr %q): want in_flight_cap with what to do", p.InvalidCauses, lastLine(res.stderr))
	}
	_, recs := readLedger(t, path)
	checkLedgerInvariants(t, recs)

	byO, byR := countOutcomes(recs)
	if p.Planned != len(recs) {
		t.Errorf("planned %d, ledger records %d", p.Planned, len(recs))
	}
	if p.Planned != p.Dispatched+p.Unsent {
		t.Errorf("planned %d ≠ dispatched %d + unsent %d", p.Planned, p.Dispatched, p.Unsent)
	}
	if p.Unsent == 0 || p.Dispatched == 0 {
		t.Fatalf("dispatched %d, unsent %d: want both > 0 with a cap of 2 at %v req/s", p.Dispatched, p.Unsent, rate)
	}
	if byR["unsent/client_cap"] != p.Unsent || byO[ledger.Unsent] != p.Unsent {
		t.Errorf("ledger unsent/client_cap %d (unsent %d), report unsent %d", byR["unsent/client_cap"], byO[ledger.Unsent], p.Unsent)
	}
	for _, o := range ledger.Outcomes {
		if p.Outcomes[string(o)] != byO[o] {
			t.Errorf("outcome %s: report %d, ledger %d", o, p.Outcomes[string(o)], byO[o])
		}
	}
	if p.Reasons["unsent"]["client_cap"] != p.Unsent {
		t.Errorf("report reasons unsent/client_cap %d, want %d", p.Reasons["unsent"]["client_cap"], p.Unsent)
	}
	if p.Valid {
		t.Error("capped run reported valid")
	}
	if !strings.Contains(strings.Join(p.InvalidReasons, "; "), "client_cap") {
		t.Errorf("invalid reasons %q: want one naming client_cap", p.InvalidReasons)
	}

	// Every planned arrival of the constant schedule is present, the
	// suppressed ones included: the planned offsets form one unbroken
	// sequence 1/rate apart (they come from the schedule, not a clock).
	planned := make([]time.Duration, 0, len(recs))
	for _, r := range recs {
		planned = append(planned, r.Planned)
		if r.Outcome == ledger.Unsent && (r.Dispatched != 0 || r.Headers != 0 || r.FirstContent != 0) {
			t.Errorf("unsent record %d carries response times: %+v", r.ID, r)
		}
	}
	slices.Sort(planned)
	step := time.Duration(float64(time.Second) / rate)
	for i := 1; i < len(planned); i++ {
		if d := planned[i] - planned[i-1]; d < step-time.Millisecond || d > step+time.Millisecond {
			t.Fatalf("planned offsets %v and %v are %v apart: want %v (an arrival is missing)", planned[i-1], planned[i], d, step)
		}
	}
	if want := int(rate * window.Seconds()); len(planned) < want-1 || len(planned) > want+1 {
		t.Errorf("%d planned arrivals: want %d", len(planned), want)
	}

	// The cap held: never more than two requests between dispatch and end.
	if got := maxConcurrent(recs); got > 2 {
		t.Errorf("%d requests in flight at once: the cap is 2", got)
	}
}

// maxConcurrent is the most sent records whose [dispatched, end) intervals
// overlap.
func maxConcurrent(recs []ledger.Record) int {
	type ev struct {
		at    time.Duration
		delta int
	}
	var evs []ev
	for _, r := range recs {
		if r.Sent() {
			evs = append(evs, ev{r.Dispatched, +1}, ev{r.End, -1})
		}
	}
	slices.SortFunc(evs, func(a, b ev) int {
		if a.at != b.at {
			return int(a.at - b.at)
		}
		return a.delta - b.delta // ends before starts at the same instant
	})
	n, best := 0, 0
	for _, e := range evs {
		n += e.delta
		best = max(best, n)
	}
	return best
}

// outcomeLine matches the text report's line for one outcome:
// "  transport_error  7  connection_refused 7".
func outcomeLine(o ledger.Outcome) *regexp.Regexp {
	return regexp.MustCompile(`(?m)^\s+` + string(o) + `\s+(\d+)\s+(.*)$`)
}

// TestBadInput: each kind of bad target gives a clear outcome in the ledger
// and a clear line in the human report.
func TestBadInput(t *testing.T) {
	t.Parallel()
	wrongModel := sim.DefaultConfig()
	wrongModel.Models = []string{"the-real-model"}
	withKey := sim.DefaultConfig()
	withKey.APIKey = "sim-required-key-0123456789"
	html := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = io.WriteString(w, "<!doctype html><html><body>welcome to the login page</body></html>")
	}))
	t.Cleanup(html.Close)

	tests := []struct {
		name    string
		url     string
		outcome ledger.Outcome
		reason  ledger.Reason
	}{
		{"unreachable", "http://" + closedPort(t) + "/v1", ledger.TransportError, ledger.ReasonConnectionRefused},
		{"wrong model", startSim(t, wrongModel), ledger.HTTPError, ledger.ReasonNotFound},
		{"401", startSim(t, withKey), ledger.HTTPError, ledger.ReasonUnauthorized},
		{"not SSE", html.URL + "/v1", ledger.StreamError, ledger.ReasonContentType},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			path := tempPath(t, "bad.jsonl")
			// Not one request succeeded: exit 3, whatever the generator did.
			res := mustExit(t, []int{exitNoSuccess}, "probe", "--url", tc.url, "--rate", "10", "--duration", "1s",
				"--arrival", "constant", "--drain", "10s", "--ledger", path)
			if !strings.Contains(res.stderr, "no request succeeded: 0 of") {
				t.Errorf("stderr does not say why it failed: %s", res.stderr)
			}
			_, recs := readLedger(t, path)
			checkLedgerInvariants(t, recs)
			if len(recs) < 9 {
				t.Fatalf("%d records: want ≈10 planned arrivals", len(recs))
			}
			for _, r := range recs {
				if r.Outcome != tc.outcome || r.Reason != tc.reason {
					t.Fatalf("record %d: %s/%s, want %s/%s", r.ID, r.Outcome, r.Reason, tc.outcome, tc.reason)
				}
			}
			m := outcomeLine(tc.outcome).FindStringSubmatch(res.stdout)
			if m == nil {
				t.Fatalf("report has no %s line:\n%s", tc.outcome, res.stdout)
			}
			if n, _ := strconv.Atoi(m[1]); n != len(recs) {
				t.Errorf("report line %q: want count %d", m[0], len(recs))
			}
			if want := fmt.Sprintf("%s %d", tc.reason, len(recs)); !strings.Contains(m[2], want) {
				t.Errorf("report line %q: want %q", m[0], want)
			}
			if !regexp.MustCompile(fmt.Sprintf(`(?m)^\s+planned\s+%d\s`, len(recs))).MatchString(res.stdout) {
				t.Errorf("report does not show planned %d:\n%s", len(recs), res.stdout)
			}
			if ok := outcomeLine(ledger.OK).FindStringSubmatch(res.stdout); ok == nil || ok[1] != "0" {
				t.Errorf("report ok line %q: want 0", ok)
			}
			// A URL never reaches the report or the ledger.
			host := strings.TrimPrefix(strings.TrimSuffix(tc.url, "/v1"), "http://")
			ledgerBytes, _ := os.ReadFile(path)
			if strings.Contains(res.stdout, host) || strings.Contains(string(ledgerBytes), host) {
				t.Errorf("target address %s appears in the report or ledger", host)
			}
		})
	}
}

// TestLedgerUnwritable: a --ledger path that cannot be created stops the
// probe before it sends anything, naming the flag.
func TestLedgerUnwritable(t *testing.T) {
	t.Parallel()
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		http.Error(w, "unexpected", http.StatusTeapot)
	}))
	t.Cleanup(srv.Close)
	path := filepath.Join(t.TempDir(), "no-such-dir", "ledger.jsonl")
	r := invoke(t.Context(), "probe", "--url", srv.URL+"/v1", "--rate", "20", "--duration", "1s", "--ledger", path)
	if r.code == 0 || !strings.Contains(r.stderr, "--ledger") || !strings.Contains(r.stderr, "no-such-dir") {
		t.Errorf("exit %d, stderr %q: want failure naming --ledger and the path", r.code, r.stderr)
	}
	if r.stdout != "" || hits.Load() != 0 {
		t.Errorf("stdout %q, %d requests sent: want nothing", r.stdout, hits.Load())
	}
}

// TestClosedLoopDoesNotHammer (issue 8, defect 6): closed-loop users with no
// think time against a refused port wait the failure backoff (100 ms
// doubling, half of it jittered) after each failure: a handful of requests
// per user in two seconds, not thousands.
func TestClosedLoopDoesNotHammer(t *testing.T) {
	t.Parallel()
	path := tempPath(t, "closed.jsonl")
	mustExit(t, []int{exitNoSuccess}, "probe", "--url", "http://"+closedPort(t)+"/v1", "--closed-loop-users", "4", "--duration", "2s",
		"--json", "--ledger", path)
	_, recs := readLedger(t, path)
	checkLedgerInvariants(t, recs)
	// Shortest waits with jitter 0.5: 50, 100, 200, 400, 800 ms → at most 6
	// requests per user in 2 s (8 leaves room for the drain's edge).
	if len(recs) < 4 || len(recs) > 4*8 {
		t.Errorf("%d requests by 4 closed-loop users in 2s against a refused port: want at most 32", len(recs))
	}
	for _, r := range recs {
		if r.Outcome != ledger.TransportError || r.Reason != ledger.ReasonConnectionRefused {
			t.Errorf("record %d: %s/%s", r.ID, r.Outcome, r.Reason)
		}
	}
}

// TestMaxBufferedBytesFlag (issue 8, defect 7): --max-buffered-bytes
// bounds the event bytes the probe's streams buffer together: with a bound
// of 1,589,248 bytes (the least for 768 KiB events: 2 × 768 KiB + 16 KiB),
// arrivals that would buffer a third unfinished ~700 KiB event while two
// other streams hold one end stream_error/buffer_limit, each alone being
// within the event maximum.
func TestMaxBufferedBytesFlag(t *testing.T) {
	if testing.Short() {
		t.Skip("full tier: seconds of concurrent ~700 KiB events against the process-wide buffer bound")
	}
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, "data: "+strings.Repeat("x", 700<<10))
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}))
	t.Cleanup(srv.Close)
	path := tempPath(t, "buffered.jsonl")
	// No stream ends ok here: exit 3 (no request succeeded) is the verdict.
	mustExit(t, []int{exitNoSuccess}, "probe", "--url", srv.URL+"/v1", "--rate", "5", "--arrival", "constant", "--duration", "1s",
		"--timeout-total", "3s", "--timeout-connect", "3s", "--timeout-headers", "3s", "--timeout-first-content", "3s", "--timeout-idle", "3s",
		"--max-event-bytes", "786432", "--max-buffered-bytes", "1589248", "--json", "--ledger", path)
	_, recs := readLedger(t, path)
	checkLedgerInvariants(t, recs)
	_, byR := countOutcomes(recs)
	if byR["stream_error/buffer_limit"] == 0 {
		t.Errorf("no stream_error/buffer_limit record; got %v", byR)
	}
	for _, r := range recs {
		if r.Reason == ledger.ReasonBufferLimit && !strings.Contains(r.Error, "1589248") {
			t.Errorf("record %d: error %q does not name the bound", r.ID, r.Error)
		}
	}
}

// TestLedgerFull (issue 8, defect 9): a --ledger file that cannot be
// written (/dev/full: every write fails with ENOSPC) is a failed run: the
// report is still printed, the exit code is 7 (ledger not written) and the
// error names the flag,
// how many records were lost and the OS error.
func TestLedgerFull(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skip("no /dev/full on this system")
	}
	url := startSim(t, fastSim())
	r := invoke(t.Context(), "probe", "--url", url, "--rate", "20", "--duration", "1s", "--arrival", "constant", "--json", "--ledger", "/dev/full")
	if r.code != exitNotWritten {
		t.Errorf("exit code %d, want %d\nstderr: %s", r.code, exitNotWritten, r.stderr)
	}
	for _, want := range []string{"--ledger /dev/full", "records not written", "no space left on device"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr does not say %q:\n%s", want, r.stderr)
		}
	}
	if strings.Contains(r.stderr, "<nil>") {
		t.Errorf("stderr names no error: %s", r.stderr)
	}
	if p := decodeProbe(t, r); p.Planned < 15 {
		t.Errorf("report planned %d: the measurements must still be reported", p.Planned)
	}
}

// hostStarvedJSON says how a run's host evidence shows the host short of
// CPU by the product's thresholds (verdict.DefaultValidity), "" when it does
// not.
func hostStarvedJSON(h *report.HostJSON) string {
	if h == nil {
		return ""
	}
	d := verdict.DefaultValidity
	var ws []string
	if h.HostBusy != nil && *h.HostBusy >= d.StarvedBusy {
		ws = append(ws, fmt.Sprintf("host CPU %.0f%% busy", 100**h.HostBusy))
	}
	if h.Pressure != nil && *h.Pressure >= d.StarvedPressure {
		ws = append(ws, fmt.Sprintf("host CPU pressure %.0f%%", 100**h.Pressure))
	}
	if h.RunQueueWait != nil && *h.RunQueueWait >= d.StarvedRunWait {
		ws = append(ws, fmt.Sprintf("prober threads waited runnable %.2f× the window", *h.RunQueueWait))
	}
	return strings.Join(ws, "; ")
}

// TestMixedFailuresKeepMeasurements: a target that answers some requests
// properly and others with non-SSE pages, 404s and dropped connections;
// the good measurements are all kept next to the failures. The dropped
// connections are a target that took the request and died after its
// status line: a response byte came, so they are never the keep-alive race
// (a reused connection closed before any response byte is
// indistinguishable from a server closing it idle, and is replayed by
// design: docs/protocols.md, "Keep-alive connections and replays").
func TestMixedFailuresKeepMeasurements(t *testing.T) {
	t.Parallel()
	s := newSim(t, fastSim())
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch n.Add(1) % 4 {
		case 0:
			w.Header().Set("Content-Type", "text/html")
			_, _ = io.WriteString(w, "<html>maintenance</html>")
		case 1:
			http.Error(w, `{"error":{"message":"no such model"}}`, http.StatusNotFound)
		case 2:
			s.Handler().ServeHTTP(w, r)
		case 3:
			hj, ok := w.(http.Hijacker)
			if !ok {
				http.Error(w, "no hijack", http.StatusInternalServerError)
				return
			}
			c, _, err := hj.Hijack()
			if err == nil {
				_, _ = io.WriteString(c, "HTTP/1.1 200 OK\r\n")
				_ = c.Close()
			}
		}
	}))
	t.Cleanup(srv.Close)
	path := tempPath(t, "mixed.jsonl")
	res := completes(t, "probe", "--url", srv.URL+"/v1", "--rate", "20", "--duration", "2s",
		"--arrival", "constant", "--max-tokens", "8", "--drain", "10s", "--json", "--ledger", path)
	p := decodeProbe(t, res)
	_, recs := readLedger(t, path)
	checkLedgerInvariants(t, recs)
	byO, byR := countOutcomes(recs)
	t.Logf("outcomes %v", byR)
	// The server sees each request once, and once more per replay (a
	// replay is a request resent on a new connection; its record counts
	// it).
	replays := 0
	for _, r := range recs {
		replays += r.Replays
		if r.Replays > 0 && r.ReplayReason != ledger.ReasonStaleConnection {
			t.Errorf("record %d: %d replays, reason %q", r.ID, r.Replays, r.ReplayReason)
		}
	}
	if len(recs) != p.Planned || p.Planned+replays != int(n.Load()) {
		t.Errorf("ledger %d records, report planned %d, %d replays, server saw %d requests", len(recs), p.Planned, replays, n.Load())
	}
	if byO[ledger.OK] == 0 {
		t.Errorf("no ok record; got %v", byR)
	}
	for _, want := range []string{"stream_error/content_type", "http_error/not_found", "transport_error/connection_reset"} {
		if byR[want] == 0 {
			t.Errorf("no %s record; got %v", want, byR)
		}
	}
	if sum := byO[ledger.OK] + byO[ledger.StreamError] + byO[ledger.HTTPError] + byO[ledger.TransportError]; sum != len(recs) {
		t.Errorf("outcomes %v do not add up to %d records", byR, len(recs))
	}
	// Every ok record is a latency sample; no failure is.
	if p.TTFT.Count != byO[ledger.OK] || p.E2E.Count != byO[ledger.OK] {
		t.Errorf("TTFT count %d, e2e count %d: want the %d ok records", p.TTFT.Count, p.E2E.Count, byO[ledger.OK])
	}
	if p.Goodput.Count != byO[ledger.OK] {
		t.Errorf("goodput count %d, want %d (no gates)", p.Goodput.Count, byO[ledger.OK])
	}
	if p.Dispatched != len(recs) {
		t.Errorf("dispatched %d of %d: every request was sent", p.Dispatched, len(recs))
	}
}

// TestLedgerFile: the JSONL ledger is a run header then one record per
// planned arrival, with unique ids, and no prompt text, header value or API
// key in it (nor in the report).
func TestLedgerFile(t *testing.T) {
	t.Parallel()
	const key = "sk-test-key-do-not-leak-4d5e6f"
	const headerValue = "header-secret-value-7a8b9c"
	cfg := fastSim()
	cfg.APIKey = key
	s := newSim(t, cfg)
	var mu sync.Mutex
	var prompts []string
	var sawKey, sawHeader bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var req struct {
			Messages []struct {
				Content string `json:"content"`
			} `json:"messages"`
		}
		_ = json.Unmarshal(body, &req)
		mu.Lock()
		for _, m := range req.Messages {
			prompts = append(prompts, m.Content)
		}
		sawKey = sawKey || r.Header.Get("Authorization") == "Bearer "+key
		sawHeader = sawHeader || r.Header.Get("X-Probe-Tag") == headerValue
		mu.Unlock()
		r.Body = io.NopCloser(strings.NewReader(string(body)))
		s.Handler().ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	keyFile := tempPath(t, "key")
	if err := os.WriteFile(keyFile, []byte(key+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	path := tempPath(t, "ledger.jsonl")
	before := time.Now()
	res := completes(t, "probe", "--url", srv.URL+"/v1", "--rate", "15", "--duration", "1s",
		"--max-tokens", "8", "--prompt-tokens", "64", "--api-key-file", keyFile,
		"--header", "X-Probe-Tag: "+headerValue, "--json", "--ledger", path)
	p := decodeProbe(t, res)
	h, recs := readLedger(t, path)

	if h.Kind != "run" || h.Mode != ledger.ModeOpen || h.Schema != ledger.SchemaVersion || h.RunID == "" {
		t.Errorf("run header %+v: want kind run, mode open, schema %d, a run id", h, ledger.SchemaVersion)
	}
	if h.EpochUnixNano != h.Epoch.UnixNano() || h.Epoch.Before(before.Add(-time.Second)) || h.Epoch.After(time.Now()) {
		t.Errorf("run header epoch %v (%d): want the run's start, after %v", h.Epoch, h.EpochUnixNano, before)
	}
	if len(recs) != p.Planned || p.Planned == 0 {
		t.Fatalf("%d records, report planned %d", len(recs), p.Planned)
	}
	checkLedgerInvariants(t, recs)
	ids := make([]uint64, 0, len(recs))
	for _, r := range recs {
		ids = append(ids, r.ID)
		if r.Outcome != ledger.OK {
			t.Errorf("record %d: %s/%s (%s), want ok", r.ID, r.Outcome, r.Reason, r.Error)
		}
	}
	slices.Sort(ids)
	if len(slices.Compact(ids)) != len(recs) {
		t.Errorf("ids are not unique")
	}

	mu.Lock()
	defer mu.Unlock()
	if !sawKey || !sawHeader || len(prompts) != len(recs) {
		t.Fatalf("the target saw key %v, header %v, %d prompts for %d records: the test does not test", sawKey, sawHeader, len(prompts), len(recs))
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for where, text := range map[string]string{"ledger": string(raw), "stdout": res.stdout, "stderr": res.stderr} {
		for _, secret := range []string{key, headerValue} {
			if strings.Contains(text, secret) {
				t.Errorf("%s contains a secret %q", where, secret)
			}
		}
		for _, prompt := range prompts {
			// Any 24-character stretch of a prompt: three or more words.
			for i := 0; i+24 <= len(prompt); i += 24 {
				if frag := prompt[i : i+24]; strings.Contains(text, frag) {
					t.Fatalf("%s contains prompt text %q", where, frag)
				}
			}
		}
	}
}
