package main

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestBadFlags: every bad flag or argument exits 2, before any request is
// sent, with an error naming the flag.
func TestBadFlags(t *testing.T) {
	t.Parallel()
	tests := []struct {
		args []string
		want []string // substrings of stderr
	}{
		{[]string{"probe", "--rate", "-1"}, []string{"--rate", "-1"}},
		{[]string{"probe", "--rate", "0"}, []string{"--rate"}},
		{[]string{"probe", "--rate", "abc"}, []string{"--rate", "abc"}},
		{[]string{"probe", "--arrival", "foo"}, []string{"--arrival", "foo"}},
		{[]string{"probe", "--think-time", "x"}, []string{"--think-time", `"x"`}},
		{[]string{"probe", "--think-time", "constant:soon"}, []string{"--think-time"}},
		{[]string{"probe", "--url", "ftp://x"}, []string{"--url", "ftp://x"}},
		{[]string{"probe", "--url", "http://user:pw@127.0.0.1:1/v1"}, []string{"--url", "credentials"}},
		{[]string{"probe", "--url", "http://127.0.0.1:1/v1?api-key=pw"}, []string{"--url", "api-key", "looks secret"}},
		{[]string{"probe", "--api", "nope"}, []string{"--api", "nope"}},
		{[]string{"probe", "--no-such-flag"}, []string{"unknown flag", "--no-such-flag"}},
		{[]string{"probe", "stray"}, []string{"unexpected argument", "stray"}},
		{[]string{"probe", "--sim-stall", "bad"}, []string{"--sim-stall", "bad"}},
		{[]string{"probe", "--sim-slowdown", "1s+1s"}, []string{"--sim-slowdown"}},
		{[]string{"probe", "--url", "http://127.0.0.1:1/v1", "--sim-slots", "2"}, []string{"--sim-"}},
		{[]string{"probe", "--max-in-flight", "-3"}, []string{"--max-in-flight"}},
		{[]string{"probe", "--max-buffered-bytes", "1000"}, []string{"--max-buffered-bytes"}},
		{[]string{"probe", "--backoff-jitter", "2"}, []string{"--backoff-jitter"}},
		{[]string{"probe", "--backoff", "0s"}, []string{"--backoff"}},
		{[]string{"probe", "--backoff", "2s", "--max-backoff", "1s"}, []string{"--max-backoff"}},
		{[]string{"probe", "--duration", "0s"}, []string{"--duration"}},
		{[]string{"probe", "--cancel-fraction", "1.5"}, []string{"--cancel-fraction"}},
		{[]string{"probe", "--header", "novalue"}, []string{"--header"}},
		{[]string{"probe", "--api-key-env", "A", "--api-key-file", "f"}, []string{"--api-key-env", "--api-key-file"}},
		{[]string{"probe", "--timeout-total", "3s", "--timeout-connect", "5s", "--timeout-idle", "4s"}, []string{"--timeout-connect: 5s is longer than --timeout-total 3s", "--timeout-idle: 4s is longer"}},
		{[]string{"probe", "--timeout-total", "0s"}, []string{"--timeout-total: must be above 0"}},
		{[]string{"probe", "--timeout-headers", "10s", "--timeout-first-content", "5s"}, []string{"--timeout-first-content", "shorter than --timeout-headers"}},
		{[]string{"probe", "--timeout-idle", "-1s"}, []string{"--timeout-idle", "negative"}},
		{[]string{"probe", "--header", "Authorization: Bearer sk-SECRET-1"}, []string{"--header Authorization: looks secret", "--header-env"}},
		{[]string{"probe", "--header", "X-A: 1", "--header", "X-A: 2"}, []string{"--header X-A", "twice"}},
		{[]string{"probe", "--header-env", "X-Token"}, []string{"--header-env", "'Name=VAR'"}},
		{[]string{"probe", "--header-env", "X-Token=not a name"}, []string{"--header-env X-Token", "name of an environment variable"}},
		{[]string{"probe", "--header", "X-Token: a", "--header-env", "X-Token=VAR"}, []string{"--header-env X-Token", "also set literally"}},
		{[]string{"probe", "--retries", "10"}, []string{"--retries", "0..9"}},
		{[]string{"probe", "--seed", "9223372036854775808"}, []string{"--seed", "at most"}},
		{[]string{"probe", "--max-event-bytes", "2097152", "--max-buffered-bytes", "1048576"}, []string{"--max-event-bytes", "--max-buffered-bytes"}},
		{[]string{"probe", "--max-lag-p99", "0s"}, []string{"--max-lag-p99", "above 0"}},
		{[]string{"probe", "--burstiness", "0"}, []string{"--burstiness"}},
		{[]string{"probe", "--ttft-boundary", "reasoning"}, []string{"--ttft-boundary", "reasoning"}},
		{[]string{"ladder", "--steps", "1,200"}, []string{"--steps", "200 req/s is above the hard maximum 100"}},
		{[]string{"ladder", "--max-rate", "20000"}, []string{"--max-rate", "at most 10000"}},
		{[]string{"ladder", "--step-duration", "500ms"}, []string{"--step-duration", "at least 1s"}},
		{[]string{"ladder", "--knee-factor", "1"}, []string{"--knee-factor", "above 1"}},
		{[]string{"ladder", "--on-invalid", "ignore"}, []string{"--on-invalid", "ignore"}},
		{[]string{"ladder", "--steps", "3,2"}, []string{"--steps: step rates must increase (2 after 3)"}},
		{[]string{"ladder", "--steps", "1,x"}, []string{"--steps"}},
		{[]string{"ladder", "--arrival", "foo"}, []string{"--arrival"}},
		{[]string{"ladder", "--stop-at", "peak"}, []string{"--stop-at", "peak"}},
		{[]string{"sim", "--deploy-version", "a b"}, []string{"deploy-version"}},
		{[]string{"sim", "--error-fraction", "2"}, []string{"error_fraction"}},
		{[]string{"sim", "--reject-status", "500"}, []string{"--reject-status", "500"}},
		{[]string{"sim", "--ttft", "soon"}, []string{"--ttft"}},
		{[]string{"sim", "--api-key-env", "UNSET_VAR"}, []string{"--api-key-env", "UNSET_VAR"}},
		{[]string{"sim", "--slots", "8", "--admission", "4"}, []string{"admission"}},
		{[]string{"validate"}, []string{"--config.file", "required"}},
		{[]string{"validate", "--config", "a.yaml", "--config.file", "b.yaml"}, []string{"--config", "--config.file", "twice"}},
		{[]string{"run", "--config", "a.yaml", "--config.file", "b.yaml"}, []string{"--config", "--config.file", "twice"}},
		{[]string{"run", "--listen", ":1", "--web.listen-address", ":2"}, []string{"--listen", "--web.listen-address", "twice"}},
		{[]string{"run", "--log-level", "warn", "--log.level", "info"}, []string{"--log-level", "--log.level"}},
		{[]string{"run", "--web.listen-address"}, []string{"--web.listen-address", "argument"}},
		{[]string{"run", "--log.format", "xml"}, []string{"flag --log.format", "log.format", "logfmt", "xml"}},
		{[]string{"run", "--log-format", "xml"}, []string{"flag --log-format", "log.format", "xml"}},
		{[]string{"run", "--log.level", "loud"}, []string{"flag --log.level", "loud"}},
		{[]string{"run", "--web.listen-address", "nohost"}, []string{"flag --web.listen-address", "admin.listen"}},
		{[]string{"run", "--web.enable-lifecycle=maybe"}, []string{"--web.enable-lifecycle", "maybe"}},
		{[]string{"--version", "extra"}, []string{"extra"}},
		{[]string{"run", "--no-such-flag"}, []string{"--no-such-flag"}},
		{[]string{"version", "extra"}, []string{"extra"}},
		{[]string{"frobnicate"}, []string{"unknown command", "frobnicate"}},
		{nil, []string{"usage"}},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			t.Parallel()
			// A bad flag is refused before anything runs: a short deadline
			// catches a command that started probing instead.
			ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
			defer cancel()
			r := invoke(ctx, tc.args...)
			if r.code != 2 {
				t.Errorf("exit code %d, want 2\nstderr: %s", r.code, r.stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(r.stderr, w) {
					t.Errorf("stderr does not name %q:\n%s", w, r.stderr)
				}
			}
			if r.stdout != "" {
				t.Errorf("stdout not empty on a usage error: %q", r.stdout)
			}
		})
	}
}

