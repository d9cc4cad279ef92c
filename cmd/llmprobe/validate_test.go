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
