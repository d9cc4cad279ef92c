package daemon

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/ledger"
	"github.com/llmprobe/llmprobe/internal/verdict"
)

// probeTargetYAML is a target with no baseline (only /probe sends to it).
func probeTargetYAML(name, url, extra string) string {
	return `
  - name: ` + name + `
    url: ` + url + `
    model: fake-model
    baseline: {enabled: false}
    timeouts: {connect: 1s, headers: 1s, first_content: 1s, idle: 1s, total: 3s}
` + extra
}

// adminGet requests path on the daemon's admin server.
func (r *running) adminGet(t *testing.T, path string) (int, string) {
	t.Helper()
	resp, err := r.client.Get(r.admin + path)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// TestProbeEndpoint: /probe on the daemon's admin server sends through a
// configured target's own client and through a URL's; each request is a
// record of traffic probe in the daemon's sinks (/debug/requests and the
// llmprobe_* series); a configured target's budget applies; a reload
// brings new modules.
func TestProbeEndpoint(t *testing.T) {
	fake := newFakeTarget(t)
	u, _ := url.Parse(fake.url)
	prefix := "http://" + u.Host
	yaml := "admin: {listen: \"127.0.0.1:0\"}\ndrain: {timeout: 2s}\ntargets:" +
		probeTargetYAML("t1", fake.url, "    budget: {requests_per_day: 2}\n") +
		"probe:\n  allowed_targets: [\"" + prefix + "\"]\n  modules:\n    m: {model: fake-model}\n"
	r := startDaemon(t, loadConfig(t, yaml), nil)

	code, body := r.adminGet(t, "/probe?module=m&target=t1")
	if code != http.StatusOK || !strings.Contains(body, "probe_success 1") {
		t.Fatalf("configured target: %d\n%s", code, body)
	}
	code, body = r.adminGet(t, "/probe?module=m&target="+url.QueryEscape(fake.url))
	if code != http.StatusOK || !strings.Contains(body, "probe_success 1") {
		t.Fatalf("URL target: %d\n%s", code, body)
	}
	if code, body := r.adminGet(t, "/probe?module=m&target="+url.QueryEscape("http://127.0.0.2:1/v1")); code != http.StatusForbidden {
		t.Errorf("a URL outside the allow-list: %d %s", code, body)
	}
	if n := fake.hits.Load(); n != 2 {
		t.Errorf("the target saw %d requests, want 2", n)
	}

	// Both are ledger records of traffic probe, in the ring behind /debug/requests.
	var dbg struct {
		Targets []ledger.TargetRecords `json:"targets"`
	}
	_, body = r.adminGet(t, "/debug/requests")
	if err := json.Unmarshal([]byte(body), &dbg); err != nil {
		t.Fatal(err)
	}
	byTarget := map[string][]ledger.Record{}
	for _, tr := range dbg.Targets {
		byTarget[tr.Target] = tr.Last
	}
	for _, name := range []string{"t1", prefix} {
		recs := byTarget[name]
		if len(recs) != 1 || recs[0].Traffic != ledger.TrafficProbe || recs[0].Class != "m" || recs[0].Outcome != ledger.OK {
			t.Errorf("/debug/requests for %s: %+v", name, recs)
		}
	}
	// And in the llmprobe_* series, labelled traffic="probe".
	fams := r.metrics(t)
	for _, name := range []string{"t1", prefix} {
		if v, ok := sum(fams, "llmprobe_requests_total", "target", name, "class", "m", "traffic", "probe", "outcome", "ok"); !ok || v != 1 {
			t.Errorf("llmprobe_requests_total{target=%q,traffic=probe,outcome=ok} = %v (%v)", name, v, ok)
		}
	}
	// The refused scrape is counted on the daemon's /metrics (Prometheus
	// saw only up == 0 for it); the probes that ran are not.
	if v, ok := sum(fams, "llmprobe_probe_refused_total", "reason", "target_not_allowed"); !ok || v != 1 {
		t.Errorf("llmprobe_probe_refused_total{reason=target_not_allowed} = %v (%v), want 1", v, ok)
	}
	if v, ok := sum(fams, "llmprobe_probe_refused_total"); !ok || v != 1 {
		t.Errorf("llmprobe_probe_refused_total = %v (%v) in all, want 1", v, ok)
	}

	// The budget of t1 (2 requests a day) is spent by the second probe of it.
	if _, body := r.adminGet(t, "/probe?module=m&target=t1"); !strings.Contains(body, "probe_success 1") {
		t.Errorf("second probe within the budget:\n%s", body)
	}
	_, body = r.adminGet(t, "/probe?module=m&target=t1")
	if !strings.Contains(body, "probe_success 0") || !strings.Contains(body, `probe_llm_outcome{outcome="unsent",reason="budget"} 1`) {
		t.Errorf("a probe past the budget:\n%s", body)
	}
	if n := fake.hits.Load(); n != 3 {
		t.Errorf("the target saw %d requests, want 3 (the fourth was over budget)", n)
	}
	budgetText := ""
	for _, ts := range r.d.status().Targets {
		if ts.Name == "t1" {
			budgetText = ts.Budget
		}
	}
	if !strings.HasPrefix(budgetText, "2 requests, 14 tokens: ") || !strings.Contains(budgetText, "/probe 2/14") {
		t.Errorf("t1's budget on the status page: %q, want 2 /probe requests of 7 tokens each", budgetText)
	}

	// A reload brings a new module; the old one is gone.
	r.mustReload(t, loadConfig(t, strings.Replace(yaml, "    m: {model: fake-model}", "    n: {model: fake-model, burst: {requests: 2, spacing: 10ms}}", 1)))
	waitFor(t, 5*time.Second, "the reloaded module", func() bool {
		code, _ := r.adminGet(t, "/probe?module=n&target="+url.QueryEscape(fake.url))
		return code == http.StatusOK
	})
	if code, body := r.adminGet(t, "/probe?module=m&target=t1"); code != http.StatusBadRequest || !strings.Contains(body, `unknown module "m" (configured modules: n)`) {
		t.Errorf("the removed module: %d %q", code, body)
	}
	if err := r.stop(t); err != nil {
		t.Fatal(err)
	}
	if err := r.d.led.Verify(); err != nil {
		t.Errorf("ledger: %v", err)
	}
}

// TestProbeRecordsLeaveGeneratorVerdict: /probe requests reach the
// target's sinks (budget, series, ledger) but not its generator verdict: a
// scrape refused at probe.max_concurrent (unsent/client_cap) is not the
// target's in-flight cap, and a probe's lag is its handler's. The same
// record from the target's own baseline does count.
func TestProbeRecordsLeaveGeneratorVerdict(t *testing.T) {
	fake := newFakeTarget(t)
	r := startDaemon(t, loadConfig(t, "admin: {listen: \"127.0.0.1:0\"}\ndrain: {timeout: 2s}\ntargets:"+probeTargetYAML("t1", fake.url, "")), nil)
	r.d.mu.Lock()
	tr := r.d.targets["t1"]
	r.d.mu.Unlock()
	sink := tr.sink(r.d)
	judge := func() verdict.Validity { return tr.state.validity.Judge(r.d.now(), verdict.HostHealth{}) }
	if v := judge(); !v.Valid {
		t.Fatalf("before any record: %+v", v)
	}
	refused := &ledger.Record{Target: "t1", Class: "m", Traffic: ledger.TrafficProbe, Outcome: ledger.Unsent, Reason: ledger.ReasonClientCap}
	sink.Record(refused)
	if v := judge(); !v.Valid {
		t.Errorf("a refused /probe scrape made the target's generator invalid: %v", v.Reasons())
	}
	own := *refused
	own.Traffic, own.Class = ledger.TrafficBaseline, "default"
	sink.Record(&own)
	if v := judge(); v.Valid {
		t.Error("the target's own arrival left unsent at its in-flight cap did not count against the generator")
	}
}
