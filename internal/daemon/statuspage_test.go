package daemon

import (
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/ladder"
	"github.com/llmprobe/llmprobe/internal/ladderresult"
	"github.com/llmprobe/llmprobe/internal/ledger"
	"github.com/llmprobe/llmprobe/internal/slo"
	"github.com/llmprobe/llmprobe/internal/statuspage"
	"github.com/llmprobe/llmprobe/internal/testutil"
)

// metricsEndpoint serves a vLLM-style /metrics whose waiting queue is the
// fake target's request count so far (it grows while a ladder runs).
func metricsEndpoint(t *testing.T, fake *fakeTarget, fail *atomic.Bool) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if fail != nil && fail.Load() {
			http.Error(w, "metrics down", http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		fmt.Fprintf(w, "# TYPE vllm:num_requests_waiting gauge\nvllm:num_requests_waiting %d\n", fake.hits.Load())
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/metrics"
}

// TestDaemonLadderServerView: a target with server_metrics gets the
// server's view of every ladder step, in the last ladder, on the status
// page and in the ladder-end log line; a metrics endpoint that fails never
// fails the ladder.
func TestDaemonLadderServerView(t *testing.T) {
	if testing.Short() {
		t.Skip("full tier: daemon ladders in real time with the target's metrics answering and failing")
	}
	for _, tc := range []struct {
		name      string
		failing   bool
		wantSteps string
	}{
		{"answering", false, "waiting queue grew from "},
		{"failing", true, "server metrics unavailable: scrape "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fake := newFakeTarget(t)
			var fail atomic.Bool
			fail.Store(tc.failing)
			url := metricsEndpoint(t, fake, &fail)
			extra := fmt.Sprintf(`    server_metrics: {url: %s, interval: 200ms}
    ladder:
      enabled: true
      run_on_start: true
      steps: [5, 10]
      step_duration: 1s
      gap: 100ms
      max_rate: 50
      max_lag_p99: 1s
      abort: {on_generator_invalid: false}
`, url)
			logs := &testutil.SyncBuffer{}
			r := startDaemon(t, loadConfig(t, configYAML("2s", targetYAML("t1", fake.url, 2, extra))), func(o *Options) {
				o.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
			})
			var res ladder.Result
			waitFor(t, 20*time.Second, "the ladder to finish", func() bool {
				r.d.mu.Lock()
				defer r.d.mu.Unlock()
				var ok bool
				res, ok = r.d.last["t1"]
				return ok
			})
			if len(res.Steps) != 2 {
				t.Fatalf("ladder: %d steps, aborted %v (%s)", len(res.Steps), res.Aborted, res.AbortReason)
			}
			for _, s := range res.Steps {
				if s.Server == nil || !strings.HasPrefix(s.Server.Explanation, tc.wantSteps) || s.Server.Unavailable != tc.failing {
					t.Errorf("step %d: server view %+v", s.Index, s.Server)
				}
			}
			st := r.d.status()
			if got := st.Targets[0].LadderServer; len(got) != 2 || !strings.HasPrefix(got[1].Explanation, tc.wantSteps) || got[1].Unavailable != tc.failing {
				t.Errorf("status page server rows %+v", got)
			} else if hasCells := got[1].Waiting != "-" && strings.Contains(got[1].Waiting, "→"); hasCells == tc.failing {
				t.Errorf("status page server cells %+v (an unavailable view has none, another its waiting start→max)", got[1])
			}
			page := r.get(t, "/")
			if !strings.Contains(page, "what the server saw") || !strings.Contains(page, tc.wantSteps) {
				t.Errorf("status page lacks the server view")
			}
			if err := r.stop(t); err != nil {
				t.Fatal(err)
			}
			line := ""
			for _, l := range strings.Split(logs.String(), "\n") {
				if strings.Contains(l, "ladder finished") {
					line = l
				}
			}
			if !strings.Contains(line, "server=\"step 1 (5 req/s): "+tc.wantSteps) || !strings.Contains(line, " | step 2 (10 req/s): ") {
				t.Errorf("ladder-end log line lacks the server view per step:\n%s", line)
			}
		})
	}
}

