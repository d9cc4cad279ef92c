package main

import (
	"context"
	"strings"
	"testing"
	"time"
)

// oneShotLimits are the configuration's rules a one-shot command's flags
// can reach, one row each: the key the daemon's validation checks, the
// flags that break it, what the refusal must say (the flag, and for a
// limits.* key the key itself), what it must not echo (a secret), and the
// commands that have the flag. Each is checked by config.Validate with
// wiring.Checks, as the daemon's file is: none is re-implemented in cmd.
var oneShotLimits = []struct {
	key   string
	args  []string
	want  []string
	never string   // never echoed (a secret)
	cmds  []string // nil: probe and ladder
}{
	{key: "limits.max_rate", args: []string{"--rate", "20000"}, cmds: []string{"probe"},
		want: []string{"--rate: 20000 req/s is above the hard maximum 100 req/s", "--max-rate (limits.max_rate)", "raised up to 10000"}},
	{key: "limits.max_rate", args: []string{"--steps", "1,20000"}, cmds: []string{"ladder"},
		want: []string{"--steps: 20000 req/s is above the hard maximum 100 req/s", "--max-rate (limits.max_rate)"}},
	{key: "limits.max_rate (ceiling)", args: []string{"--max-rate", "20000"}, want: []string{"--max-rate (limits.max_rate): want above 0 and at most 10000"}},
	{key: "limits.max_buffered_bytes", args: []string{"--max-buffered-bytes", "1000"}, want: []string{"--max-buffered-bytes (limits.max_buffered_bytes): want 1048576"}},
	{key: "max_event_bytes (within limits.max_buffered_bytes)", args: []string{"--max-event-bytes", "2097152", "--max-buffered-bytes", "1048576"},
		want: []string{"--max-event-bytes", "--max-buffered-bytes (limits.max_buffered_bytes) of at least"}},
	{key: "max_event_bytes", args: []string{"--max-event-bytes", "-1"}, want: []string{"--max-event-bytes: want 0"}},
	{key: "max_in_flight", args: []string{"--max-in-flight", "100001"}, want: []string{"--max-in-flight: want 0 (no cap) or 1..100000"}},
	{key: "timeouts.total", args: []string{"--timeout-total", "0s"}, want: []string{"--timeout-total: must be above 0"}},
	{key: "timeouts.headers (within total)", args: []string{"--timeout-total", "2s", "--timeout-headers", "3s"}, want: []string{"--timeout-headers: 3s is longer than --timeout-total 2s"}},
	{key: "timeouts.first_content (after headers)", args: []string{"--timeout-headers", "3s", "--timeout-first-content", "2s"},
		want: []string{"--timeout-first-content: 2s is shorter than --timeout-headers 3s"}},
	{key: "idle_conn_timeout", args: []string{"--idle-conn-timeout", "50ms"}, want: []string{"--idle-conn-timeout: want 100ms..1h"}},
	{key: "url (no credentials)", args: []string{"--url", "http://u:pw-s3cret@127.0.0.1:1/v1"}, want: []string{"--url: credentials in the URL are not accepted"}, never: "s3cret"},
	{key: "url (no secret parameter)", args: []string{"--url", "http://127.0.0.1:1/v1?api_key=s3cret"}, want: []string{"--url: query parameter \"api_key\" looks secret"}, never: "s3cret"},
	{key: "headers (no secret)", args: []string{"--header", "Authorization: Bearer s3cret"}, want: []string{"--header Authorization: looks secret"}, never: "s3cret"},
	{key: "header_env", args: []string{"--header-env", "X-Team=not a variable"}, want: []string{"--header-env X-Team: want the name of an environment variable"}},
	{key: "api_key_env", args: []string{"--api-key-env", "sk live"}, want: []string{"--api-key-env: want the name of an environment variable"}},
	{key: "api_key_env or api_key_file", args: []string{"--api-key-env", "KEY", "--api-key-file", "/k"}, want: []string{"--api-key-env: set --api-key-env or --api-key-file, not both"}},
	{key: "tls (cert with key)", args: []string{"--tls-cert-file", "/c.pem"}, want: []string{"--tls-cert-file with --tls-key-file: cert_file and key_file go together"}},
	{key: "model", args: []string{"--model", ""}, want: []string{"--model: required"}},
	{key: "api", args: []string{"--api", "nope"}, want: []string{"--api: want one of anthropic-messages"}},
	{key: "ttft_boundary", args: []string{"--ttft-boundary", "nope"}, want: []string{`"--ttft-boundary" flag: want content or any_token`}},
	{key: "server_metrics.url", args: []string{"--server-metrics", "ftp://h/metrics"}, want: []string{"--server-metrics: want an absolute http(s) URL"}},
	{key: "server_metrics.metrics", args: []string{"--server-metrics", "http://127.0.0.1:1/metrics", "--server-metric", "bad name"}, want: []string{"--server-metric", "is not a Prometheus metric name"}},
	{key: "classes[].output", args: []string{"--max-tokens", "0"}, want: []string{"--max-tokens: fixed length 0 must be ≥ 1"}},
	{key: "classes[].input", args: []string{"--prompt-tokens", "-1"}, want: []string{"--prompt-tokens: fixed length -1 must be ≥ 1"}},
	{key: "ladder.max_lag_p99", args: []string{"--max-lag-p99", "2m"}, want: []string{"--max-lag-p99: want above 0 and at most 1m"}},
	{key: "ladder.rate_tolerance", args: []string{"--rate-tolerance", "2"}, want: []string{"--rate-tolerance: want above 0 and at most 1"}},
	{key: "ladder.good_fraction_target", args: []string{"--good-fraction", "1.5"}, want: []string{"--good-fraction: want above 0 and at most 1"}},
	{key: "burstiness", args: []string{"--burstiness", "-1"}, want: []string{"--burstiness: want above 0"}},
	{key: "arrival", args: []string{"--arrival", "nope"}, want: []string{`"--arrival" flag: want poisson, constant or gamma`}},
	{key: "retries.max_attempts", args: []string{"--retries", "10"}, want: []string{"--retries", "0..9"}, cmds: []string{"probe"}},
	{key: "retries.jitter", args: []string{"--backoff-jitter", "2"}, want: []string{"--backoff-jitter: want 0..1"}, cmds: []string{"probe"}},
	{key: "retries.max_backoff", args: []string{"--backoff", "2s", "--max-backoff", "1s"}, want: []string{"--max-backoff: must be at least"}, cmds: []string{"probe"}},
	{key: "cancellation.fraction", args: []string{"--cancel-fraction", "2"}, want: []string{"--cancel-fraction: want 0..1"}, cmds: []string{"probe"}},
	{key: "classes[].session.turns", args: []string{"--session-turns", "40"}, want: []string{"--session-turns: want 2..32"}, cmds: []string{"probe"}},
	{key: "classes[].prefix.tokens", args: []string{"--prefix-tokens", "-1"}, want: []string{"--prefix-tokens: prefix_tokens -1 must be in 8..1000000"}, cmds: []string{"probe"}},
	{key: "baseline.rate", args: []string{"--rate", "0"}, want: []string{"--rate: must be above 0 req/s"}, cmds: []string{"probe"}},
	{key: "ladder.steps (increasing)", args: []string{"--steps", "2,1"}, want: []string{"--steps: step rates must increase (1 after 2)"}, cmds: []string{"ladder"}},
	{key: "ladder.steps (above 0)", args: []string{"--steps", "0,1"}, want: []string{"--steps: must be above 0 req/s"}, cmds: []string{"ladder"}},
	{key: "ladder.step_duration", args: []string{"--step-duration", "500ms"}, want: []string{"--step-duration: want at least 1s"}, cmds: []string{"ladder"}},
	{key: "ladder.knee_factor", args: []string{"--knee-factor", "1"}, want: []string{"--knee-factor: want above 1"}, cmds: []string{"ladder"}},
	{key: "ladder.abort.error_fraction", args: []string{"--abort-error-fraction", "2"}, want: []string{"--abort-error-fraction: want 0..1"}, cmds: []string{"ladder"}},
	{key: "ladder.abort.ttft_gate_multiple", args: []string{"--abort-ttft-gate-multiple", "0.5"}, want: []string{"--abort-ttft-gate-multiple: want 0 (off) or at least 1"}, cmds: []string{"ladder"}},
	{key: "ladder.stop_at", args: []string{"--stop-at", "nope"}, want: []string{`"--stop-at" flag: want knee, capacity or top`}, cmds: []string{"ladder"}},
}