// TestURLNeverEchoedWithSecrets (issue 8, defect 10): a --url that does not
// parse is named in the error without its userinfo or secret query values.
func TestURLNeverEchoedWithSecrets(t *testing.T) {
	t.Parallel()
	for _, u := range []string{"http://user:PW0rd@[::1/v1", "http://[::1/v1?token=PW0rd", "ftp://user:PW0rd@host/v1"} {
		r := invoke(t.Context(), "probe", "--url", u)
		if r.code != 2 || !strings.Contains(r.stderr, "--url") {
			t.Errorf("--url %s: exit %d, stderr %q", u, r.code, r.stderr)
		}
		if strings.Contains(r.stderr, "PW0rd") {
			t.Errorf("--url %s: the password is echoed: %s", u, r.stderr)
		}
	}
}

// TestHeaderNeverEchoed: a --header without its ':' (a typo in
// "Authorization: Bearer …") is refused without echoing it.
func TestHeaderNeverEchoed(t *testing.T) {
	t.Parallel()
	r := invoke(t.Context(), "probe", "--header", "Authorization Bearer sk-SECRET-0123456789")
	if r.code != 2 || !strings.Contains(r.stderr, "--header") || !strings.Contains(r.stderr, "Name: value") {
		t.Errorf("exit %d, stderr %q: want a usage error naming --header", r.code, r.stderr)
	}
	if strings.Contains(r.stderr, "sk-SECRET") {
		t.Errorf("the header's value is echoed: %s", r.stderr)
	}
}

