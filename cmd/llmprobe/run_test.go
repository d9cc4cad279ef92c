package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// TestRunDaemonSmoke starts the daemon on a config that probes an
// in-process simulator, waits until it is ready and has measured, scrapes
// /metrics, then cancels it: it must stop by itself with exit code 0, close
// its admin port, and never print the API key.
func TestRunDaemonSmoke(t *testing.T) {
	t.Parallel()
	const key = "sk-daemon-key-never-printed-91e2"
	cfg := fastSim()
	cfg.APIKey = key
	simURL := startSim(t, cfg)
	dir := t.TempDir()
	keyFile := filepath.Join(dir, "key")
	if err := os.WriteFile(keyFile, []byte(key), 0o600); err != nil {
		t.Fatal(err)
	}
	admin := closedPort(t)
	conf := filepath.Join(dir, "llmprobe.yaml")
	yaml := fmt.Sprintf(`admin:
  listen: %q
log:
  level: info
  format: json
ledger:
  dir: %q
drain:
  timeout: 3s
targets:
  - name: smoke
    url: %s
    api: openai-chat
    model: llmprobe-sim
    api_key_file: %q
    timeouts: {connect: 2s, headers: 5s, first_content: 5s, idle: 5s, total: 10s}
    baseline: {rate: 10, arrival: constant}
    classes:
      - name: chat
        weight: 1
        input: {dist: fixed, value: 32}
        output: {dist: fixed, value: 8}
        gates: {ttft: 2s}
    ladder:
      enabled: false
`, admin, filepath.Join(dir, "ledger"), simURL, keyFile)
	if err := os.WriteFile(conf, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}

	d := startDaemon(t, admin, "run", "--config", conf)
	families := d.waitMetrics(func(mf map[string]*dto.MetricFamily) bool {
		return sum(mf["llmprobe_requests_total"], map[string]string{"target": "smoke", "outcome": "ok", "traffic": "baseline"}) >= 3
	})

	if sum(families["llmprobe_build_info"], nil) != 1 {
		t.Error("llmprobe_build_info is not 1")
	}
	// A scrape reads its families one after the other while records
	// arrive, so one scrape's planned may trail its own dispatched; a later
	// scrape's planned (dispatched) is never below an earlier one's
	// dispatched (ok): each record counts its plan, then its dispatch, then
	// its outcome.
	later := d.waitMetrics(func(map[string]*dto.MetricFamily) bool { return true })
	planned := sum(later["llmprobe_requests_planned_total"], map[string]string{"target": "smoke"})
	laterDispatched := sum(later["llmprobe_requests_dispatched_total"], map[string]string{"target": "smoke"})
	dispatched := sum(families["llmprobe_requests_dispatched_total"], map[string]string{"target": "smoke"})
	ok := sum(families["llmprobe_requests_total"], map[string]string{"target": "smoke", "outcome": "ok"})
	if !(planned >= dispatched && laterDispatched >= ok && ok >= 3) {
		t.Errorf("planned %v (later scrape), dispatched %v, %v (later), ok %v: want planned ≥ dispatched, dispatched later ≥ ok ≥ 3", planned, dispatched, laterDispatched, ok)
	}
	if n := sum(families["llmprobe_requests_total"], map[string]string{"target": "smoke", "outcome": "http_error"}); n != 0 {
		t.Errorf("%v http_error requests: the API key did not reach the simulator", n)
	}
	if _, found := families["llmprobe_time_to_first_token_seconds"]; !found {
		t.Error("/metrics has no llmprobe_time_to_first_token_seconds")
	}

	r := d.stop()
	if strings.Contains(r.stderr, key) {
		t.Error("the daemon's log contains the API key")
	}
	if strings.Contains(r.stderr, strings.TrimPrefix(simURL, "http://")) {
		t.Error("the daemon's log contains the target URL")
	}
	files, _ := filepath.Glob(filepath.Join(dir, "ledger", "*.jsonl"))
	var ledgerText strings.Builder
	for _, f := range files {
		b, _ := os.ReadFile(f)
		ledgerText.Write(b)
	}
	if !strings.Contains(ledgerText.String(), `"outcome":"ok"`) {
		t.Errorf("ledger dir holds no ok record (files %v)", files)
	}
	if strings.Contains(ledgerText.String(), key) {
		t.Error("the daemon's ledger contains the API key")
	}
}

