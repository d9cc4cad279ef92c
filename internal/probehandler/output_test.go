package probehandler

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/ledger"
	"github.com/llmprobe/llmprobe/internal/telemetry"
	"github.com/llmprobe/llmprobe/internal/testutil"
)

// TestProbeDebug: debug=true answers the probe's log, the metrics it would
// have returned, its ledger records and its module, as text; the key the
// module reads is used (the simulator demands it) and shown nowhere.
func TestProbeDebug(t *testing.T) {
	cfg := fastSim()
	cfg.APIKey = "sk-debug-0a1b2c3d4e5f"
	t.Setenv("PROBE_DEBUG_KEY", cfg.APIKey)
	_, base := serveSim(t, cfg)
	e := newEnv(t, targetsYAML("sim", base)+modYAML([]string{base}, "chat", "{model: llmprobe-sim, api_key_env: PROBE_DEBUG_KEY, headers: {X-Team: obs}}"))
	code, body := e.get(t, "module=chat&debug=true&target="+url.QueryEscape(base), ScrapeTimeoutHeader, "10")
	if code != http.StatusOK {
		t.Fatalf("%d %s", code, body)
	}
	for _, want := range []string{
		"Logs for the probe:\n", "msg=\"probe planned\"", "timeout=9.5s", "timeout_from=\"the scrape timeout 10s less probe.timeout_offset 500ms\"",
		"msg=\"request ended\"", "outcome=ok", "msg=\"probe succeeded\"",
		"Metrics that would have been returned:\n", "probe_success 1\n", "probe_llm_requests 1\n", `probe_llm_outcome{outcome="ok",reason="`,
		"Ledger records (traffic probe, one JSON object per line):\n",
		"Module configuration:\n", `"api_key_env": "PROBE_DEBUG_KEY"`, `"X-Team": "obs"`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("debug output lacks %q:\n%s", want, body)
		}
	}
	if strings.Contains(body, cfg.APIKey) {
		t.Errorf("the key is in the debug output")
	}
	_, recPart, _ := strings.Cut(body, "one JSON object per line):\n")
	line, _, _ := strings.Cut(recPart, "\n")
	var rec ledger.Record
	if err := json.Unmarshal([]byte(line), &rec); err != nil {
		t.Fatalf("record line %q: %v", line, err)
	}
	if rec.Traffic != ledger.TrafficProbe || rec.Target != base || rec.Class != "chat" || rec.Outcome != ledger.OK || rec.ID != e.records()[0].ID {
		t.Errorf("record %+v", rec)
	}
	// The same key refused by a wrong-key server: the error text holds no key.
	cfg2 := fastSim()
	cfg2.APIKey = "another-key-entirely-000"
	_, base2 := serveSim(t, cfg2)
	e2 := newEnv(t, targetsYAML("sim", base2)+modYAML([]string{base2}, "chat", "{model: llmprobe-sim, api_key_env: PROBE_DEBUG_KEY}"))
	_, body2 := e2.get(t, "module=chat&debug=true&target="+url.QueryEscape(base2))
	if !strings.Contains(body2, `probe_llm_outcome{outcome="http_error",reason="unauthorized"} 1`) || strings.Contains(body2, cfg.APIKey) {
		t.Errorf("wrong key: %s", body2)
	}
}

// TestProbeConcurrencyLimit: beyond probe.max_concurrent a scrape is
// refused with 503, nothing is sent, and its arrival is recorded
// unsent/client_cap; once the probe in flight ends, scrapes go through.
func TestProbeConcurrencyLimit(t *testing.T) {
	release := make(chan struct{})
	arrived := make(chan struct{}, 4)
	var once sync.Once
	srv := httpServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived <- struct{}{}
		select {
		case <-release:
		case <-r.Context().Done():
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write([]byte(`data: {"id":"1","model":"m","choices":[{"index":0,"delta":{"content":"hi"},"finish_reason":"stop"}]}` + "\n\ndata: [DONE]\n\n"))
	}))
	t.Cleanup(func() { once.Do(func() { close(release) }) })
	e := newEnv(t, targetsYAML("held", srv+"/v1")+"probe: {max_concurrent: 1, modules: {m: {timeouts: {total: 20s}}, b: {burst: {requests: 2, spacing: 10ms}}}}\n")
	first := make(chan string, 1)
	go func() {
		_, body, err := e.fetch("module=m&target=held")
		if err != nil {
			body = err.Error()
		}
		first <- body
	}()
	<-arrived
	code, body := e.get(t, "module=b&target=held")
	if code != http.StatusServiceUnavailable || !strings.Contains(body, "too many probes at once (probe.max_concurrent is 1)") ||
		!strings.Contains(body, "its 2 request(s) are recorded unsent/client_cap") {
		t.Errorf("second probe: %d %q", code, body)
	}
	recs := e.records()
	if len(recs) != 2 || recs[0].Outcome != ledger.Unsent || recs[0].Reason != ledger.ReasonClientCap || recs[1].Reason != ledger.ReasonClientCap ||
		recs[0].Class != "b" || recs[0].Target != "held" || recs[0].Traffic != ledger.TrafficProbe {
		t.Errorf("refused probe's records %+v", recs)
	}
	if n := e.refusedCounts(t); n[telemetry.ProbeRefusedConcurrency] != 1 || sumOf(n) != 1 {
		t.Errorf("llmprobe_probe_refused_total %v: want one, concurrency", n)
	}
	once.Do(func() { close(release) })
	if b := <-first; !strings.Contains(b, "probe_success 1") {
		t.Errorf("the first probe: %s", b)
	}
	if code, _ := e.get(t, "module=m&target=held"); code != http.StatusOK {
		t.Errorf("after the first ended: %d", code)
	}
}

// TestProbeFreshRegistry: every scrape answers from a registry of its own:
// nothing of an earlier probe, or of one running at the same time, shows.
func TestProbeFreshRegistry(t *testing.T) {
	base := startSim(t)
	down := httpServer(t, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusInternalServerError) }))
	e := newEnv(t, targetsYAML("sim", base, "down", down+"/v1")+modYAML(nil, "one", "{}", "three", "{burst: {requests: 3, spacing: 10ms}}"))
	ok := e.metrics(t, "module=one&target=sim")
	if _, has := value(ok, mTTFT); !has {
		t.Fatal("no TTFT for a successful probe")
	}
	bad := e.metrics(t, "module=one&target=down")
	if _, has := value(bad, mTTFT); has {
		t.Error("a TTFT from the earlier probe in a failed probe's answer")
	}
	if o := outcomes(bad); o["ok"] != 0 || o["http_error"] != 1 {
		t.Errorf("outcomes %v", o)
	}
	// Concurrent probes of a shared ledger each count their own records.
	var wg sync.WaitGroup
	for i := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			mod, target, n := "one", "sim", 1.0
			if i%2 == 1 {
				mod, n = "three", 3
			}
			if i%3 == 2 {
				target = "down"
			}
			code, body, err := e.fetch("module=" + mod + "&target=" + target)
			fams, perr := parse(code, body)
			if err != nil || perr != nil {
				t.Errorf("probe %d: %v %v", i, err, perr)
				return
			}
			o := outcomes(fams)
			req, _ := value(fams, mRequests)
			if req != n || o["ok"]+o["http_error"] != n || (target == "down") != (o["http_error"] == n) {
				t.Errorf("probe %d (%s %s): requests %v outcomes %v", i, mod, target, req, o)
			}
		}()
	}
	wg.Wait()
	testutil.Eventually(t, 2*time.Second, "every record ended", func() bool { return e.col.pending() == 0 })
}
