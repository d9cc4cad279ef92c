package main

import (
	"bytes"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/config"
	"github.com/llmprobe/llmprobe/internal/ladder"
	"github.com/llmprobe/llmprobe/internal/wiring"
)

// TestAPIKeyFlagHint (issue 25): --api-key is refused with the way to give
// a key, and never echoes the value given with it.
func TestAPIKeyFlagHint(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"probe", "--api-key=sk-SECRET-42"}, {"ladder", "--api-key", "sk-SECRET-42"}, {"sim", "--api-key", "sk-SECRET-42"}} {
		r := invoke(t.Context(), args...)
		if r.code != exitUsage || !strings.Contains(r.stderr, "unknown flag: --api-key") || !strings.Contains(r.stderr, "--api-key-env VAR") {
			t.Errorf("%v: exit %d\nstderr: %s", args, r.code, r.stderr)
		}
		if strings.Contains(r.stderr, "SECRET") {
			t.Errorf("%v: the value is echoed: %s", args, r.stderr)
		}
		if hasFile := strings.Contains(r.stderr, "--api-key-file"); hasFile != (args[0] != "sim") {
			t.Errorf("%v: names --api-key-file %v, want it only where the flag exists: %s", args, hasFile, r.stderr)
		}
	}
}

// TestOTLPHost: the start-up log names the OTLP endpoint by its host only.
func TestOTLPHost(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		metrics, all, want string
	}{
		{"", "http://collector.monitoring:4318", "collector.monitoring:4318"},
		{"https://user:pw@otlp.example.com/v1/metrics?token=x", "http://other:4318", "otlp.example.com"},
		{"", "collector:4317", "collector:4317"},
		{"", "http://coll\x1b[31mector:4318", "(unreadable endpoint)"},
	} {
		env := map[string]string{"OTEL_EXPORTER_OTLP_METRICS_ENDPOINT": tc.metrics, "OTEL_EXPORTER_OTLP_ENDPOINT": tc.all}
		if got := otlpHost(func(k string) string { return env[k] }); got != tc.want {
			t.Errorf("%q / %q: %q, want %q", tc.metrics, tc.all, got, tc.want)
		}
	}
}

// TestLadderProgressNotATerminal: on a stderr that is not a terminal the
// ladder writes no carriage-return progress, one plain line a step.
func TestLadderProgressNotATerminal(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	progress := ladderProgress(env{stdout: io.Discard, stderr: &buf})
	for _, ph := range []string{"running", "settling", "done"} {
		progress(ladder.Progress{Step: 1, Steps: 2, Rate: 4, Phase: ph, Elapsed: time.Second, Planned: 8, Finished: 8})
	}
	if got := buf.String(); strings.Contains(got, "\r") || got != "step 1/2     4.00 req/s  done  planned 8  finished 8\n" {
		t.Errorf("progress on a non-terminal: %q", got)
	}
}

// TestProbeSeedPerRun (issue 25): without --seed each probe run draws its
// own seed (new prompts, not answered from a server's prompt cache);
// --seed repeats a run's.
func TestProbeSeedPerRun(t *testing.T) {
	t.Parallel()
	seed := func(args ...string) (uint64, bool) {
		var p probeFlags
		fs := newFlagSet("probe", env{stdout: io.Discard, stderr: io.Discard})
		p.register(fs)
		if err := parseFlags(fs, args); err != nil {
			t.Fatal(err)
		}
		if err := p.validate(); err != nil {
			t.Fatal(err)
		}
		if tg := p.target.target(); uint64(tg.Baseline.Seed) != p.target.seed || tg.Ladder.Seed != tg.Baseline.Seed {
			t.Errorf("seed %d not the target's (%d, %d)", p.target.seed, tg.Baseline.Seed, tg.Ladder.Seed)
		}
		return p.target.seed, p.target.seedDrawn
	}
	a, drawnA := seed()
	b, drawnB := seed()
	if !drawnA || !drawnB || a == b || a == 0 || b == 0 {
		t.Errorf("two runs without --seed: seeds %d (drawn %v), %d (drawn %v); want two drawn, different", a, drawnA, b, drawnB)
	}
	for _, s := range []string{"1", "7"} {
		if got, drawn := seed("--seed", s); drawn || got != map[string]uint64{"1": 1, "7": 7}[s] {
			t.Errorf("--seed %s: %d (drawn %v)", s, got, drawn)
		}
	}
}

// TestRunLogsWarnings: run starts a configuration validate refuses as
// unable to work through a day, and logs why, with the other warnings.
func TestRunLogsWarnings(t *testing.T) {
	t.Parallel()
	cfg, err := wiring.Load(config.Options{Environ: func() []string { return nil }, BuiltIn: []byte(`
targets:
  - name: t
    url: http://127.0.0.1:8000/v1
    model: m
    budget: {requests_per_day: 100}
    baseline: {rate: 1}
    classes: [{name: c}]
`)})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	logWarnings(slog.New(slog.NewTextHandler(&buf, nil)), cfg)
	for _, w := range []string{"key=targets[0].classes[0].gates", "no latency gate", "key=targets[0].budget.requests_per_day", "100 requests run out at about hour 0.0"} {
		if !strings.Contains(buf.String(), w) {
			t.Errorf("log lacks %q:\n%s", w, buf.String())
		}
	}
}
