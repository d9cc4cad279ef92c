package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"golang.org/x/crypto/bcrypt"
)

// daemonYAML is a small daemon configuration: one target per name, each
// probing simURL at 5 req/s, without ladders.
func daemonYAML(admin, simURL, extraTop string, names ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "admin:\n  listen: %q\n%sdrain: {timeout: 2s}\ntargets:\n", admin, extraTop)
	for _, n := range names {
		fmt.Fprintf(&b, `  - name: %s
    url: %s
    model: llmprobe-sim
    timeouts: {connect: 2s, headers: 5s, first_content: 5s, idle: 5s, total: 10s}
    baseline: {rate: 5, arrival: constant}
    classes:
      - name: chat
        input: {dist: fixed, value: 16}
        output: {dist: fixed, value: 4}
    ladder: {enabled: false}
`, n, simURL)
	}
	return b.String()
}

func writeConf(t *testing.T, path, body string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
}

// do sends method path to the daemon and returns the status and body.
func (d *runningDaemon) do(method, path string) (int, string) {
	d.t.Helper()
	req, _ := http.NewRequest(method, d.base+path, nil)
	resp, err := d.client.Do(req)
	if err != nil {
		d.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestReloadOverHTTP: against a running `llmprobe run --web.enable-lifecycle`,
// POST /-/reload applies an edited file (a second target starts probing);
// a file that does not validate is refused with a 500 naming the file and
// the key, and the old configuration keeps running (both targets still
// probed, still ready); GET /-/reload is 405. Each reload is logged.
func TestReloadOverHTTP(t *testing.T) {
	t.Parallel()
	simURL := startSim(t, fastSim())
	admin := closedPort(t)
	conf := filepath.Join(t.TempDir(), "llmprobe.yaml")
	writeConf(t, conf, daemonYAML(admin, simURL, "log: {format: json}\n", "a"))
	d := startDaemon(t, admin, "run", "--config.file", conf, "--web.enable-lifecycle")

	const reloadOK, reloadTS = "llmprobe_config_last_reload_successful", "llmprobe_config_last_reload_success_timestamp_seconds"
	start := d.waitMetrics(func(mf map[string]*dto.MetricFamily) bool { return sum(mf[reloadOK], nil) == 1 })
	startTS := sum(start[reloadTS], nil)
	if startTS < float64(time.Now().Add(-time.Hour).Unix()) {
		t.Errorf("%s at start = %g, want the start time", reloadTS, startTS)
	}
	if code, _ := d.do(http.MethodGet, "/-/reload"); code != http.StatusMethodNotAllowed {
		t.Errorf("GET /-/reload: %d, want 405", code)
	}
	writeConf(t, conf, daemonYAML(admin, simURL, "log: {format: json}\n", "a", "b"))
	if code, body := d.do(http.MethodPost, "/-/reload"); code != http.StatusOK || !strings.Contains(body, "reloaded") {
		t.Fatalf("POST /-/reload with a good file: %d %q", code, body)
	}
	okFor := func(target string) func(map[string]*dto.MetricFamily) bool {
		return func(mf map[string]*dto.MetricFamily) bool {
			return sum(mf["llmprobe_requests_total"], map[string]string{"target": target, "outcome": "ok"}) >= 2
		}
	}
	goodTS := sum(d.waitMetrics(okFor("b"))[reloadTS], nil)
	if goodTS <= startTS {
		t.Errorf("%s after a good reload = %g, want later than at start (%g)", reloadTS, goodTS, startTS)
	}

	bad := strings.Replace(daemonYAML(admin, simURL, "log: {format: json}\n", "a", "b", "c"), "total: 10s", "total: soon", 1)
	writeConf(t, conf, bad)
	code, body := d.do(http.MethodPost, "/-/reload")
	if code != http.StatusInternalServerError || !strings.Contains(body, conf) || !strings.Contains(body, "targets[0].timeouts.total") {
		t.Errorf("POST /-/reload with a bad file: %d %q, want 500 naming the file and the key", code, body)
	}
	refused := d.waitMetrics(func(mf map[string]*dto.MetricFamily) bool { return mf[reloadOK] != nil && sum(mf[reloadOK], nil) == 0 })
	if ts := sum(refused[reloadTS], nil); ts != goodTS {
		t.Errorf("%s after a refused reload = %g, want the last good one's %g", reloadTS, ts, goodTS)
	}
	if code, cfg := d.get("/config"); code != http.StatusOK || !strings.Contains(cfg, `"name": "b"`) || strings.Contains(cfg, `"name": "c"`) {
		t.Errorf("after a refused reload /config is not the old configuration: %d\n%s", code, cfg)
	}
	before := d.waitMetrics(okFor("a"))
	n := sum(before["llmprobe_requests_total"], map[string]string{"target": "b", "outcome": "ok"})
	d.waitMetrics(func(mf map[string]*dto.MetricFamily) bool {
		return sum(mf["llmprobe_requests_total"], map[string]string{"target": "b", "outcome": "ok"}) > n
	})
	if code, _ := d.get("/-/ready"); code != http.StatusOK {
		t.Errorf("not ready after a refused reload: %d", code)
	}
	r := d.stop()
	for _, want := range []string{`"msg":"configuration reloaded","trigger":"POST /-/reload","targets":2`, `"msg":"reload refused: the configuration does not load; the old one keeps running","trigger":"POST /-/reload"`} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("log lacks %s:\n%s", want, r.stderr)
		}
	}
}