// TestOneShotLimitsEachCommand runs every row of oneShotLimits through
// each command that has its flags: refused with exit 2 before anything is
// sent, naming the flag (and a limits.* key), never echoing a secret.
func TestOneShotLimitsEachCommand(t *testing.T) {
	t.Parallel()
	for _, tc := range oneShotLimits {
		cmds := tc.cmds
		if cmds == nil {
			cmds = []string{"probe", "ladder"}
		}
		for _, cmd := range cmds {
			args := append([]string{cmd}, tc.args...)
			t.Run(tc.key+" "+strings.Join(args, " "), func(t *testing.T) {
				t.Parallel()
				ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second) // a command that started probing is caught
				defer cancel()
				r := invoke(ctx, args...)
				if r.code != exitUsage {
					t.Fatalf("exit %d, want %d (refused before anything is sent)\nstderr: %s", r.code, exitUsage, r.stderr)
				}
				for _, w := range tc.want {
					if !strings.Contains(r.stderr, w) {
						t.Errorf("stderr does not say %q:\n%s", w, r.stderr)
					}
				}
				if tc.never != "" && strings.Contains(r.stderr+r.stdout, tc.never) {
					t.Errorf("the secret %q is echoed:\n%s", tc.never, r.stderr)
				}
			})
		}
	}
}
