package integration

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/testutil"
)

const probeConfig = `
admin:
  listen: "ADMIN_ADDR"
log: {level: info, format: json}
otel: {enabled: true}
targets:
  - name: sim
    url: http://SIM_ADDR/v1
    api: openai-chat
    model: itest-model
    timeouts: {connect: 2s, headers: 2s, first_content: 2s, idle: 5s, total: 20s}
    baseline: {rate: 10, arrival: poisson, seed: 7}
    classes:
      - name: chat
        input: {dist: fixed, value: 32}
        output: {dist: fixed, value: 16}
        gates: {ttft: 1s, e2e: 5s}
    ladder:
      enabled: true
      run_on_start: true
      # go test runs other packages beside this one on the same two cores:
      # judge the generator with room for that, so the ladder measures the
      # target rather than the test machine's load.
      max_lag_p99: 250ms
      steps: [5, 10, 20]
      step_duration: 3s
      gap: 1s
      max_rate: 50
`

const promConfig = `
global:
  scrape_interval: 1s
  evaluation_interval: 1s
rule_files:
  - "RULES_FILE"
scrape_configs:
  - job_name: llmprobe
    scrape_native_histograms: true
    always_scrape_classic_histograms: true
    static_configs:
      - targets: ["ADMIN_ADDR"]
`

// stack is llmprobe probing its simulator, scraped by and pushing OTLP to a
// real Prometheus.
type stack struct {
	promURL   string
	adminAddr string
	ttft      time.Duration // the simulator's fixed prefill time
}

func startStack(t *testing.T) stack {
	t.Helper()
	prom := prometheusBin(t)
	bin := llmprobeBin(t)
	dir := t.TempDir()
	simAddr, adminAddr, promAddr := freeAddr(t), freeAddr(t), freeAddr(t)
	st := stack{promURL: "http://" + promAddr, adminAddr: adminAddr, ttft: 200 * time.Millisecond}

	start(t, "prometheus", nil, prom,
		"--config.file="+writeFile(t, dir, "prometheus.yml", replaceAll(promConfig, "ADMIN_ADDR", adminAddr, "RULES_FILE", rulesFile(t))),
		"--storage.tsdb.path="+dir+"/data", "--web.listen-address="+promAddr,
		"--web.enable-otlp-receiver", "--log.level=warn")
	start(t, "sim", nil, bin, "sim", "--listen", simAddr, "--ttft", st.ttft.String(), "--token-time", "5ms",
		"--output-tokens", "16", "--slots", "64")
	waitHTTP(t, "http://"+simAddr+"/healthz", 20*time.Second)
	waitHTTP(t, st.promURL+"/-/ready", 60*time.Second)
	cfg := writeFile(t, dir, "llmprobe.yaml", replaceAll(probeConfig, "ADMIN_ADDR", adminAddr, "SIM_ADDR", simAddr))
	start(t, "llmprobe", []string{
		"OTEL_EXPORTER_OTLP_METRICS_ENDPOINT=" + st.promURL + "/api/v1/otlp/v1/metrics",
		"OTEL_EXPORTER_OTLP_METRICS_PROTOCOL=http/protobuf",
		"OTEL_METRIC_EXPORT_INTERVAL=1000",
	}, bin, "run", "--config", cfg)
	waitHTTP(t, "http://"+adminAddr+"/-/ready", 20*time.Second)
	return st
}

// TestRealPrometheus runs llmprobe probing its simulator with a real
// Prometheus scraping it (native histograms, llmprobe's rules loaded) and
// receiving its OTLP metrics, then checks what users rely on.
func TestRealPrometheus(t *testing.T) {
	st := startStack(t)
	t.Run("native histograms", func(t *testing.T) { nativeHistograms(t, st) })
	t.Run("otlp", func(t *testing.T) { otlpMetrics(t, st) })
	t.Run("dashboards", func(t *testing.T) { dashboardQueries(t, st) })
}

// nativeHistograms: the scraped TTFT is a native histogram, and
// histogram_quantile over it agrees with the simulator's configured latency.
func nativeHistograms(t *testing.T, st stack) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	// The scraped series is a native histogram (not only classic buckets).
	testutil.EventuallyOK(t, 60*time.Second, "native TTFT histogram scraped", func() error {
		res, err := query(ctx, st.promURL, `llmprobe_time_to_first_token_seconds{target="sim",class="chat",traffic="baseline",during="none"}`)
		if err != nil {
			return err
		}
		if len(res) != 1 || res[0].Histogram == nil {
			return fmt.Errorf("want one native histogram sample, got %+v", res)
		}
		return nil
	})

	// Enough data for a rate over 30s, then the median TTFT from the native
	// histogram sits near the simulator's fixed 200ms prefill (plus the
	// client's own overhead, within a native bucket's ±5%).
	testutil.EventuallyOK(t, 90*time.Second, "TTFT median from native histogram", func() error {
		res, err := query(ctx, st.promURL, `histogram_quantile(0.5, sum by (target) (rate(llmprobe_time_to_first_token_seconds{target="sim"}[30s])))`)
		if err != nil {
			return err
		}
		if len(res) != 1 {
			return fmt.Errorf("want one series, got %d", len(res))
		}
		v, ok := scalarOf(res[0])
		if !ok {
			return fmt.Errorf("no value in %+v", res[0])
		}
		lo, hi := 0.9*st.ttft.Seconds(), 1.6*st.ttft.Seconds()
		if v < lo || v > hi {
			return fmt.Errorf("TTFT p50 %.4fs outside [%.3f, %.3f] around the simulator's %v", v, lo, hi, st.ttft)
		}
		return nil
	})

	// Ledger counters: planned = dispatched + unsent holds in the scrape
	// (up to arrivals in flight at the scrape instant).
	res, err := query(ctx, st.promURL, `sum(llmprobe_requests_total{target="sim",outcome="ok"})`)
	if err != nil || len(res) != 1 {
		t.Fatalf("ok requests: %v %+v", err, res)
	}
	if v, _ := scalarOf(res[0]); v < 20 {
		t.Fatalf("only %v ok requests counted", v)
	}

}

// otlpMetrics: llmprobe's OTLP metrics arrive in Prometheus' OTLP receiver as
// native histograms under the GenAI semantic-convention names.
func otlpMetrics(t *testing.T, st stack) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	testutil.EventuallyOK(t, 60*time.Second, "OTLP semantic-convention histograms", func() error {
		names, err := query(ctx, st.promURL, `group by (__name__) ({__name__=~"gen_ai_client_operation_.*|gen_ai_client_token_usage.*"})`)
		if err != nil {
			return err
		}
		got := map[string]bool{}
		for _, n := range names {
			got[n.Metric["__name__"]] = true
		}
		for _, want := range []string{"gen_ai_client_operation_duration_seconds", "gen_ai_client_operation_time_to_first_chunk_seconds",
			"gen_ai_client_operation_time_per_output_chunk_seconds", "gen_ai_client_token_usage"} {
			if !got[want] {
				return fmt.Errorf("%s missing; have %v", want, keys(got))
			}
		}
		res, err := query(ctx, st.promURL, `gen_ai_client_operation_time_to_first_chunk_seconds`)
		if err != nil {
			return err
		}
		if len(res) == 0 || res[0].Histogram == nil {
			return fmt.Errorf("time_to_first_chunk is not a native histogram: %+v", res)
		}
		return nil
	})
}

func keys(m map[string]bool) string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return strings.Join(out, ",")
}
