package main

import (
	"encoding/json"
	"errors"
	"html"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/llmprobe/llmprobe/internal/protocol"
	"github.com/llmprobe/llmprobe/internal/report"
)

// htmlLead is an HTML report's verdict: result and exit status.
var htmlLead = regexp.MustCompile(`<strong class="result">([A-Z ]+)</strong> <span class="exit">exit status (\d+)</span>`)

// checkLead reads the HTML report at path and checks that it leads with
// the verdict the process exited with, the same as the JSON's.
func checkLead(t *testing.T, path string, code int, js *report.VerdictJSON) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	page := string(b)
	m := htmlLead.FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("the HTML report has no verdict:\n%s", page)
	}
	want := map[int]string{exitOK: report.ResultPass, exitGeneratorInvalid: report.ResultInvalid}[code]
	if want == "" {
		want = report.ResultFail
	}
	if m[1] != want || m[2] != strconv.Itoa(code) {
		t.Errorf("HTML leads with %s exit status %s; the process exited %d (want %s)", m[1], m[2], code, want)
	}
	if js == nil || js.Result != m[1] || js.ExitStatus != code {
		t.Errorf("JSON verdict %+v, HTML %s, exit %d: they must agree", js, m[1], code)
	}
	return page
}

// TestProbeHTMLFailedGates: `probe --slo-ttft 3ms --html` against the
// simulator (TTFT tens of ms) fails its gates: the process exits 5 and the
// HTML leads with FAIL and exit status 5, the JSON the same; the page
// carries the server's view (the simulator's /metrics). On a starved host
// the generator may be invalid instead (exit 4): then all three say
// INVALID, the prober's doing.
func TestProbeHTMLFailedGates(t *testing.T) {
	t.Parallel()
	htmlPath := tempPath(t, "probe.html")
	r := mustExit(t, []int{exitGatesFailed, exitGeneratorInvalid}, "probe", "--rate", "5", "--duration", "2s", "--max-tokens", "8",
		"--slo-ttft", "3ms", "--html", htmlPath, "--json")
	p := decodeProbe(t, r)
	page := checkLead(t, htmlPath, r.code, p.Verdict)
	if r.code == exitGeneratorInvalid {
		t.Logf("generator invalid on this machine: %s", lastLine(r.stderr))
		if p.Verdict.Cause != report.CauseProber {
			t.Errorf("an invalid generator blamed on %q", p.Verdict.Cause)
		}
		return
	}
	if !strings.Contains(p.Verdict.Why, "gates failed: good fraction") || p.Verdict.Cause != report.CauseTarget || !strings.Contains(page, p.Verdict.Why) {
		t.Errorf("verdict %+v", p.Verdict)
	}
	for _, want := range []string{"<h2>Server view (", "<tr><th>gates</th><td>TTFT ≤ 3ms: good 0 of", "Requests were sent to /v1/chat/completions."} {
		if !strings.Contains(page, want) {
			t.Errorf("probe HTML lacks %q", want)
		}
	}
	if p.RequestPath != "/v1/chat/completions" {
		t.Errorf("JSON request_path %q", p.RequestPath)
	}
}