// TestHelpAndVersion: help exits 0 with the usage on stdout (nothing on
// stderr); probe's lists its flags. Version: version_test.go.
func TestHelpAndVersion(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"help"}, {"--help"}, {"-h"}, {"probe", "--help"}, {"ladder", "-h"}, {"run", "--help"}, {"help", "run"}} {
		r := invoke(t.Context(), args...)
		if r.code != 0 {
			t.Errorf("%v: exit %d, want 0", args, r.code)
		}
		if !strings.HasPrefix(r.stdout, "usage: llmprobe") || r.stderr != "" {
			t.Errorf("%v: want the usage on stdout and nothing on stderr:\nstdout %q\nstderr %q", args, r.stdout, r.stderr)
		}
	}
	r := invoke(t.Context(), "probe", "--help")
	for _, flag := range []string{"--url", "--model", "--api-key-env", "--rate", "--duration", "--arrival", "--burstiness",
		"--max-in-flight", "--drain", "--max-tokens", "--closed-loop-users", "--think-time", "--ledger", "--json", "--seed",
		"--slo-ttft", "--slo-tpot", "--slo-e2e"} {
		if !regexp.MustCompile(`(?m)^\s+(-\w, )?` + flag + `[ \[]`).MatchString(r.stdout) {
			t.Errorf("probe --help does not list %s", flag)
		}
	}
}

// TestValidate: every shipped example config validates; a bad one fails
// naming the file and each bad key; a missing file fails naming the file.
func TestValidate(t *testing.T) {
	t.Parallel()
	examples, err := filepath.Glob(filepath.Join("..", "..", "config", "*.yaml"))
	if err != nil || len(examples) == 0 {
		t.Fatalf("no example configs found (%v)", err)
	}
	for _, f := range examples {
		r := invoke(t.Context(), "validate", "--config", f)
		if r.code != 0 || !strings.Contains(r.stdout, "valid") {
			t.Errorf("validate %s: exit %d\nstdout: %s\nstderr: %s", f, r.code, r.stdout, r.stderr)
		}
	}

	dir := t.TempDir()
	good, err := os.ReadFile(filepath.Join("..", "..", "config", "simulator.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	// A web config whose certificate does not exist: only the admin server
	// would find it at start-up, validate must find it first.
	webConfig := filepath.Join(dir, "web.yml")
	if err := os.WriteFile(webConfig, []byte("tls_server_config:\n  cert_file: "+filepath.Join(dir, "no-such-cert.pem")+"\n  key_file: "+filepath.Join(dir, "no-such-key.pem")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, body string
		want       []string
	}{
		{"unknown-key.yaml", strings.Replace(string(good), "admin:\n", "admin:\n  colour: blue\n", 1),
			[]string{"admin.colour", "unknown"}},
		{"bad-duration.yaml", strings.Replace(string(good), "connect: 2s", "connect: 2 fortnights", 1),
			[]string{"targets[0].timeouts.connect", "2 fortnights"}},
		{"two-errors.yaml", strings.Replace(strings.Replace(string(good), "admin:\n", "admin:\n  colour: blue\n", 1), "total: 60s", "total: soon", 1),
			[]string{"admin.colour", "targets[0].timeouts.total"}},
		{"not-yaml.yaml", "targets: [\n", []string{"not-yaml.yaml"}},
		{"bad-web-config.yaml", strings.Replace(string(good), "admin:\n", "admin:\n  web_config_file: "+webConfig+"\n", 1),
			[]string{"admin.web_config_file", "no-such-cert.pem"}},
	}
	for _, tc := range tests {
		path := filepath.Join(dir, tc.name)
		if err := os.WriteFile(path, []byte(tc.body), 0o644); err != nil {
			t.Fatal(err)
		}
		r := invoke(t.Context(), "validate", "--config", path)
		if r.code == 0 {
			t.Errorf("%s: exit 0, want failure", tc.name)
		}
		for _, w := range append(tc.want, tc.name) {
			if !strings.Contains(r.stderr, w) {
				t.Errorf("%s: stderr does not name %q:\n%s", tc.name, w, r.stderr)
			}
		}
	}

	missing := filepath.Join(dir, "missing.yaml")
	r := invoke(t.Context(), "validate", "--config", missing)
	if r.code == 0 || !strings.Contains(r.stderr, "missing.yaml") {
		t.Errorf("missing file: exit %d, stderr %q: want failure naming the file", r.code, r.stderr)
	}
}
