package probehandler

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/llmprobe/llmprobe/internal/telemetry"
)

// refusedCounts reads llmprobe_probe_refused_total from the registry the
// handler registered it with, by reason (every reason's series present).
func (e *env) refusedCounts(t *testing.T) map[string]float64 {
	t.Helper()
	mfs, err := e.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, mf := range mfs {
		if mf.GetName() != "llmprobe_probe_refused_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "reason" {
					out[l.GetValue()] = m.GetCounter().GetValue()
				}
			}
		}
	}
	for _, r := range telemetry.ProbeRefusedReasons {
		if _, ok := out[r]; !ok {
			t.Errorf("llmprobe_probe_refused_total{reason=%q} not exported before any refusal", r)
		}
	}
	return out
}

func sumOf(m map[string]float64) float64 {
	var s float64
	for _, v := range m {
		s += v
	}
	return s
}

// TestProbeRefusedCounted: a refused scrape answers no probe_* series
// (Prometheus sees up == 0 and no probe_success to alert on), so each one
// is counted on the daemon's /metrics, by a reason from a closed set that
// nothing in the scrape can widen; a probe sent is not counted.
func TestProbeRefusedCounted(t *testing.T) {
	srv := httpServer(t, http.NotFoundHandler())
	e := newEnv(t, targetsYAML("known", srv+"/v1")+modYAML([]string{srv + "/v1"}, "m", "{model: x}", "nomodel", "{}"))
	tests := []struct {
		name, method, query, header string
		code                        int
		reason                      string
	}{
		{"a mistyped target", "GET", "module=m&target=knwon", "", 403, telemetry.ProbeRefusedTargetNotAllowed},
		{"a URL outside the allow-list", "GET", "module=m&target=" + url.QueryEscape("http://192.0.2.1/v1"), "", 403, telemetry.ProbeRefusedTargetNotAllowed},
		{"a hostile target", "GET", "module=m&target=" + url.QueryEscape("x\x1b[31m\"}evil"), "", 403, telemetry.ProbeRefusedTargetNotAllowed},
		{"no module", "GET", "target=known", "", 400, telemetry.ProbeRefusedModuleUnknown},
		{"an unknown module", "GET", "module=nope&target=known", "", 400, telemetry.ProbeRefusedModuleUnknown},
		{"no target", "GET", "module=m", "", 400, telemetry.ProbeRefusedBadRequest},
		{"a bad scrape timeout", "GET", "module=m&target=known", "abc", 400, telemetry.ProbeRefusedBadRequest},
		{"a URL for a module without a model", "GET", "module=nomodel&target=" + url.QueryEscape(srv+"/v1"), "", 400, telemetry.ProbeRefusedBadRequest},
		{"a HEAD", "HEAD", "module=m&target=known", "", 405, telemetry.ProbeRefusedMethod},
		{"sent (not refused)", "GET", "module=m&target=known", "", 200, ""},
	}
	want := map[string]float64{}
	for _, tt := range tests {
		req, err := http.NewRequest(tt.method, e.url+"/probe?"+tt.query, nil)
		if err != nil {
			t.Fatal(err)
		}
		if tt.header != "" {
			req.Header.Set(ScrapeTimeoutHeader, tt.header)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tt.code {
			t.Errorf("%s: %d, want %d", tt.name, resp.StatusCode, tt.code)
		}
		if tt.reason != "" {
			want[tt.reason]++
		}
		got := e.refusedCounts(t)
		for _, r := range telemetry.ProbeRefusedReasons {
			if got[r] != want[r] {
				t.Errorf("after %s: llmprobe_probe_refused_total{reason=%q} %v, want %v", tt.name, r, got[r], want[r])
			}
		}
		if len(got) != len(telemetry.ProbeRefusedReasons) {
			t.Errorf("after %s: reasons %v: want exactly %v", tt.name, got, telemetry.ProbeRefusedReasons)
		}
		if e.h.Refused(tt.reason) != want[tt.reason] && tt.reason != "" {
			t.Errorf("after %s: Handler.Refused(%s) %v, want %v", tt.name, tt.reason, e.h.Refused(tt.reason), want[tt.reason])
		}
	}
}
