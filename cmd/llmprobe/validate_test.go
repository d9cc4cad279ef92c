package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// planted is a configuration with four errors of four kinds: an unknown key,
// a malformed duration (which stops decoding), a value a rule refuses and
// one only a domain check knows (the API). All four are reported, each with
// its line and column.
const planted = `admin:
  listen: "127.0.0.1:9464"
targets:
  - name: sim
    url: http://127.0.0.1:8000/v1
    api: grpc
    model: m
    timeouts:
      total: 10q
    colour: blue
log:
  level: loud
`

// TestValidateFiles: files given as arguments (as promtool check config) and
// with --config.file are each reported; every error of a file comes in one
// pass with file:line:column; the exit code is 1 when any file is invalid.
func TestValidateFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte(planted), 0o600); err != nil {
		t.Fatal(err)
	}
	good := filepath.Join("..", "..", "config", "simulator.yaml")

	r := invoke(t.Context(), "validate", good, bad)
	if r.code != exitError {
		t.Errorf("exit %d, want %d", r.code, exitError)
	}
	if !strings.Contains(r.stdout, good+": valid") {
		t.Errorf("stdout does not report the good file valid:\n%s", r.stdout)
	}
	want := []string{
		bad + `:6:5: targets[0].api: want one of`,
		bad + ":9:7: targets[0].timeouts.total: invalid duration",
		bad + ":10:5: targets[0].colour: unknown key",
		bad + `:12:3: log.level: want one of debug, info, warn, error; got "loud"`,
		"1 of 2 files not valid",
	}
	for _, w := range want {
		if !strings.Contains(r.stderr, w) {
			t.Errorf("stderr lacks %q:\n%s", w, r.stderr)
		}
	}

	for _, args := range [][]string{{"validate", good}, {"validate", "--config.file", good}, {"validate", "--config.file", good, good}} {
		if r := invoke(t.Context(), args...); r.code != 0 || strings.Count(r.stdout, ": valid") != len(args)-1-btoi(args[1] == "--config.file") {
			t.Errorf("%v: exit %d\nstdout: %s\nstderr: %s", args, r.code, r.stdout, r.stderr)
		}
	}
	if r := invoke(t.Context(), "validate"); r.code != exitUsage {
		t.Errorf("validate with no file: exit %d, want %d", r.code, exitUsage)
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestValidateFleetShards (issue 25): a fleet's file names its peers but
// not its size; validated alone its steps are above one prober's limit,
// and the error says how to give the size. --fleet.shards N checks it as
// each of N shards reads it, the limits per shard.
func TestValidateFleetShards(t *testing.T) {
	t.Parallel()
	fleet := filepath.Join("..", "..", "deploy", "kubernetes", "fleet", "config.yaml")
	r := invoke(t.Context(), "validate", fleet)
	if r.code != exitError {
		t.Errorf("alone: exit %d, want %d", r.code, exitError)
	}
	for _, w := range []string{"ladder.steps[7]: 600 req/s is above the hard maximum 300 req/s (limits.max_rate", "validate it with --fleet.shards N (here N ≥ 2)", "LLMPROBE_FLEET__SHARDS"} {
		if !strings.Contains(r.stderr, w) {
			t.Errorf("alone: stderr lacks %q:\n%s", w, r.stderr)
		}
	}
	for _, n := range []string{"2", "3"} {
		if r := invoke(t.Context(), "validate", "--fleet.shards", n, fleet); r.code != exitOK || !strings.Contains(r.stdout, "valid (1 targets, each of "+n+" shards)") {
			t.Errorf("--fleet.shards %s: exit %d\nstdout: %s\nstderr: %s", n, r.code, r.stdout, r.stderr)
		}
	}
	if r := invoke(t.Context(), "validate", "--fleet.shards", "1", fleet); r.code != exitError || !strings.Contains(r.stderr, "600 req/s is above the hard maximum 300") {
		t.Errorf("--fleet.shards 1: exit %d\nstderr: %s", r.code, r.stderr)
	}
	for _, n := range []string{"-1", "257"} {
		if r := invoke(t.Context(), "validate", "--fleet.shards", n, fleet); r.code != exitUsage || !strings.Contains(r.stderr, "--fleet.shards "+n) {
			t.Errorf("--fleet.shards %s: exit %d, want %d\nstderr: %s", n, r.code, exitUsage, r.stderr)
		}
	}
}

// TestValidateCannotWork (issue 25): validate refuses what would start but
// cannot work through a day (a budget spent before the day ends, naming
// the hour; a target that sends nothing), and warns of a class without a
// latency gate without refusing the file.
func TestValidateCannotWork(t *testing.T) {
	t.Parallel()
	hosted, err := os.ReadFile(filepath.Join("..", "..", "config", "openai-hosted.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	const target = "targets:\n  - name: t\n    url: http://127.0.0.1:8000/v1\n    model: m\n"
	for _, tc := range []struct {
		name, body string
		code       int
		stderr     []string
	}{
		{"budget.yaml", strings.Replace(string(hosted), "tokens_per_day: 300000", "tokens_per_day: 200000", 1), exitError,
			[]string{"targets[0].budget.tokens_per_day: 200000 tokens run out at about hour 20.", "America/New_York) every day", "1,728 requests"}},
		{"silent.yaml", target + "    baseline: {enabled: false}\n    classes: [{name: c, gates: {ttft: 1s}}]\n", exitError,
			[]string{"targets[0]: sends nothing: baseline.enabled and ladder.enabled are both false"}},
		{"nogate.yaml", target + "    classes: [{name: c}]\n", exitOK,
			[]string{"warning: ", "targets[0].classes[0].gates: no latency gate", "class c has no latency SLI"}},
	} {
		r := invoke(t.Context(), "validate", write(tc.name, tc.body))
		if r.code != tc.code {
			t.Errorf("%s: exit %d, want %d\nstderr: %s", tc.name, r.code, tc.code, r.stderr)
		}
		for _, w := range tc.stderr {
			if !strings.Contains(r.stderr, w) {
				t.Errorf("%s: stderr lacks %q:\n%s", tc.name, w, r.stderr)
			}
		}
	}
}