// TestRunBuiltIn: `llmprobe run` with no --config probes the built-in
// simulator (the README's first command), here on a free admin port; a
// cancellation mid-ladder still ends it promptly with exit code 0.
func TestRunBuiltIn(t *testing.T) {
	t.Parallel()
	admin := closedPort(t)
	d := startDaemon(t, admin, "run", "--listen", admin, "--log-level", "warn")
	mf := d.waitMetrics(func(mf map[string]*dto.MetricFamily) bool {
		return sum(mf["llmprobe_requests_total"], map[string]string{"outcome": "ok"}) >= 1
	})
	if sum(mf["llmprobe_requests_planned_total"], map[string]string{"target": "sim"}) < 1 {
		t.Error("no planned requests for the built-in target \"sim\"")
	}
	if code, body := d.get("/"); code != http.StatusOK || !strings.Contains(body, "sim") {
		t.Errorf("status page: %d", code)
	}
	// Its ladders read the simulator's own /metrics (server_metrics).
	if _, body := d.get("/config"); !regexp.MustCompile(`"server_metrics": \{[^}]*"url": "http://127\.0\.0\.1:\d+/metrics"`).MatchString(body) {
		t.Errorf("the built-in target reads no server metrics:\n%s", body)
	}
	r := d.stop()
	if !strings.Contains(r.stderr, "built-in simulator") {
		t.Errorf("stderr does not say the built-in simulator is probed:\n%s", r.stderr)
	}
}

// runningDaemon is a `llmprobe run` started in-process by a test.
type runningDaemon struct {
	t      *testing.T
	base   string
	admin  string
	cancel context.CancelFunc
	done   chan result
	client *http.Client
}

// startDaemon runs the CLI with args in the background; its admin server
// listens on admin. It waits for /-/ready.
func startDaemon(t *testing.T, admin string, args ...string) *runningDaemon {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	d := &runningDaemon{t: t, base: "http://" + admin, admin: admin, cancel: cancel, done: make(chan result, 1),
		client: &http.Client{Timeout: 2 * time.Second}}
	exited := make(chan struct{})
	go func() {
		defer close(exited)
		d.done <- invoke(ctx, args...)
	}()
	t.Cleanup(func() {
		// Also after a failed test: stop the daemon and wait for it, so
		// that nothing outlives the test.
		cancel()
		<-exited
		d.client.CloseIdleConnections()
	})
	d.waitFor("/-/ready 200", 20*time.Second, func() bool { code, _ := d.get("/-/ready"); return code == http.StatusOK })
	return d
}

func (d *runningDaemon) get(path string) (int, string) {
	resp, err := d.client.Get(d.base + path)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// waitFor polls cond until it holds; the daemon exiting or limit passing
// fails the test.
func (d *runningDaemon) waitFor(what string, limit time.Duration, cond func() bool) {
	d.t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		select {
		case r := <-d.done:
			d.t.Fatalf("daemon exited (code %d) while waiting for %s\nstderr:\n%s", r.code, what, r.stderr)
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			d.cancel()
			r := <-d.done
			d.t.Fatalf("no %s after %v\nstderr:\n%s", what, limit, r.stderr)
		}
	}
}