// TestLadderHTMLStopReason: a ladder whose first step fails its gates
// (the TTFT abort rule off) stops there by stop_at capacity, 1 of its 3
// steps run: exit 6 (no capacity), and the HTML
// leads with FAIL exit status 6 and the stop_at rule that stopped it, the
// same as the JSON's verdict and stopped. A step the starved host made
// invalid aborts it instead (exit 4): the HTML then names that abort.
func TestLadderHTMLStopReason(t *testing.T) {
	t.Parallel()
	htmlPath := tempPath(t, "ladder.html")
	r := mustExit(t, []int{exitLadderNoCapacity, exitGeneratorInvalid}, "ladder", "--steps", "2,4,8", "--step-duration", "1s",
		"--gap", "100ms", "--max-tokens", "8", "--arrival", "constant", "--slo-ttft", "3ms", "--abort-ttft-gate-multiple", "0", "--stop-at", "capacity", "--html", htmlPath, "--json")
	var js struct {
		Verdict     *report.VerdictJSON `json:"verdict"`
		Stopped     string              `json:"stopped"`
		AbortReason string              `json:"abort_reason"`
		Steps       []json.RawMessage   `json:"steps"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &js); err != nil {
		t.Fatalf("ladder --json: %v\n%s", err, r.stdout)
	}
	page := checkLead(t, htmlPath, r.code, js.Verdict)
	stopRow := regexp.MustCompile(`<tr><th>stopped</th><td>([^<]*)</td></tr>`).FindStringSubmatch(page)
	if stopRow == nil {
		t.Fatal("the ladder HTML does not say why it stopped")
	}
	if r.code == exitGeneratorInvalid {
		t.Logf("generator invalid on this machine: %s", lastLine(r.stderr))
		if !strings.Contains(stopRow[1], "aborted at step") {
			t.Errorf("stopped %q, want the abort", stopRow[1])
		}
		return
	}
	if len(js.Steps) == 3 || !strings.HasPrefix(js.Stopped, "stop_at capacity: step ") || !strings.Contains(js.Stopped, "failed its gates") {
		t.Fatalf("ran %d of 3 steps, stopped %q: want an early stop by stop_at capacity", len(js.Steps), js.Stopped)
	}
	if got := html.UnescapeString(stopRow[1]); got != js.Stopped {
		t.Errorf("HTML stopped %q, JSON %q", got, js.Stopped)
	}
	if !strings.Contains(js.Verdict.Why, "no valid step met the gates") {
		t.Errorf("verdict %+v", js.Verdict)
	}
}

// TestRunVerdict: the verdict the reports lead with is the exit status's:
// its code, its line, and whose doing it is.
func TestRunVerdict(t *testing.T) {
	for _, tc := range []struct {
		name   string
		status error
		want   report.RunVerdict
	}{
		{"pass", nil, report.RunVerdict{Result: report.ResultPass, Exit: exitOK, Why: "met"}},
		{"abort after capacity", exitStatus{exitOK, "capacity 8 req/s (step 2, lower bound); the ladder ended at its abort rule: x"},
			report.RunVerdict{Result: report.ResultPass, Exit: exitOK, Why: "capacity 8 req/s (step 2, lower bound); the ladder ended at its abort rule: x"}},
		{"no success", exitStatus{exitNoSuccess, "no request succeeded"}, report.RunVerdict{Result: report.ResultFail, Exit: exitNoSuccess, Cause: report.CauseTarget, Why: "no request succeeded"}},
		{"gates", exitStatus{exitGatesFailed, "gates failed"}, report.RunVerdict{Result: report.ResultFail, Exit: exitGatesFailed, Cause: report.CauseTarget, Why: "gates failed"}},
		{"no capacity", exitStatus{exitLadderNoCapacity, "no capacity"}, report.RunVerdict{Result: report.ResultFail, Exit: exitLadderNoCapacity, Cause: report.CauseTarget, Why: "no capacity"}},
		{"generator", exitStatus{exitGeneratorInvalid, "generator invalid"}, report.RunVerdict{Result: report.ResultInvalid, Exit: exitGeneratorInvalid, Cause: report.CauseProber, Why: "generator invalid"}},
		{"not written", exitStatus{exitNotWritten, "ledger not written"}, report.RunVerdict{Result: report.ResultFail, Exit: exitNotWritten, Cause: report.CauseProber, Why: "ledger not written"}},
		{"llmprobe failed", errors.New("ledger invariant violated"), report.RunVerdict{Result: report.ResultFail, Exit: exitError, Cause: report.CauseProber, Why: "ledger invariant violated"}},
	} {
		got := runVerdict(tc.status, "met")
		if got != tc.want {
			t.Errorf("%s: %+v, want %+v", tc.name, got, tc.want)
		}
		if tc.status != nil && exitCodeOf(tc.status) != got.Exit {
			t.Errorf("%s: verdict exit %d, the process's %d", tc.name, got.Exit, exitCodeOf(tc.status))
		}
	}
}

// TestNotFoundNamesPath: against a wrong path every request is a 404: the
// report leads with FAIL exit status 3 and names the path requested beside
// not_found (ours, sanitised), never the target's host.
func TestNotFoundNamesPath(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		http.NotFound(w, r)
	}))
	t.Cleanup(srv.Close)
	r := mustExit(t, []int{exitNoSuccess}, "probe", "--url", srv.URL+"/v2", "--rate", "10", "--duration", "1s",
		"--arrival", "constant", "--drain", "5s")
	if !strings.HasPrefix(r.stdout, "verdict: FAIL (exit status 3, the target's doing): no request succeeded") {
		t.Errorf("the report does not lead with its verdict:\n%s", r.stdout)
	}
	if !regexp.MustCompile(`(?m)^\s+http_error\s+\d+\s+not_found \d+ \(404 for /v2/chat/completions\)$`).MatchString(r.stdout) {
		t.Errorf("not_found without the path requested:\n%s", r.stdout)
	}
	if strings.Contains(r.stdout, strings.TrimPrefix(srv.URL, "http://")) {
		t.Error("the target's address reached the report")
	}
}

// TestRequestPath: the path a report names is the base URL's path and the
// API's endpoint, without the host, query or anything a terminal would
// act on.
func TestRequestPath(t *testing.T) {
	for _, tc := range []struct{ api, base, want string }{
		{protocol.APIOpenAIChat, "http://10.0.0.1:8000/v1", "/v1/chat/completions"},
		{protocol.APIAnthropicMessages, "https://api.example.com/v1", "/v1/messages"},
		{protocol.APIOpenAICompletions, "http://10.0.0.1:8000/proxy/v1", "/proxy/v1/completions"},
		{protocol.APIOpenAIChat, "http://10.0.0.1:8000/v1%1b%5b31m", "/v1\uFFFD[31m/chat/completions"},
	} {
		a, err := protocol.Lookup(tc.api)
		if err != nil {
			t.Fatal(err)
		}
		got := requestPath(protocol.Target{Base: tc.base, Adapter: a})
		if got != tc.want || strings.Contains(got, "10.0.0.1") || strings.ContainsRune(got, 0x1b) {
			t.Errorf("%s %s: %q, want %q", tc.api, tc.base, got, tc.want)
		}
	}
}
