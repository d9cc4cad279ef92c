package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/llmprobe/llmprobe/internal/dashgen"
)

// TestRunWritesTheConfiguredFiles: -config writes every generated file of
// that configuration (here the documented example), and no -config the
// shipped defaults; a bad configuration writes nothing.
func TestRunWritesTheConfiguredFiles(t *testing.T) {
	example := filepath.Join("..", "..", "..", "..", "alerts", "mixin", "example.yaml")
	tests := []struct {
		name, config string
		want, never  string // in the rule file
	}{
		{"example", example, "team: inference-sre", "github.com/llmprobe/llmprobe/blob/main/alerts/README.md"},
		{"defaults", "", "github.com/llmprobe/llmprobe/blob/main/alerts/README.md#llmprobeabsent", "team:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := run(tt.config, dir); err != nil {
				t.Fatal(err)
			}
			files, err := dashgen.Files()
			if err != nil {
				t.Fatal(err)
			}
			for name := range files {
				if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(name))); err != nil {
					t.Errorf("%s not written: %v", name, err)
				}
			}
			rules, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(dashgen.RulesFile)))
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(rules), tt.want) || strings.Contains(string(rules), tt.never) {
				t.Errorf("rules: want %q and never %q", tt.want, tt.never)
			}
		})
	}
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(bad, []byte("runbook_base: x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	if err := run(bad, out); err == nil || !strings.Contains(err.Error(), "runbook_base") {
		t.Errorf("bad configuration: error %v, want one naming runbook_base", err)
	}
	if entries, _ := os.ReadDir(out); len(entries) != 0 {
		t.Errorf("bad configuration wrote %d entries", len(entries))
	}
}
