package daemon

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/ledger"
	"github.com/llmprobe/llmprobe/internal/logging"
	"github.com/llmprobe/llmprobe/internal/testutil"
)

// TestImpossibleUsageSpendsBudget: a server that answers every request
// well but reports 9,223,372,036,854,775,807 tokens of usage (refused as
// impossible: the record's usage is unknown and flagged invalid) spent
// nothing of a 100-token daily budget before; now each answer is charged
// its upper bound (16-token prompt estimate + 4 max tokens, about 20), so
// the budget is spent after a handful, later arrivals end unsent/budget,
// the log says why once, and the status page's budget line counts them.
func TestImpossibleUsageSpendsBudget(t *testing.T) {
	const m = "9223372036854775807"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/chat/completions" {
			http.NotFound(w, r)
			return
		}
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		for _, s := range []string{
			`data: {"id":"c1","model":"fake-model","choices":[{"index":0,"delta":{"content":"hello"},"finish_reason":null}]}`,
			`data: {"id":"c1","model":"fake-model","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`,
			`data: {"id":"c1","model":"fake-model","choices":[],"usage":{"prompt_tokens":` + m + `,"completion_tokens":` + m + `,"total_tokens":` + m + `}}`,
			`data: [DONE]`,
		} {
			_, _ = io.WriteString(w, s+"\n\n")
		}
	}))
	t.Cleanup(srv.Close)
	var buf testutil.SyncBuffer
	sink := &recSink{}
	yaml := configYAML("1s", targetYAML("t1", srv.URL+"/v1", 20, "    budget: {tokens_per_day: 100}\n"))
	r := startDaemon(t, loadConfig(t, yaml), func(o *Options) {
		o.Sinks, o.Logger, o.FailureLogEvery = []ledger.Sink{sink}, logging.New(&buf, slog.LevelInfo, logging.FormatJSON), time.Hour
	})
	waitFor(t, 5*time.Second, "token budget spent", func() bool {
		v, ok := sum(r.metrics(t), "llmprobe_budget_remaining_tokens", "target", "t1")
		return ok && v == 0
	})
	waitFor(t, 5*time.Second, "unsent/budget arrivals", func() bool {
		return sink.count(func(s seen) bool { return s.reason == ledger.ReasonBudget }) >= 3
	})
	r.d.mu.Lock()
	run := r.d.targets["t1"]
	r.d.mu.Unlock()
	rem := run.budget.Remaining()
	if sent := sink.count(func(s seen) bool { return s.outcome == ledger.OK }); sent < 4 || sent > 8 || rem.InvalidUsage != int64(sent) {
		t.Errorf("%d answers sent before a 100-token budget was spent by bounds of about 20 (%d charged as invalid usage, %d tokens)", sent, rem.InvalidUsage, rem.TokensUsed)
	}
	var txt string
	for _, ts := range r.d.status().Targets {
		if ts.Name == "t1" {
			txt = ts.Budget
		}
	}
	if !strings.Contains(txt, "answers reported impossible usage and were charged their upper bound") {
		t.Errorf("status budget line %q does not say so", txt)
	}
	if err := r.stop(t); err != nil {
		t.Fatal(err)
	}
	lines := withMsg(logLines(t, buf.String()), "usage refused as impossible: budget charged the request's upper bound (prompt estimate + max tokens)")
	if len(lines) != 1 || lines[0]["target"] != "t1" || lines[0]["tokens_charged"].(float64) < 10 {
		t.Errorf("want one line saying the bound was charged (once an hour at most), got %v", lines)
	}
}
