package probehandler

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/ledger"
)

// TestProbeSimulator: one streamed request to the simulator, given as a
// URL under the allow-list, answered as probe metrics parsed with expfmt;
// the request is a ledger record of traffic probe, labelled with the
// allow-list prefix and the module.
func TestProbeSimulator(t *testing.T) {
	base := startSim(t)
	e := newEnv(t, targetsYAML("sim", base)+modYAML([]string{base}, "chat", "{model: llmprobe-sim, class: {output: {dist: fixed, value: 12}}}"))
	fams := e.metrics(t, "module=chat&target="+url.QueryEscape(base+"/"))
	if v := must(t, fams, mSuccess); v != 1 {
		t.Errorf("probe_success %v", v)
	}
	if v := must(t, fams, mRequests); v != 1 {
		t.Errorf("probe_llm_requests %v", v)
	}
	if n, want := len(fams[mOutcome].GetMetric()), closedSetSize(); n != want {
		t.Errorf("probe_llm_outcome has %d series, want the whole closed set (%d)", n, want)
	}
	if o := outcomes(fams); o["ok"] != 1 || len(o) != 1 {
		t.Errorf("outcomes %v, want ok: 1", o)
	}
	ttft, e2e := must(t, fams, mTTFT), must(t, fams, mE2E)
	lag, dur := must(t, fams, mLag), must(t, fams, mDuration)
	if !(ttft >= 0.020 && e2e > ttft && dur >= e2e && lag >= 0 && lag < ttft) {
		t.Errorf("ttft %v e2e %v duration %v lag %v: want lag < 20ms ≤ ttft < e2e ≤ duration", ttft, e2e, dur, lag)
	}
	if v := must(t, fams, mTokens); v < 8 || v > 12 {
		t.Errorf("output tokens %v, want 8..12 (the simulator's 8..16 capped at max_tokens 12)", v)
	}
	s := fams[mInterChunk].GetMetric()[0].GetSummary()
	if s.GetSampleCount() < 7 || len(s.GetQuantile()) != 4 || s.GetQuantile()[3].GetValue() < s.GetQuantile()[0].GetValue() {
		t.Errorf("inter-chunk summary %v", s)
	}
	recs := e.records()
	if len(recs) != 1 {
		t.Fatalf("%d records", len(recs))
	}
	r := recs[0]
	if r.Traffic != ledger.TrafficProbe || r.Target != base || r.Class != "chat" || r.API != "openai-chat" || r.Outcome != ledger.OK || r.Model != "llmprobe-sim" {
		t.Errorf("record %+v", r)
	}
	if ttftRec, _ := r.TTFT(); ttftRec.Seconds() != ttft {
		t.Errorf("record TTFT %v, metric %v", ttftRec, ttft)
	}
}

// TestProbeConfiguredTarget: a configured target is probed by name
// through its own client (its model, its key), and its records carry its
// name; a target's own key reaches the server and never the answer.
func TestProbeConfiguredTarget(t *testing.T) {
	cfg := fastSim()
	cfg.APIKey = "sim-key-9f8e7d6c5b4a"
	t.Setenv("PROBE_TEST_KEY", cfg.APIKey)
	_, base := serveSim(t, cfg)
	e := newEnv(t, "targets:\n  - {name: vllm-a, url: \""+base+"\", model: llmprobe-sim, api_key_env: PROBE_TEST_KEY, baseline: {enabled: false}}\n"+
		modYAML(nil, "short", "{burst: {requests: 2, spacing: 50ms}}"))
	code, body := e.get(t, "module=short&target=vllm-a")
	if code != http.StatusOK || !strings.Contains(body, "probe_success 1") || !strings.Contains(body, "probe_llm_requests 2") {
		t.Fatalf("%d\n%s", code, body)
	}
	if strings.Contains(body, cfg.APIKey) {
		t.Error("the key is in the answer")
	}
	recs := e.records()
	if len(recs) != 2 || recs[0].Target != "vllm-a" || recs[1].Class != "short" || recs[0].Traffic != ledger.TrafficProbe {
		t.Fatalf("records %+v", recs)
	}
	// Open loop from the planned schedule: 50ms apart, whatever the responses did.
	if gap := recs[1].Planned - recs[0].Planned; gap != 50*time.Millisecond {
		t.Errorf("planned %v apart, want exactly 50ms", gap)
	}
}

// TestProbeFailingTarget: a target that refuses gives probe_success 0 with
// the outcome reached, and no latency figure (failures stay out of them).
func TestProbeFailingTarget(t *testing.T) {
	srv := httpServer(t, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = w.Write([]byte(`{"error":{"message":"overloaded"}}`))
	}))
	e := newEnv(t, targetsYAML("down", srv+"/v1")+modYAML([]string{srv}, "m", "{model: x}"))
	for _, target := range []string{"down", srv + "/v1"} {
		fams := e.metrics(t, "module=m&target="+url.QueryEscape(target))
		if v := must(t, fams, mSuccess); v != 0 {
			t.Errorf("%s: probe_success %v", target, v)
		}
		if v := must(t, fams, mOutcome, "outcome", "rejected", "reason", "status_503"); v != 1 {
			t.Errorf("%s: rejected/status_503 = %v", target, v)
		}
		if o := outcomes(fams); len(o) != 1 {
			t.Errorf("%s: outcomes %v", target, o)
		}
		for _, name := range []string{mTTFT, mE2E, mTokens} {
			if _, ok := value(fams, name); ok {
				t.Errorf("%s: %s present for a failed request", target, name)
			}
		}
		if _, ok := value(fams, mLag); !ok {
			t.Errorf("%s: no dispatch lag for a sent request", target)
		}
	}
	// Nothing listening: a transport error, still an answer of 200.
	e2 := newEnv(t, modYAML([]string{"http://127.0.0.1:1"}, "m", "{model: x}")+targetsYAML("t", srv+"/v1"))
	fams := e2.metrics(t, "module=m&target="+url.QueryEscape("http://127.0.0.1:1/v1"))
	if must(t, fams, mSuccess) != 0 || must(t, fams, mOutcome, "outcome", "transport_error", "reason", "connection_refused") != 1 {
		t.Errorf("refused connection: %v", outcomes(fams))
	}
}