// TestRunFlags: each of run's Prometheus-style flags does what it says on
// a running daemon, and each former name still works with one warning.
func TestRunFlags(t *testing.T) {
	t.Parallel()
	simURL := startSim(t, fastSim())
	hash, err := bcrypt.GenerateFromPassword([]byte("s3cret"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	web := filepath.Join(t.TempDir(), "web.yml")
	writeConf(t, web, "basic_auth_users:\n  prom: "+string(hash)+"\n")
	logfmtLine := regexp.MustCompile(`^time=\S+ level=[A-Z]+ msg=`)
	tests := []struct {
		name  string
		admin string // more admin keys of the file
		flags func(admin string) []string
		live  func(t *testing.T, d *runningDaemon) // while it runs
		logs  func(t *testing.T, stderr string)    // after it stopped
	}{
		{"--web.listen-address and --log.format logfmt", "", func(admin string) []string {
			return []string{"--web.listen-address", admin, "--log.format", "logfmt"}
		}, nil, func(t *testing.T, stderr string) {
			for _, l := range strings.Split(strings.TrimSpace(stderr), "\n") {
				if !logfmtLine.MatchString(l) {
					t.Errorf("not a logfmt line: %q", l)
				}
			}
			if !strings.Contains(stderr, `msg="starting llmprobe" version=`) || !strings.Contains(stderr, "timeout=2s") {
				t.Errorf("no start line with the version, or the drain timeout not as 2s:\n%s", stderr)
			}
		}},
		{"--log.level warn and --log.format json", "", func(admin string) []string {
			return []string{"--web.listen-address", admin, "--log.level", "warn", "--log.format", "json"}
		}, nil, func(t *testing.T, stderr string) {
			if strings.Contains(stderr, `"level":"INFO"`) || strings.Contains(stderr, "starting llmprobe") {
				t.Errorf("info lines at level warn:\n%s", stderr)
			}
		}},
		{"former names: one warning each", "", func(admin string) []string {
			return []string{"--listen", admin, "--log-level", "info", "--log-format", "json"}
		}, nil, func(t *testing.T, stderr string) {
			for _, f := range [][2]string{{"listen", "web.listen-address"}, {"log-level", "log.level"}, {"log-format", "log.format"}, {"config", "config.file"}} {
				want := fmt.Sprintf(`"flag":"--%s","use":"--%s"`, f[0], f[1])
				if n := strings.Count(stderr, want); n != 1 {
					t.Errorf("%d warnings for --%s, want 1:\n%s", n, f[0], stderr)
				}
			}
		}},
		{"--web.config.file with health_without_auth", "  health_without_auth: true\n", func(admin string) []string {
			return []string{"--web.listen-address", admin, "--web.config.file", web, "--log.format", "json"}
		}, func(t *testing.T, d *runningDaemon) {
			// startDaemon waited for /-/ready without a password.
			if code, _ := d.get("/metrics"); code != http.StatusUnauthorized {
				t.Errorf("/metrics without a password: %d, want 401", code)
			}
			if code, _ := d.do(http.MethodPost, "/-/reload"); code != http.StatusUnauthorized {
				t.Errorf("POST /-/reload without a password: %d, want 401 (behind auth even when the lifecycle API is off)", code)
			}
		}, nil},
		{"no --web.enable-lifecycle: /-/reload is 403", "", func(admin string) []string {
			return []string{"--web.listen-address", admin}
		}, func(t *testing.T, d *runningDaemon) {
			if code, body := d.do(http.MethodPost, "/-/reload"); code != http.StatusForbidden || !strings.Contains(body, "--web.enable-lifecycle") {
				t.Errorf("POST /-/reload: %d %q, want 403 naming the flag", code, body)
			}
		}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			admin := closedPort(t)
			conf := filepath.Join(t.TempDir(), "llmprobe.yaml")
			// The file listens elsewhere: only the flag can make the daemon listen on admin.
			writeConf(t, conf, strings.Replace(daemonYAML(closedPort(t), simURL, "", "a"), "admin:\n", "admin:\n"+tc.admin, 1))
			confFlag := "--config.file"
			if strings.HasPrefix(tc.name, "former") {
				confFlag = "--config"
			}
			d := startDaemon(t, admin, append([]string{"run", confFlag, conf}, tc.flags(admin)...)...)
			if tc.live != nil {
				tc.live(t, d)
			}
			r := d.stop()
			if tc.logs != nil {
				tc.logs(t, r.stderr)
			}
		})
	}
}

// TestSIGHUPReloads: a real `llmprobe run` process reloads on SIGHUP (a
// second target), refuses a file that does not validate and keeps running,
// and logs both with trigger SIGHUP.
func TestSIGHUPReloads(t *testing.T) {
	t.Parallel()
	simURL := startSim(t, fastSim())
	admin := closedPort(t)
	conf := filepath.Join(t.TempDir(), "llmprobe.yaml")
	writeConf(t, conf, daemonYAML(admin, simURL, "log: {format: json}\n", "a"))
	a, _ := json.Marshal([]string{"run", "--config.file", conf})
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), mainArgsEnv+"="+string(a))
	var errOut syncBuffer
	cmd.Stderr = &errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitLog := func(what string) {
		t.Helper()
		for deadline := time.Now().Add(20 * time.Second); !strings.Contains(errOut.String(), what); time.Sleep(50 * time.Millisecond) {
			if time.Now().After(deadline) {
				_ = cmd.Process.Kill()
				_ = cmd.Wait()
				t.Fatalf("no %s in the log:\n%s", what, errOut.String())
			}
		}
	}
	waitLog(`"msg":"llmprobe running"`)
	writeConf(t, conf, daemonYAML(admin, simURL, "log: {format: json}\n", "a", "b"))
	_ = cmd.Process.Signal(syscall.SIGHUP)
	waitLog(`"msg":"configuration reloaded","trigger":"SIGHUP","targets":2`)
	writeConf(t, conf, strings.Replace(daemonYAML(admin, simURL, "log: {format: json}\n", "a"), "total: 10s", "total: soon", 1))
	_ = cmd.Process.Signal(syscall.SIGHUP)
	waitLog(`"msg":"reload refused: the configuration does not load; the old one keeps running","trigger":"SIGHUP"`)
	resp, err := http.Get("http://" + admin + "/-/ready")
	if err != nil {
		t.Fatalf("not serving after a refused reload: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("/-/ready after a refused reload: %d", resp.StatusCode)
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	if err := cmd.Wait(); err != nil {
		t.Errorf("exit after SIGTERM: %v\n%s", err, errOut.String())
	}
}