// waitMetrics scrapes /metrics until cond holds and returns that scrape.
func (d *runningDaemon) waitMetrics(cond func(map[string]*dto.MetricFamily) bool) map[string]*dto.MetricFamily {
	d.t.Helper()
	var last map[string]*dto.MetricFamily
	d.waitFor("the expected series in /metrics", 20*time.Second, func() bool {
		code, body := d.get("/metrics")
		if code != http.StatusOK {
			return false
		}
		p := expfmt.NewTextParser(model.UTF8Validation)
		mf, err := p.TextToMetricFamilies(strings.NewReader(body))
		if err != nil {
			d.t.Errorf("/metrics does not parse: %v", err)
			return false
		}
		last = mf
		return cond(mf)
	})
	return last
}

// stop cancels the daemon (as the first SIGINT does) and waits for it to
// drain and return: exit code 0, admin port closed.
func (d *runningDaemon) stop() result {
	d.t.Helper()
	d.cancel()
	var r result
	select {
	case r = <-d.done:
	case <-time.After(20 * time.Second):
		d.t.Fatal("daemon did not return within 20s of cancellation")
	}
	if r.code != 0 {
		d.t.Errorf("daemon exit code %d, want 0\nstderr:\n%s", r.code, r.stderr)
	}
	if c, err := net.DialTimeout("tcp", d.admin, time.Second); err == nil {
		c.Close()
		d.t.Error("the admin port still accepts connections after the daemon returned")
	}
	return r
}

// sum adds the values of the counters, gauges and histogram counts in mf
// whose labels include want.
func sum(mf *dto.MetricFamily, want map[string]string) float64 {
	if mf == nil {
		return 0
	}
	total := 0.0
next:
	for _, m := range mf.GetMetric() {
		labels := map[string]string{}
		for _, l := range m.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		for k, v := range want {
			if labels[k] != v {
				continue next
			}
		}
		switch {
		case m.Counter != nil:
			total += m.GetCounter().GetValue()
		case m.Gauge != nil:
			total += m.GetGauge().GetValue()
		case m.Histogram != nil:
			total += float64(m.GetHistogram().GetSampleCount())
		}
	}
	return total
}

// TestRunBadConfig: a missing or invalid config file stops the daemon
// before it starts, naming the file.
func TestRunBadConfig(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("targets:\n  - name: x\n    url: http://127.0.0.1:1/v1\n    colour: blue\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ path, want string }{
		{filepath.Join(dir, "missing.yaml"), "missing.yaml"},
		{bad, "colour"},
	} {
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		r := invoke(ctx, "run", "--config", tc.path)
		cancel()
		if r.code == 0 {
			t.Errorf("run --config %s: exit 0", tc.path)
		}
		if !strings.Contains(r.stderr, filepath.Base(tc.path)) || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("run --config %s: stderr does not name the file and %q:\n%s", tc.path, tc.want, r.stderr)
		}
	}
}

// TestRunChecksWebConfig: run refuses a web config whose certificate does
// not exist before it starts, naming where the setting came from, the key
// and the file, as validate does.
func TestRunChecksWebConfig(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	webConfig := filepath.Join(dir, "web.yml")
	if err := os.WriteFile(webConfig, []byte("tls_server_config:\n  cert_file: "+filepath.Join(dir, "no-such-cert.pem")+"\n  key_file: "+filepath.Join(dir, "no-such-key.pem")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	good, err := os.ReadFile(filepath.Join("..", "..", "config", "simulator.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	conf := filepath.Join(dir, "c.yaml")
	if err := os.WriteFile(conf, []byte(strings.Replace(string(good), "admin:\n", "admin:\n  web_config_file: "+webConfig+"\n", 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "--config", conf, "--listen", closedPort(t)}, conf + ": admin.web_config_file"},
		{[]string{"run", "--listen", closedPort(t), "--web-config-file", webConfig}, "flag --web-config-file: admin.web_config_file"},
	} {
		ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
		r := invoke(ctx, tc.args...)
		cancel()
		if r.code == 0 || !strings.Contains(r.stderr, tc.want) || !strings.Contains(r.stderr, "no-such-cert.pem") {
			t.Errorf("%v: exit %d, stderr %q: want a failure naming %q and the certificate", tc.args, r.code, r.stderr, tc.want)
		}
	}
}