// TestStatusPageFigures: the status page's figures come from the daemon's
// own records: baseline latency p50/p99 with counts per window,
// availability good/planned, the SLO state, the last failures with their
// reasons, the identity and when it was first seen, and the capacity
// history (read back from the history file, lower bounds marked).
func TestStatusPageFigures(t *testing.T) {
	fake := newFakeTarget(t)
	hist := filepath.Join(t.TempDir(), "history.jsonl")
	for i, r := range []ladder.Result{
		{Target: "t1", Finished: time.Now().Add(-2 * time.Hour), Verdict: ladderresult.Verdict{Capacity: 8, CapacityStep: 2, CapacityBound: ladderresult.BoundMeasured}},
		{Target: "t1", Finished: time.Now().Add(-time.Hour), Verdict: ladderresult.Verdict{Capacity: 12, CapacityStep: 3, CapacityBound: ladderresult.BoundLower}},
		{Target: "t1", Finished: time.Now().Add(-time.Minute), Aborted: true, AbortReason: "interrupted"},
	} {
		if err := ladder.AppendHistory(hist, r); err != nil {
			t.Fatalf("history %d: %v", i, err)
		}
	}
	extra := "    ladder: {enabled: true, history_file: " + hist + ", steps: [1], max_rate: 10, schedule: {every: 24h}}\n"
	extra += "    labels: {team: <b>x}\n" // a constant label reaches the summary row, escaped
	r := startDaemon(t, loadConfig(t, configYAML("1s", targetYAML("t1", fake.url, 20, extra))), nil)
	waitFor(t, 10*time.Second, "ok baseline requests", func() bool {
		for _, l := range r.d.status().Targets[0].Latency {
			if l.Figure == "TTFT" && l.Window == "5 min" {
				return l.Count >= 10
			}
		}
		return false
	})
	fake.mode.Store(mode503)
	waitFor(t, 10*time.Second, "failures", func() bool {
		return len(r.d.status().Targets[0].Failures) >= 3
	})
	st := r.d.status()
	ts := st.Targets[0]

	rows := map[string]statuspage.LatencyRow{}
	for _, l := range ts.Latency {
		rows[l.Figure+" "+l.Window] = l
	}
	for _, key := range []string{"TTFT 5 min", "TTFT 60 min", "inter-chunk gap 5 min", "e2e 60 min"} {
		l, ok := rows[key]
		if !ok || l.Count < 10 || l.P50 == "-" || l.P99 == "-" || !strings.HasSuffix(l.P50, "s") {
			t.Errorf("latency row %q: %+v", key, l)
		}
	}
	a := ts.Availability[0]
	if a.Window != "5 min" || a.Sent < 13 || a.Sent-a.Failed < 10 || a.Failed < 3 || a.Ratio == "n/a" {
		t.Errorf("availability %+v", a)
	}
	if ts.Target.State != string(slo.StateFailing) || !strings.Contains(ts.Target.Figures, "failed") || ts.Target.Next == "" {
		t.Errorf("target state with ok requests then 503s: %+v, want FAILING with figures", ts.Target)
	}
	if len(ts.SLO) != 2 || ts.SLO[0].NoData || !ts.SLO[0].Burning || !strings.Contains(ts.SLO[0].Short, "burn ") {
		t.Errorf("availability SLO with failures: %+v", ts.SLO)
	}
	f := ts.Failures[0]
	if f.Outcome != string(ledger.Rejected) || f.Reason != string(ledger.ReasonStatus503) || f.Status != 503 || f.Traffic != "baseline" ||
		time.Since(f.When) > time.Minute || time.Since(f.When) < 0 {
		t.Errorf("last failure %+v", f)
	}
	if ts.Identity.Model != "fake-model" || ts.Identity.Since.IsZero() || ts.Identity.Changes != 0 {
		t.Errorf("identity %+v", ts.Identity)
	}
	if h := ts.CapacityHistory; len(h) != 3 || h[0].Capacity != 8 || h[0].LowerBound || !h[1].LowerBound || !h[2].None || !h[2].Aborted {
		t.Errorf("capacity history %+v", h)
	}
	page := r.get(t, "/")
	want := []string{"≥ 12", "rejected/status_503", "(HTTP 503)", "fake-model", `http-equiv="refresh"`, `name="viewport"`, "Prober host over the last "}
	if runtime.GOOS == "linux" { // /proc/stat and schedstat are read: the host's evidence is shown and exported
		want = append(want, "% busy of ", "prober threads waited runnable")
		metrics := r.get(t, "/metrics")
		for _, m := range []string{"llmprobe_host_cpu_busy_seconds_total", "llmprobe_host_cpus", "llmprobe_run_queue_wait_seconds_total"} {
			if !strings.Contains(metrics, "\n"+m+" ") {
				t.Errorf("/metrics lacks %s", m)
			}
		}
	}
	for _, w := range want {
		if !strings.Contains(page, w) {
			t.Errorf("status page lacks %q", w)
		}
	}
	if !slices.Equal(ts.Labels, []statuspage.Label{{Name: "team", Value: "<b>x"}}) || !strings.Contains(page, "<td>team=&lt;b&gt;x</td>") {
		t.Errorf("labels %+v, or not in the summary row", ts.Labels)
	}
	if card := r.get(t, "/targets/t1"); !strings.Contains(card, `<section class="target" id="target-t1">`) || !strings.Contains(card, "rejected/status_503") {
		t.Errorf("/targets/t1 is not t1's card:\n%.500s", card)
	}
}
