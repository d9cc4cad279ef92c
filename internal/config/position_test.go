package config

import (
	"errors"
	"regexp"
	"strings"
	"testing"
)

// TestEveryErrorWithPosition: one pass reports every problem, each with
// file:line:column from the YAML, even when one of them (a malformed
// duration) breaks decoding and even for the checks run after it.
func TestEveryErrorWithPosition(t *testing.T) {
	body := `targets:
  - name: t1
    url: http://127.0.0.1:8000/v1
    model: m
    api: grpc
    timeouts:
      total: 10q
    bogus: 1
log:
  level: loud
`
	check := func(c *Config, add func(key, format string, args ...any)) {
		if c.Targets[0].API == "grpc" {
			add("targets[0].api", "unknown api %q", c.Targets[0].API)
		}
	}
	p := write(t, body)
	_, err := LoadWith(Options{Path: p, Environ: noEnv, Checks: []Check{check}})
	var es Errors
	if !errors.As(err, &es) {
		t.Fatalf("want Errors, got %T %v", err, err)
	}
	want := []string{
		p + `:5:5: targets[0].api: unknown api "grpc"`,
		p + ":7:7: targets[0].timeouts.total: invalid duration",
		p + ":8:5: targets[0].bogus: unknown key",
		p + ":10:3: log.level: want one of",
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("want %q in\n%v", w, err)
		}
	}
	if len(es) != len(want) {
		t.Errorf("want %d errors, got %d:\n%v", len(want), len(es), err)
	}
}

// TestPositionOfMissingKey: a required key that is absent is placed at its
// nearest present ancestor; keys from other layers get no position.
func TestPositionOfMissingKey(t *testing.T) {
	p := write(t, "log:\n  level: info\ntargets:\n  - name: t1\n    url: http://127.0.0.1:8000/v1\n")
	_, err := LoadWith(Options{Path: p, Environ: func() []string { return []string{"LLMPROBE_LOG__FORMAT=xml"} }})
	if err == nil {
		t.Fatal("want an error")
	}
	for _, w := range []string{p + ":4:5: targets[0].model: required", "env LLMPROBE_LOG__FORMAT: log.format: want one of"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("want %q in\n%v", w, err)
		}
	}
}

var position = regexp.MustCompile(`:\d+:\d+: `)

// unplaced is an error's text without its line:column positions, for tests
// that assert "file: key: message".
func unplaced(err error) string { return position.ReplaceAllString(err.Error(), ": ") }
