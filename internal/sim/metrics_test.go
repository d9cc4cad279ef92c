package sim

import (
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// scrapeMetrics reads the simulator's /metrics as Prometheus would.
func scrapeMetrics(t *testing.T, c *http.Client, base string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := c.Get(strings.TrimSuffix(base, "/v1") + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /metrics: %s", resp.Status)
	}
	p := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("parse /metrics: %v", err)
	}
	return fams
}

// value returns a family's single gauge or counter value, or a
// histogram's count and sum, checking its type and model_name label.
func value(t *testing.T, fams map[string]*dto.MetricFamily, name string, typ dto.MetricType, model string) (v, sum float64) {
	t.Helper()
	f := fams[name]
	if f == nil || f.GetType() != typ || len(f.GetMetric()) != 1 {
		t.Fatalf("%s: %v, want one %v series", name, f, typ)
	}
	m := f.GetMetric()[0]
	if l := m.GetLabel(); len(l) != 1 || l[0].GetName() != "model_name" || l[0].GetValue() != model {
		t.Errorf("%s labels %v, want model_name=%q", name, l, model)
	}
	switch typ {
	case dto.MetricType_GAUGE:
		return m.GetGauge().GetValue(), 0
	case dto.MetricType_COUNTER:
		return m.GetCounter().GetValue(), 0
	default:
		return float64(m.GetHistogram().GetSampleCount()), m.GetHistogram().GetSampleSum()
	}
}

// TestMetricsAfterRequests: each finished request is counted once in every
// histogram, with latencies no shorter than the configured service times;
// /metrics needs no API key.
func TestMetricsAfterRequests(t *testing.T) {
	cfg := testConfig()
	cfg.TTFT = FixedDist(0.004)
	cfg.TokenTime = FixedDist(0.002)
	cfg.OutputTokens = FixedDist(5)
	cfg.Models = []string{"served-model"}
	cfg.APIKey = "sim-secret-key-0123456789"
	_, base := startServer(t, cfg)
	c := testClient(t)
	const n = 3
	for range n {
		resp := post(t, c, base+"/chat/completions", `{"model":"served-model","stream":true,"messages":[{"role":"user","content":"hi"}]}`,
			map[string]string{"Authorization": "Bearer " + cfg.APIKey})
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	fams := scrapeMetrics(t, c, base) // no key sent
	const m = "served-model"
	for _, g := range []string{metricRunning, metricWaiting, metricKVCache} {
		if v, _ := value(t, fams, g, dto.MetricType_GAUGE, m); v != 0 {
			t.Errorf("%s = %v at rest", g, v)
		}
	}
	if v, _ := value(t, fams, metricSuccess, dto.MetricType_COUNTER, m); v != n {
		t.Errorf("success %v, want %d", v, n)
	}
	if v, _ := value(t, fams, metricGenerate, dto.MetricType_COUNTER, m); v != n*5 {
		t.Errorf("generated tokens %v, want %d", v, n*5)
	}
	for _, h := range []struct {
		name       string
		count      float64
		minSeconds float64 // each observation is at least this (a timer never fires early)
	}{
		{metricTTFT, n, 0.004},
		{metricITL, n * 4, 0}, // a late chunk shortens the next interval: pacing keeps to the plan
		{metricE2E, n, 0.004 + 4*0.002},
		{metricQueue, n, 0},
	} {
		count, sum := value(t, fams, h.name, dto.MetricType_HISTOGRAM, m)
		if count != h.count || sum < h.count*h.minSeconds {
			t.Errorf("%s: count %v sum %v, want count %v and sum ≥ %v", h.name, count, sum, h.count, h.count*h.minSeconds)
		}
	}
}

// TestMetricsUnderLoad: with every slot busy and requests queued, running
// is the slot count, waiting the queue, and KV-cache usage 1.
func TestMetricsUnderLoad(t *testing.T) {
	cfg := testConfig()
	cfg.Slots = 2
	cfg.AdmissionLimit = 8
	cfg.Windows = []Window{{Duration: time.Minute, Stall: true}} // nothing finishes while we look
	s, base := startServer(t, cfg)
	c := testClient(t)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for range 5 {
		wg.Go(func() {
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, base+"/chat/completions",
				strings.NewReader(`{"model":"m","stream":true,"messages":[{"role":"user","content":"hi"}]}`))
			resp, err := c.Do(req)
			if err == nil {
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		})
	}
	defer func() { cancel(); wg.Wait() }()
	deadline := time.Now().Add(10 * time.Second)
	for st := s.Stats(); st.Queued < 3 && time.Now().Before(deadline); st = s.Stats() {
		time.Sleep(5 * time.Millisecond)
	}
	fams := scrapeMetrics(t, c, base)
	for _, g := range []struct {
		name string
		want float64
	}{{metricRunning, 2}, {metricWaiting, 3}, {metricKVCache, 1}} {
		if v, _ := value(t, fams, g.name, dto.MetricType_GAUGE, DefaultModel); v != g.want {
			t.Errorf("%s = %v, want %v", g.name, v, g.want)
		}
	}
	if v, _ := value(t, fams, metricTTFT, dto.MetricType_HISTOGRAM, DefaultModel); v != 0 {
		t.Errorf("TTFT observed %v times during a stall", v)
	}
}

// TestMetricsRegistryPerServer: two simulators in one process keep their
// own counts (no global registry).
func TestMetricsRegistryPerServer(t *testing.T) {
	_, a := startServer(t, testConfig())
	_, b := startServer(t, testConfig())
	c := testClient(t)
	resp := post(t, c, a+"/chat/completions", `{"model":"m","messages":[{"role":"user","content":"hi"}]}`, nil)
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if v, _ := value(t, scrapeMetrics(t, c, a), metricSuccess, dto.MetricType_COUNTER, DefaultModel); v != 1 {
		t.Errorf("server a: %v", v)
	}
	if v, _ := value(t, scrapeMetrics(t, c, b), metricSuccess, dto.MetricType_COUNTER, DefaultModel); v != 0 {
		t.Errorf("server b: %v", v)
	}
}
