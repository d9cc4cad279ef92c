package proxy

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/llmprobe/llmprobe/internal/dashgen"
	"github.com/llmprobe/llmprobe/internal/telemetry"
	"github.com/llmprobe/llmprobe/internal/testutil"
)

// TestCertificateAlertInPrometheus probes nginx presenting a certificate
// that expires in 3 days, lets a real Prometheus scrape the prober's
// series and evaluate the shipped rules (time-scaled: `for: 10m` is 5 s),
// and waits for LLMProbeCertificateExpiringSoon to fire as a ticket, not a
// page (that is 2 days ahead).
func TestCertificateAlertInPrometheus(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: a real Prometheus is not started")
	}
	requireNginx(t)
	prom := testutil.Prometheus(t, "see LLMProbeCertificateExpiringSoon fire in a real Prometheus")
	n := startNginx(t, proxyConfig{Upstream: startSim(t, simTTFT), CertExpiry: time.Now().Add(72 * time.Hour)})
	rec, err := telemetry.New(telemetry.Options{})
	if err != nil {
		t.Fatal(err)
	}
	run(t, client(t, n.cfg.CAFile, false), n.TLSURL(), 2, 100*time.Millisecond, rec)

	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	metrics := &http.Server{Handler: promhttp.HandlerFor(rec.Registry(), promhttp.HandlerOpts{}), ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = metrics.Serve(l) }()
	t.Cleanup(func() { _ = metrics.Close() })

	o := dashgen.DefaultRuleOptions()
	o.TimeScale = 1.0 / 120
	rules, err := dashgen.RenderRules(o)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "rules.yml"), rules, 0o600); err != nil {
		t.Fatal(err)
	}
	conf := fmt.Sprintf("global: {scrape_interval: 1s, evaluation_interval: 1s}\nrule_files: [%s]\n"+
		"scrape_configs:\n  - job_name: llmprobe\n    static_configs: [{targets: [%q]}]\n", filepath.Join(dir, "rules.yml"), l.Addr().String())
	if err := os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	promAddr := "127.0.0.1:" + strconv.Itoa(freePort(t))
	cmd := exec.Command(prom, "--config.file="+filepath.Join(dir, "prometheus.yml"), "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+promAddr)
	out := &testutil.SyncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("--- prometheus output:\n%s", testutil.Tail(out.String(), 3000))
		}
	})
	var firing []map[string]string
	testutil.EventuallyOK(t, 90*time.Second, "LLMProbeCertificateExpiringSoon firing", func() error {
		var err error
		firing, err = alerts(context.Background(), "http://"+promAddr, `ALERTS{alertname="LLMProbeCertificateExpiringSoon", alertstate="firing"}`)
		if err == nil && len(firing) == 0 {
			err = fmt.Errorf("not firing yet")
		}
		return err
	})
	for _, a := range firing {
		t.Logf("firing: %v", a)
		if a["severity"] != "ticket" || a["target"] != "gw" {
			t.Errorf("firing %v, want the ticket for target gw alone (the page is 2 days ahead)", a)
		}
	}
}

// alerts runs an instant query and returns the label sets of its result.
func alerts(ctx context.Context, promURL, q string) ([]map[string]string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, promURL+"/api/v1/query?"+url.Values{"query": {q}}.Encode(), nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	var r struct {
		Status string `json:"status"`
		Data   struct {
			Result []struct {
				Metric map[string]string `json:"metric"`
			} `json:"result"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &r); err != nil || r.Status != "success" {
		return nil, fmt.Errorf("query %q: %v: %s", q, err, testutil.Tail(string(body), 300))
	}
	var out []map[string]string
	for _, x := range r.Data.Result {
		out = append(out, x.Metric)
	}
	return out, nil
}
