package integration

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/ledger"
	"github.com/llmprobe/llmprobe/internal/testutil"
)

// probeEndpointConfig is llmprobe with the modules and target the scrape
// configuration of docs/probe-endpoint.md names, and no traffic of its own.
const probeEndpointConfig = `
admin:
  listen: "ADMIN_ADDR"
log: {level: info, format: json}
targets:
  - name: vllm-a
    url: http://SIM_ADDR/v1
    model: itest-model
    baseline: {enabled: false}
probe:
  allowed_targets: ["http://SIM_ADDR/v1", "http://DEAD_ADDR/v1"]
  modules:
    chat_short: {timeouts: {total: 30s}}
    llama_url: {model: itest-model, timeouts: {total: 30s}, class: {output: {dist: fixed, value: 8}}}
`

// docScrapeConfig returns the scrape configuration of
// docs/probe-endpoint.md, as written there.
func docScrapeConfig(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("../../docs/probe-endpoint.md")
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(b), "## The Prometheus scrape configuration")
	if !ok {
		t.Fatal("docs/probe-endpoint.md has no scrape configuration section")
	}
	_, block, ok := strings.Cut(after, "```yaml\n")
	if !ok {
		t.Fatal("no yaml block in the scrape configuration section")
	}
	block, _, _ = strings.Cut(block, "```")
	return block
}

// TestProbeEndpointPrometheus: a real Prometheus with the scrape
// configuration of docs/probe-endpoint.md (its relabel_configs as written;
// only addresses and intervals changed) probes through llmprobe's /probe a
// URL (the simulator), an allowed URL where nothing listens, and a
// configured target by name, and stores probe_* series per instance.
func TestProbeEndpointPrometheus(t *testing.T) {
	prom := prometheusBin(t)
	bin := llmprobeBin(t)
	dir := t.TempDir()
	simAddr, adminAddr, promAddr, deadAddr := freeAddr(t), freeAddr(t), freeAddr(t), freeAddr(t)
	promURL := "http://" + promAddr
	ttft := 100 * time.Millisecond

	scrape := replaceAll(docScrapeConfig(t),
		"http://10.0.0.6:8000/v1", "http://"+simAddr+"/v1",
		"https://llm.internal.example/v1", "http://"+deadAddr+"/v1",
		"127.0.0.1:9464", adminAddr,
		"scrape_interval: 30s", "scrape_interval: 2s",
		"scrape_timeout: 15s", "scrape_timeout: 2s")
	promCfg := "global:\n  scrape_interval: 2s\n  evaluation_interval: 2s\n" + scrape
	start(t, "prometheus", nil, prom, "--config.file="+writeFile(t, dir, "prometheus.yml", promCfg),
		"--storage.tsdb.path="+dir+"/data", "--web.listen-address="+promAddr, "--log.level=warn")
	start(t, "sim", nil, bin, "sim", "--listen", simAddr, "--ttft", ttft.String(), "--token-time", "5ms", "--output-tokens", "16")
	waitHTTP(t, "http://"+simAddr+"/healthz", 20*time.Second)
	waitHTTP(t, promURL+"/-/ready", 60*time.Second)
	cfg := writeFile(t, dir, "llmprobe.yaml", replaceAll(probeEndpointConfig, "ADMIN_ADDR", adminAddr, "SIM_ADDR", simAddr, "DEAD_ADDR", deadAddr))
	start(t, "llmprobe", nil, bin, "run", "--config", cfg)
	waitHTTP(t, "http://"+adminAddr+"/-/ready", 20*time.Second)

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	one := func(q string) (float64, error) {
		res, err := query(ctx, promURL, q)
		if err != nil {
			return 0, err
		}
		if len(res) != 1 {
			return 0, fmt.Errorf("%s: want one series, got %d", q, len(res))
		}
		v, ok := scalarOf(res[0])
		if !ok {
			return 0, fmt.Errorf("%s: no value", q)
		}
		return v, nil
	}
	simInstance := "http://" + simAddr + "/v1"
	testutil.EventuallyOK(t, 90*time.Second, "probes stored per instance", func() error {
		for q, want := range map[string]float64{
			`probe_success{job="llm-probe",instance="` + simInstance + `"}`:                                                                  1,
			`probe_success{job="llm-probe",instance="http://` + deadAddr + `/v1"}`:                                                           0,
			`probe_llm_outcome{job="llm-probe",instance="http://` + deadAddr + `/v1",outcome="transport_error",reason="connection_refused"}`: 1,
			`probe_success{job="llm-probe-configured",instance="vllm-a"}`:                                                                    1,
			`up{job="llm-probe-configured",instance="vllm-a"}`:                                                                               1,
		} {
			v, err := one(q)
			if err != nil {
				return err
			}
			if v != want {
				return fmt.Errorf("%s = %v, want %v", q, v, want)
			}
		}
		return nil
	})
	v, err := one(`probe_llm_time_to_first_token_seconds{job="llm-probe",instance="` + simInstance + `"}`)
	if err != nil {
		t.Fatal(err)
	}
	if v < ttft.Seconds() || v > 10*ttft.Seconds() {
		t.Errorf("TTFT %vs, want at least the simulator's %v", v, ttft)
	}
	// Every series of a probe carries its instance, as blackbox's do: one
	// per outcome and reason of the ledger's closed set.
	closed := 0
	for _, o := range ledger.Outcomes {
		closed += len(ledger.ReasonsFor(o))
	}
	if n, err := one(`count(probe_llm_outcome{job="llm-probe",instance="` + simInstance + `"})`); err != nil || n != float64(closed) {
		t.Errorf("outcome series per instance: %v %v, want the closed set (%d)", n, err, closed)
	}
}
