package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/llmprobe/llmprobe/internal/config"
	"github.com/llmprobe/llmprobe/internal/stats"
)

// TestProbeFlagsDescribeATarget: each of probe's target flags sets its
// configuration key, and the rest of the target is the one-shot profile
// (config.OneShot).
func TestProbeFlagsDescribeATarget(t *testing.T) {
	var p probeFlags
	fs := pflag.NewFlagSet("probe", pflag.ContinueOnError)
	p.register(fs)
	args := []string{"--url", "http://127.0.0.1:9/v1", "--model", "m2", "--api", "openai-completions", "--api-key-env", "K_VAR",
		"--header", "X-A: 1", "--header-env", "X-B=B_VAR", "--tls-ca-file", "ca.pem", "--tls-insecure-skip-verify", "--http1",
		"--max-event-bytes", "2048", "--max-buffered-bytes", "2097152", "--timeout-connect", "1s", "--timeout-headers", "2s",
		"--timeout-first-content", "3s", "--timeout-idle", "4s", "--timeout-total", "5s", "--usage-deltas", "--ttft-boundary", "any_token",
		"--arrival", "gamma", "--burstiness", "0.5", "--max-in-flight", "7", "--max-tokens", "9", "--prompt-tokens", "11", "--seed", "42",
		"--slo-ttft", "1s", "--slo-tpot", "20ms", "--slo-e2e", "3s", "--good-fraction", "0.8", "--max-lag-p99", "5ms", "--rate-tolerance", "0.2",
		"--cancel-fraction", "0.1", "--cancel-after", "50ms", "--retries", "2", "--backoff", "200ms", "--max-backoff", "1s", "--backoff-jitter", "0.25"}
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	if err := p.validate(); err != nil {
		t.Fatal(err)
	}
	d := func(s string) config.Duration {
		v, err := time.ParseDuration(s)
		if err != nil {
			t.Fatal(err)
		}
		return config.Duration(v)
	}
	want := config.OneShot()
	want.URL, want.Model, want.API, want.APIKeyEnv = "http://127.0.0.1:9/v1", "m2", "openai-completions", "K_VAR"
	want.Headers, want.HeaderEnv = map[string]string{"X-A": "1"}, map[string]string{"X-B": "B_VAR"}
	want.TLS.CAFile, want.TLS.InsecureSkipVerify, want.HTTP1, want.MaxEventBytes = "ca.pem", true, true, 2048
	want.Timeouts = config.Timeouts{Connect: d("1s"), Headers: d("2s"), FirstContent: d("3s"), Idle: d("4s"), Total: d("5s")}
	want.UsageDeltas, want.TTFTBoundary = true, "any_token"
	want.Baseline.Arrival, want.Baseline.Burstiness, want.MaxInFlight = "gamma", 0.5, 7
	want.Baseline.Rate = 5 // --rate's default: the open loop's rate is baseline.rate
	want.Classes[0].Output.Value, want.Classes[0].Input.Value = 9, 11
	want.Baseline.Seed, want.Ladder.Seed = 42, 42
	want.Classes[0].Gates = stats.Gates{TTFT: time.Second, TPOT: 20 * time.Millisecond, E2E: 3 * time.Second}
	want.Ladder.GoodFractionTarget, want.Ladder.MaxLagP99, want.Ladder.RateTolerance = 0.8, d("5ms"), 0.2
	want.Cancellation.Fraction, want.Cancellation.Delay = 0.1, d("50ms")
	want.Retries = config.Retries{MaxAttempts: 3, Backoff: d("200ms"), MaxBackoff: d("1s"), Jitter: 0.25}
	got := *p.target.target()
	if !reflect.DeepEqual(got, want) {
		g, _ := json.Marshal(got)
		w, _ := json.Marshal(want)
		t.Errorf("target\n%s\nwant\n%s", g, w)
	}
	if p.target.cfg.Limits.MaxBufferedBytes != 2097152 {
		t.Errorf("limits.max_buffered_bytes %d", p.target.cfg.Limits.MaxBufferedBytes)
	}

	// No flag: the one-shot profile, on the built-in simulator.
	var q probeFlags
	fs = pflag.NewFlagSet("probe", pflag.ContinueOnError)
	q.register(fs)
	if err := q.validate(); err != nil {
		t.Fatal(err)
	}
	want = config.OneShot()
	want.URL, want.Baseline.Rate = placeholderURL, 5
	// Without --seed, probe draws the seed of each run (new prompts for
	// the server's prompt cache).
	if got := q.target.target().Baseline.Seed; !q.target.seedDrawn || got < 1 || q.target.target().Ladder.Seed != got {
		t.Errorf("no --seed: seed %d (drawn %v), want one drawn above 0", got, q.target.seedDrawn)
	}
	want.Baseline.Seed, want.Ladder.Seed = q.target.target().Baseline.Seed, q.target.target().Baseline.Seed
	if got := *q.target.target(); !reflect.DeepEqual(got, want) {
		t.Errorf("defaults: %+v\nwant %+v", got, want)
	}
}

// TestHeaderEnv: --header-env sends a header whose value is read from the
// environment, the way header_env does; the value reaches no output.
func TestHeaderEnv(t *testing.T) {
	const secret = "hdr-env-secret-5f6e7d"
	t.Setenv("LLMPROBE_TEST_HEADER_ENV", secret)
	s := newSim(t, fastSim())
	var mu sync.Mutex
	saw := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		if r.Header.Get("X-Api-Token") == secret {
			saw++
		}
		mu.Unlock()
		s.Handler().ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	path := tempPath(t, "ledger.jsonl")
	r := completes(t, "probe", "--url", srv.URL+"/v1", "--rate", "10", "--duration", "1s", "--max-tokens", "8",
		"--header-env", "X-Api-Token=LLMPROBE_TEST_HEADER_ENV", "--json", "--ledger", path)
	mu.Lock()
	defer mu.Unlock()
	if p := decodeProbe(t, r); saw == 0 || saw < p.Planned {
		t.Errorf("the header reached %d of %d requests", saw, p.Planned)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for what, s := range map[string]string{"stdout": r.stdout, "stderr": r.stderr, "ledger": string(b)} {
		if strings.Contains(s, secret) {
			t.Errorf("%s holds the header's value", what)
		}
	}
}

// TestTimeoutTotalAlone: --timeout-total shorter than the other timeouts'
// defaults is accepted, those it leaves unset fitting under it; a phase
// flag longer than the total is still refused.
func TestTimeoutTotalAlone(t *testing.T) {
	var p probeFlags
	fs := pflag.NewFlagSet("probe", pflag.ContinueOnError)
	p.register(fs)
	if err := fs.Parse([]string{"--timeout-total", "10s"}); err != nil {
		t.Fatal(err)
	}
	if err := p.validate(); err != nil {
		t.Fatalf("--timeout-total 10s alone: %v", err)
	}
	to := p.target.target().Timeouts
	for _, d := range []config.Duration{to.Connect, to.Headers, to.FirstContent, to.Idle} {
		if d > to.Total || d <= 0 {
			t.Errorf("timeouts %+v: a phase is not within (0, total]", to)
		}
	}
	var q probeFlags
	fs = pflag.NewFlagSet("probe", pflag.ContinueOnError)
	q.register(fs)
	if err := fs.Parse([]string{"--timeout-total", "10s", "--timeout-idle", "20s"}); err != nil {
		t.Fatal(err)
	}
	if err := q.validate(); err == nil || !strings.Contains(err.Error(), "--timeout-idle") {
		t.Errorf("--timeout-idle 20s over --timeout-total 10s: want refused naming the flag, got %v", err)
	}
}
